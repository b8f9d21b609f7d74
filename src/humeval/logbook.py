"""The study's logbook: one JSON line per stage run, appended, never rewritten."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from humeval._version import __version__
from humeval.files import append_jsonl, read_jsonl
from humeval.study import Study

__all__ = ["append", "now", "read"]


def now() -> str:
    """The current UTC time as ISO 8601 (seconds resolution with microseconds)."""
    return datetime.now(UTC).isoformat()


def append(study: Study, entry: dict[str, Any]) -> dict[str, Any]:
    """Append ``entry`` (with ``time`` and ``version`` filled in) and fsync it."""
    record = {"time": now(), "version": __version__, **entry}
    append_jsonl(study.logbook_file, record)
    return record


def read(study: Study) -> list[dict[str, Any]]:
    """Every logbook entry, oldest first (empty list for a study never run)."""
    if not study.logbook_file.is_file():
        return []
    return read_jsonl(study.logbook_file)
