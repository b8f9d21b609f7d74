"""The study's logbook: one JSON line per stage run, appended, never rewritten.

Each line is an :class:`Entry`: the fields every entry may have, typed, and a stage's own fields (a stopping
decision's ``comparison`` and ``n``, an unlock's ``reason`` ...) kept beside them as written. An entry names its
schema (``schema``, :data:`SCHEMA`); a line without one was written before the field existed (schema 1, the
same fields) and reads as it is.

Every entry goes through :func:`humeval.secrets.redact` when it is written and when it is read, so no
key reaches the file, and ``humeval log`` does not print one that an older version wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from humeval._version import __version__
from humeval.errors import DataError, HumevalError
from humeval.files import append_jsonl, read_jsonl
from humeval.secrets import redact
from humeval.study import StudyFolder

__all__ = ["SCHEMA", "Entry", "Run", "append", "entries", "now", "read", "record_run"]

#: the schema of the entries this version writes (1: entries without a ``schema`` field, the same fields)
SCHEMA = 2


def now() -> str:
    """The current UTC time as ISO 8601 (seconds resolution with microseconds)."""
    return datetime.now(UTC).isoformat()


class Entry(BaseModel):
    """One logbook line: a stage run (or a lock, an unlock, a live stopping decision) and how it ended."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    schema_version: int = Field(1, alias="schema", ge=1, le=SCHEMA, description="The entry's schema.")
    # (time and version: :func:`append` writes both; a line without them is still read)
    time: str | None = Field(None, description="When the entry was written (UTC, ISO 8601).")
    version: str | None = Field(None, description="The humeval version that wrote it.")
    stage: str = Field(description="What ran: a pipeline stage, serve, rehearse, lock, stopping, prolific-...")
    outcome: Literal["ok", "error"] | None = Field(None, description="How it ended (every stage run says).")
    start: str | None = Field(None, description="When the run started (a stage run).")
    end: str | None = Field(None, description="When the run ended (a stage run).")
    seed: int | None = Field(None, description="The seed the run used.")
    inputs: list[dict[str, Any]] | None = Field(None, description="The files read, with their hashes.")
    outputs: list[dict[str, Any]] | None = Field(None, description="The files written, with their hashes.")
    summary: dict[str, Any] | None = Field(None, description="What the run found (counts, decisions ...).")
    parameters: dict[str, Any] | None = Field(None, description="The run's parameters.")
    options: dict[str, Any] | None = Field(None, description="The options a stage was run with.")
    signature: str | None = Field(None, description="The results' signature (analyze).")
    error: str | None = Field(None, description="Why the run failed (outcome error).")

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def when(self) -> str | None:
        """When the run ended (its entry's time for an entry of no run)."""
        return self.end or self.time

    def field(self, name: str, default: Any = None) -> Any:
        """A stage's own field (``comparison``, ``reason`` ...), or ``default``."""
        return (self.model_extra or {}).get(name, default)

    def to_json(self) -> dict[str, Any]:
        """The fields the entry was given (no defaults added), typed fields first."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


def append(study: StudyFolder, entry: dict[str, Any]) -> dict[str, Any]:
    """Append ``entry`` (with ``schema``, ``time`` and ``version`` filled in, its secrets redacted) and fsync it;
    the line written.

    The entry is checked as an :class:`Entry` first: one without ``stage`` or with an unknown ``outcome`` is an
    error here, not a line later readers stumble on."""
    record = redact({"schema": SCHEMA, "time": now(), "version": __version__, **entry})
    try:
        Entry.model_validate(record)
    except ValidationError as exc:  # a bug in the stage that wrote it
        err = exc.errors()[0]
        raise HumevalError(f"logbook: the entry of stage {entry.get('stage')!r} is not a logbook entry: "
                           f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}") from exc
    append_jsonl(study.logbook_file, record)
    return record


def _checked(study: StudyFolder) -> list[tuple[dict[str, Any], Entry]]:
    """Each line as written and as an :class:`Entry`; a line that is no entry is an error naming it."""
    if not study.logbook_file.is_file():
        return []
    out = []
    for line, written in enumerate(read_jsonl(study.logbook_file), start=1):
        record = redact(written)
        try:
            out.append((record, Entry.model_validate(record)))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise DataError(f"{study.relative(study.logbook_file)}: line {line} is not a logbook entry (schema 1 "
                            f"to {SCHEMA}): {'.'.join(str(p) for p in err['loc'])}: {err['msg']}") from exc
    return out


def entries(study: StudyFolder) -> list[Entry]:
    """Every logbook entry as an :class:`Entry`, oldest first (empty list for a study never run)."""
    return [entry for _, entry in _checked(study)]


def read(study: StudyFolder) -> list[dict[str, Any]]:
    """Every logbook entry as the JSON object written (its keys in their order, its secrets redacted), oldest
    first; checked as :func:`entries` checks them."""
    return [record for record, _ in _checked(study)]


@dataclass
class Run:
    """What a stage run records; :func:`record_run` writes it when the run ends."""

    entry: dict[str, Any]

    def finish(self, study: StudyFolder, outputs: list[Path], *, summary: dict[str, Any] | None = None,
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
def record_run(study: StudyFolder, stage: str, *, inputs: list[dict[str, str]], seed: int | None = None,
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
