"""Synthetic participants of a rehearsal: an HTTP client of the JSON API and their answers.

A synthetic participant only sees what the server sends (``GET /api/v1/next``): the item
id, the criteria and the output *texts* in display order, never system names. To answer
like a dummy participant of :mod:`humeval.rehearsal.dummy` (``static``/``normal`` need the
hidden score of each output) it is given an :class:`AnswerKey` built by the researcher
side from the study's own files: the data (``(item, text) -> system``) and the design
(``attention check text -> expected answer``). Values are drawn with the very functions
of :mod:`humeval.rehearsal.dummy`.
"""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from humeval.design.tasks import ParticipantList
from humeval.errors import HumevalError
from humeval.protocol.models import Criterion, Protocol
from humeval.rehearsal.dummy import Scale, _scores, _static_scores, scale_of

__all__ = ["AnswerKey", "Answerer", "ApiClient", "ApiRefused", "RehearsalError", "draw_seconds"]


class RehearsalError(HumevalError):
    """A rehearsal could not run, or the server answered something a participant cannot use."""


class ApiRefused(RehearsalError):
    """The server answered a request with an unexpected status."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        try:
            error = json.loads(body)["error"]
            detail = f"{error.get('code')}: {error.get('message')}"
        except (ValueError, KeyError, TypeError):
            detail = body[:200]
        super().__init__(f"rehearsal: {method} {path} answered {status} ({detail})")
        self.status = status


@dataclass(frozen=True)
class AnswerKey:
    """What the researcher knows and the browser never shows: which system wrote each text."""

    #: (item_id, output text) -> systems that wrote that text for the item (more than one when identical)
    systems: dict[tuple[str, str], tuple[str, ...]]
    #: (item_id, attention check text) -> the answer the check asks for
    attention: dict[tuple[str, str], Any]

    @classmethod
    def build(cls, outputs: list[tuple[str, str, str]], lists: list[ParticipantList]) -> AnswerKey:
        """From ``(item_id, system, output)`` rows of the data and the participant lists."""
        systems: dict[tuple[str, str], list[str]] = {}
        for item_id, system, text in outputs:
            holders = systems.setdefault((item_id, text), [])
            if system not in holders:
                holders.append(system)
        attention = {
            (t.item_id, t.text): t.expected
            for pl in lists for t in pl.tasks if t.kind == "attention"
        }
        return cls({k: tuple(sorted(v)) for k, v in systems.items()}, attention)

    @property
    def ambiguous(self) -> int:
        """Outputs whose text another system of the same item also wrote (indistinguishable when shown)."""
        return sum(len(v) for v in self.systems.values() if len(v) > 1)

    def writers(self, item_id: str, text: str) -> tuple[str, ...]:
        found = self.systems.get((item_id, text))
        if found is None:
            raise RehearsalError(
                f"rehearsal: the server showed an output of item '{item_id}' that the study's data does not hold "
                f"({text[:60]!r}); the store was seeded from other data. Use a fresh --db"
            )
        return found


class Answerer:
    """Dummy answers of one ``kind`` (random, static, normal) to assignments as the API serves them."""

    def __init__(self, protocol: Protocol, key: AnswerKey, kind: str, systems: list[str]) -> None:
        self.protocol, self.key, self.kind = protocol, key, kind
        self.criteria: dict[str, Criterion] = {c.name: c for c in protocol.criteria}
        self.scales: dict[str, Scale] = {c.name: scale_of(c) for c in protocol.criteria}
        #: each criterion's static score per system, as the dry run uses them
        self.static: dict[str, dict[str, float]] = {
            c.name: _static_scores(protocol, systems, c) for c in protocol.criteria
        }

    def _latent(self, criterion: str, item_id: str, texts: list[str], rng: np.random.Generator) -> np.ndarray:
        """One dummy score per shown text (log scale for magnitude/RankME)."""
        static = self.static[criterion]
        labels, centres = [], {}
        for text in texts:
            writers = self.key.writers(item_id, text)
            label = "+".join(writers)
            centres[label] = float(np.mean([static[w] for w in writers]))
            labels.append(label)
        return _scores(self.kind, np.array(labels), centres, self.scales[criterion], self.protocol.dry_run.sd, rng)

    def values(self, assignment: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        """``{criterion: value}`` for an assignment of ``GET /api/v1/next``."""
        task = assignment["task"]
        texts: list[str] = list(assignment["outputs"])
        names = [c["name"] for c in assignment["criteria"]]
        if task.get("kind") == "attention":
            return {name: self._attention(name, task["item_id"], texts) for name in names}
        return {name: self._value(name, task["item_id"], texts, rng) for name in names}

    def _attention(self, name: str, item_id: str, texts: list[str]) -> Any:
        expected = self.key.attention.get((item_id, texts[0] if texts else ""))
        if expected is None:
            raise RehearsalError(f"rehearsal: attention check '{item_id}' is not in lists/lists.jsonl; "
                                 "the store was seeded from other lists. Use a fresh --db")
        criterion = self.criteria[name]
        if criterion.type == "rankme":
            return [float(expected)] * len(texts)
        if criterion.type == "likert":
            return int(expected)
        if criterion.type in ("slider", "magnitude"):
            return float(expected)
        return expected

    def _value(self, name: str, item_id: str, texts: list[str], rng: np.random.Generator) -> Any:
        criterion = self.criteria[name]
        scale = self.scales[name]
        if criterion.type == "2afc":
            a, b = self._latent(name, item_id, texts[:2], rng)
            if a != b:
                return "A" if a > b else "B"
            return "tie" if criterion.tie else ("A" if rng.random() < 0.5 else "B")
        scores = self._latent(name, item_id, texts, rng)
        if scale.log:
            scores = np.exp(scores)
        if criterion.type == "rankme":
            return [float(x) for x in scores]
        if criterion.type == "likert":
            return round(float(scores[0]))
        return float(scores[0])


def draw_seconds(rng: np.random.Generator) -> float:
    """Time on a task as the dry run draws it (log-normal around 12 s); reported, not waited."""
    return round(float(rng.lognormal(np.log(12.0), 0.4)), 2)


class ApiClient:
    """One participant's keep-alive connection to the server's JSON API (stdlib only).

    A request that fails on a dropped connection is sent once more on a new one: every
    request a participant makes is safe to repeat (entering is an upsert, a submit
    carries its idempotency key).
    """

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: dict[str, Any] | None = None, *,
                token: str | None = None, expect: tuple[int, ...] = (200,)) -> tuple[int, Any]:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self._conn.request(method, path, body=data, headers=headers)
                response = self._conn.getresponse()
                raw = response.read()
                break
            except (ConnectionError, http.client.HTTPException) as exc:
                self.close()
                if attempt == 2:
                    raise RehearsalError(f"rehearsal: {method} {path}: the server closed the connection ({exc})") from None
            except TimeoutError:
                self.close()
                raise RehearsalError(f"rehearsal: {method} {path}: no answer within {self.timeout:g}s") from None
        text = raw.decode("utf-8", "replace")
        if response.status not in expect:
            raise ApiRefused(method, path, response.status, text)
        if not text or "json" not in (response.getheader("content-type") or ""):
            return response.status, text or None
        try:
            return response.status, json.loads(text)
        except ValueError:
            raise RehearsalError(f"rehearsal: {method} {path}: the server sent malformed JSON ({text[:80]!r})") from None
