"""The study's logbook: one JSON line per stage run, appended, never rewritten."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

from humeval._version import __version__
from humeval.errors import ProtocolError
from humeval.study import Study

__all__ = ["append", "now", "read"]


def now() -> str:
    """The current UTC time as ISO 8601 (seconds resolution with microseconds)."""
    return datetime.now(UTC).isoformat()


def append(study: Study, entry: dict[str, Any]) -> dict[str, Any]:
    """Append ``entry`` (with ``time`` and ``version`` filled in) and fsync it."""
    record = {"time": now(), "version": __version__, **entry}
    study.state_dir.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    with study.logbook_file.open("a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    return record


def read(study: Study) -> list[dict[str, Any]]:
    """Every logbook entry, oldest first (empty list for a study never run)."""
    if not study.logbook_file.is_file():
        return []
    entries = []
    with study.logbook_file.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ProtocolError(f"{study.logbook_file}:{lineno}: corrupt logbook line ({exc.msg})") from None
    return entries
