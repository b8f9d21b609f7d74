"""Judgements as one long table, shared by the store, platforms, dry runs and the analysis.

One row per participant, task, criterion and (for ratings) system:

=================  ==========================================================================
``participant_id``  who judged
``list_id``         the participant list the task came from (empty for dynamic assignment)
``task_id``         the task (see :mod:`humeval.design.tasks`)
``kind``            ``task``, ``attention`` or ``repeat``
``item_id``         the item
``criterion``       the criterion asked
``system``          rated system; for ``2afc`` the system shown first (A)
``system_b``        ``2afc`` only: the system shown second (B)
``position``        display position of ``system`` (0-based; randomised order is recorded)
``value``           numeric rating (NaN for ``2afc``)
``choice``          ``2afc`` answer: ``A``, ``B``, ``tie``, ``both-good``, ``both-bad`` (empty otherwise)
``seconds``         time spent on the task
``submitted_at``    ISO 8601 time the judgement was stored
``stop_seq``        ``2afc`` judgements the live stopping rule consumed: 1-based place in the
                    comparison's outcome sequence (NaN otherwise; see docs/stopping.md)
=================  ==========================================================================
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from humeval.data.readers import read_table, require_columns
from humeval.errors import DataError

__all__ = ["JUDGEMENT_COLUMNS", "read_judgements", "winners", "write_judgements"]

JUDGEMENT_COLUMNS = [
    "participant_id",
    "list_id",
    "task_id",
    "kind",
    "item_id",
    "criterion",
    "system",
    "system_b",
    "position",
    "value",
    "choice",
    "seconds",
    "submitted_at",
    "stop_seq",
]


def write_judgements(path: str | Path, frame: pd.DataFrame) -> Path:
    """Write judgements as JSONL (or CSV/Parquet by suffix), columns in canonical order."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = frame.reindex(columns=JUDGEMENT_COLUMNS)
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".csv":
        frame.to_csv(tmp, index=False)
    elif path.suffix == ".parquet":
        frame.to_parquet(tmp, index=False)
    else:
        frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
    tmp.replace(path)
    return path


def read_judgements(path: str | Path) -> pd.DataFrame:
    """Read a judgements file written by :func:`write_judgements` (or any file with its columns)."""
    frame = read_table(path)
    problems = require_columns(frame, ["participant_id", "task_id", "item_id", "criterion", "system"], source=str(path))
    if problems:
        raise DataError("\n".join(problems), problems)
    frame = frame.reindex(columns=JUDGEMENT_COLUMNS)
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce")
    frame["seconds"] = pd.to_numeric(frame["seconds"], errors="coerce")
    frame["stop_seq"] = pd.to_numeric(frame["stop_seq"], errors="coerce").astype("Int64")
    for col in ("participant_id", "list_id", "task_id", "kind", "item_id", "criterion", "system", "system_b", "choice"):
        frame[col] = frame[col].fillna("").astype(str)
    frame.loc[frame["kind"] == "", "kind"] = "task"
    return frame


def winners(frame: pd.DataFrame) -> pd.Series:
    """For ``2afc`` rows: the chosen system's name, or the choice itself (``tie``, ...) otherwise."""
    choice = frame["choice"]
    return choice.where(~choice.isin(["A", "B"]), frame["system"].where(choice == "A", frame["system_b"]))
