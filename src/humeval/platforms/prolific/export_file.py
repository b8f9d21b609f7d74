"""Prolific's submissions export (the CSV the app's "Download summary" gives, or
``POST /api/v1/studies/{id}/demographic-export/``), read back.

Its first columns are ``Submission id``, ``Participant id``, ``Status``, ``Custom study tncs accepted at``,
``Started at``, ``Completed at``, ``Reviewed at``, ``Archived at``, ``Time taken`` (seconds) and
``Completion code``, followed by the participants' demographics (prolific-oss/cli,
``cmd/study/demographic_export.go``, and exports of real studies). Headers are matched without regard to
case, and ``participant_id``-style names are accepted too. The demographics are not read.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from humeval.errors import PlatformError

__all__ = ["read_submissions"]

#: field -> the export's column names for it (lower case)
COLUMNS = {
    "submission_id": ("submission id", "submission_id"),
    "participant_id": ("participant id", "participant_id"),
    "status": ("status",),
    "completion_code": ("completion code", "completion_code"),
    "started_at": ("started at", "started_at"),
    "completed_at": ("completed at", "completed_at"),
    "reviewed_at": ("reviewed at", "reviewed_at"),
    "time_taken": ("time taken", "time_taken"),
}


def _seconds(value: str, path: Path, line: int) -> float | None:
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        raise PlatformError(f"{path}: line {line}: Time taken: seconds (a number), got {text[:40]!r}") from None
    if not seconds >= 0:  # also refuses nan
        raise PlatformError(f"{path}: line {line}: Time taken: seconds (0 or more), got {text[:40]!r}")
    return seconds


def read_submissions(path: Path) -> list[dict[str, Any]]:
    """Rows of a Prolific submissions export: ``submission_id``, ``participant_id``, ``status``,
    ``completion_code``, ``started_at``, ``completed_at``, ``reviewed_at`` (text as exported) and
    ``time_taken`` (seconds, None when the export leaves it empty)."""
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        cols = {c.strip().lower(): c for c in reader.fieldnames or []}
        found = {name: next((cols[c] for c in names if c in cols), None) for name, names in COLUMNS.items()}
        if found["participant_id"] is None or found["status"] is None:
            raise PlatformError(f"{path}: not a Prolific submissions export (needs 'Participant id' and 'Status' "
                                f"columns; found {', '.join(list(cols)[:8]) or 'no header'})")
        rows = []
        for line, r in enumerate(reader, start=2):
            row: dict[str, Any] = {name: (r.get(col) or "") if col else "" for name, col in found.items()}
            row["time_taken"] = _seconds(row["time_taken"], path, line) if found["time_taken"] else None
            rows.append(row)
        return rows
