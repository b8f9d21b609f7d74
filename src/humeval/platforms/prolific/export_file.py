"""Prolific's submissions export (a CSV downloaded from the app), read back."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from humeval.errors import PlatformError

__all__ = ["read_submissions"]


def read_submissions(path: Path) -> list[dict[str, Any]]:
    """Rows of a Prolific submissions export: participant_id, status, completion_code, started/completed."""
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        cols = {c.lower(): c for c in reader.fieldnames or []}
        pid = cols.get("participant id") or cols.get("participant_id")
        status = cols.get("status")
        if pid is None or status is None:
            raise PlatformError(f"{path}: not a Prolific submissions export (needs 'Participant id' and 'Status' columns)")
        code = cols.get("completion code")
        return [
            {"participant_id": r[pid], "status": r[status], "completion_code": r.get(code, "") if code else "",
             "started_at": r.get(cols.get("started at", ""), ""), "completed_at": r.get(cols.get("completed at", ""), "")}
            for r in reader
        ]
