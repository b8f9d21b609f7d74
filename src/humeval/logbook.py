"""The study's logbook: one JSON line per stage run, appended, never rewritten.

Every entry goes through :func:`humeval.secrets.redact` when it is written and when it is read, so no
key reaches the file, and ``humeval log`` does not print one that an older version wrote."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from humeval._version import __version__
from humeval.errors import HumevalError
from humeval.files import append_jsonl, read_jsonl
from humeval.secrets import redact
from humeval.study import Study

__all__ = ["Run", "append", "now", "read", "record_run"]


def now() -> str:
    """The current UTC time as ISO 8601 (seconds resolution with microseconds)."""
    return datetime.now(UTC).isoformat()


def append(study: Study, entry: dict[str, Any]) -> dict[str, Any]:
    """Append ``entry`` (with ``time`` and ``version`` filled in, its secrets redacted) and fsync it."""
    record = redact({"time": now(), "version": __version__, **entry})
    append_jsonl(study.logbook_file, record)
    return record


def read(study: Study) -> list[dict[str, Any]]:
    """Every logbook entry, oldest first, its secrets redacted (empty list for a study never run)."""
    if not study.logbook_file.is_file():
        return []
    return [redact(entry) for entry in read_jsonl(study.logbook_file)]


@dataclass
class Run:
    """What a stage run records; :func:`record_run` writes it when the run ends."""

    entry: dict[str, Any]

    def finish(self, study: Study, outputs: list[Path], *, summary: dict[str, Any] | None = None,
               parameters: dict[str, Any] | None = None, seed: int | None = None, signature: str | None = None) -> None:
        self.entry["outputs"] = study.hashes(outputs)
        if summary is not None:
            self.entry["summary"] = summary
        if parameters is not None:
            self.entry["parameters"] = parameters
        if seed is not None:
            self.entry["seed"] = seed
        if signature is not None:
            self.entry["signature"] = signature


@contextmanager
def record_run(study: Study, stage: str, *, inputs: list[dict[str, str]], seed: int | None = None,
               **fields: Any) -> Iterator[Run]:
    """Write one logbook entry for a stage run: ``outcome: ok`` when the block ends, ``error`` (with the
    message) when it raises. ``fields`` (parameters, options, ...) are recorded as given.

    The one writer of a stage's entry (start, end, seed, input and output hashes, parameters, summary, outcome,
    signature): every pipeline stage, collection, rehearsals, post hoc analyses and Prolific actions."""
    run = Run({"stage": stage, "start": now(), "seed": seed, "inputs": inputs,
               **{k: v for k, v in fields.items() if v is not None}})
    try:
        yield run
    except BaseException as exc:
        message = str(exc) if isinstance(exc, HumevalError) else f"{type(exc).__name__}: {exc}"
        # what a run that failed part way did (a judge's requests and spend), when the error carries it
        done = getattr(exc, "summary", None) if isinstance(exc, HumevalError) else None
        append(study, run.entry | ({"summary": done} if isinstance(done, dict) else {})
               | {"end": now(), "outcome": "error", "error": message})
        raise
    append(study, run.entry | {"end": now(), "outcome": "ok"})
