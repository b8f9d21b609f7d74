"""The judges' ledger (``.humeval/judge-ledger.jsonl``): every request recorded before it is sent, so every spend is known.

One JSON line per event, appended and fsynced (:func:`humeval.files.append_jsonl`) before the
client goes on: ``sent`` before an attempt leaves (with the most tokens it can bill: the prompt's
estimate and ``max_tokens``), then its outcome (``answered`` with the tokens billed, ``rate_limited``,
``server_error``, ``refused``, ``not_connected``, ``timeout``, ``connection_error``, ``malformed``,
``oversized``). A run killed with SIGKILL leaves ``sent`` lines without an outcome: the next run
counts them, so the logbook's spend (:func:`spend`) counts every request sent, answered or not. Lines carry the judge,
the run (an id per :func:`humeval.judging.run.ask_judge` call), the request's SHA-256 and the attempt;
never the key or the prompt, and every line goes through :func:`humeval.secrets.redact`.

What a request costs, by its outcome: ``answered``, the tokens the endpoint reported (or estimated,
:mod:`humeval.judging.client`); ``rate_limited``, ``server_error``, ``refused`` and ``not_connected``
(the connection was refused: nothing left), nothing (the endpoint did no work); every other outcome, and no outcome at all, is *unknown*: at most the prompt's
estimated tokens plus ``max_tokens`` (the endpoint may have generated and billed the answer).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from humeval.files import append_jsonl
from humeval.judging.client import Record
from humeval.secrets import redact

__all__ = ["NOT_BILLED", "Ledger", "Spend", "spend"]

#: outcomes the endpoint did no work for (``not_connected``: the request never left)
NOT_BILLED = frozenset({"rate_limited", "server_error", "refused", "not_connected"})


@dataclass(frozen=True)
class Ledger:
    """The ledger of one judge's run: :meth:`recorder` gives the ``record`` callback of one request."""

    path: Path
    judge: str
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    def recorder(self, request_sha256: str, tokens_in_max: int, tokens_out_max: int) -> Record:
        """The callback :meth:`~humeval.judging.client.ChatClient.complete` calls for each attempt of one request."""
        base = {"judge": self.judge, "run": self.run, "request_sha256": request_sha256}

        def record(event: dict[str, Any]) -> None:
            extra = {"tokens_in_max": tokens_in_max, "tokens_out_max": tokens_out_max} if event["event"] == "sent" else {}
            append_jsonl(self.path, redact({"time": datetime.now(UTC).isoformat(), **base, **event, **extra}))

        return record


@dataclass
class Spend:
    """Every request the ledger holds for one judge (all its runs), and what they cost or may have cost."""

    requests_sent: int = 0
    answered: int = 0
    not_billed: int = 0
    unknown: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_in_unknown_max: int = 0
    tokens_out_unknown_max: int = 0
    usage_estimated: int = 0
    runs: int = 0
    unreadable_lines: int = 0

    def to_json(self, price_input: float, price_output: float) -> dict[str, Any]:
        cost = self.tokens_in * price_input / 1e6 + self.tokens_out * price_output / 1e6
        unknown = self.tokens_in_unknown_max * price_input / 1e6 + self.tokens_out_unknown_max * price_output / 1e6
        return {"requests_sent": self.requests_sent, "answered": self.answered, "not_billed": self.not_billed,
                "unknown": self.unknown, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "tokens_in_unknown_max": self.tokens_in_unknown_max,
                "tokens_out_unknown_max": self.tokens_out_unknown_max, "usage_estimated": self.usage_estimated,
                "cost": round(cost, 6), "cost_unknown_max": round(unknown, 6), "cost_max": round(cost + unknown, 6),
                "runs": self.runs, "unreadable_lines": self.unreadable_lines}


def _lines(path: Path) -> Iterator[dict[str, Any] | None]:
    """The ledger's events; None for a line that is not one (the torn last line of a killed run)."""
    if not path.is_file():
        return
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                yield None
                continue
            yield event if isinstance(event, dict) else None


def spend(path: Path, judge: str) -> Spend:
    """What every request of ``judge`` in the ledger at ``path`` cost: answered requests their tokens, requests
    without a known outcome (killed, timed out, cut) at most their ``sent`` line's bounds."""
    out = Spend()
    sent: dict[tuple[str, str, int], dict[str, Any]] = {}
    runs = set()
    for event in _lines(path):
        if event is None:
            out.unreadable_lines += 1
            continue
        if event.get("judge") != judge:
            continue
        where = (str(event.get("run")), str(event.get("request_sha256")), int(event.get("attempt") or 0))
        kind = event.get("event")
        if kind == "sent":
            out.requests_sent += 1
            runs.add(where[0])
            sent[where] = event
            continue
        attempt = sent.pop(where, None)
        if kind == "answered":
            out.answered += 1
            out.tokens_in += int(event.get("tokens_in") or 0)
            out.tokens_out += int(event.get("tokens_out") or 0)
            out.usage_estimated += bool(event.get("usage_estimated"))
        elif kind in NOT_BILLED:
            out.not_billed += 1
        elif attempt is not None:
            sent[where] = attempt  # a timeout, a cut or unreadable answer: counted below with the unanswered
    for attempt in sent.values():
        out.unknown += 1
        out.tokens_in_unknown_max += int(attempt.get("tokens_in_max") or 0)
        out.tokens_out_unknown_max += int(attempt.get("tokens_out_max") or 0)
    out.runs = len(runs)
    return out
