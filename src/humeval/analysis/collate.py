"""Collation: does every task have the valid judgements the design requires? If not, what to re-run.

A task (see :mod:`humeval.design.tasks`) needs ``design.judgements_per_item`` valid
judgements, each from a different participant. A participant's judgement of a task
counts when it is complete (every criterion, and every system shown for ratings), every
row is well formed (:mod:`humeval.analysis.validity`) and neither the participant nor the
rows are excluded by a preregistered rule (:mod:`humeval.analysis.exclude`). Attention
checks and repeated tasks never count.

For the tasks still short, :func:`rerun_lists` deals the missing judgements into new
participant lists (no task twice in one list) and :func:`write_rerun` writes them in the
format of the platform that collects them. Collect them, append the new judgements to
``results/judgements.jsonl``, and collate again until complete (Thomson & Belz, 3.4).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from humeval.analysis.exclude import exclusions
from humeval.analysis.validity import invalid_reasons
from humeval.design.tasks import ParticipantList, Task
from humeval.errors import DataError
from humeval.files import write_jsonl
from humeval.judgements import excluded_mask
from humeval.protocol.models import Protocol

__all__ = ["Collation", "collate", "rerun_lists", "write_rerun"]


@dataclass(frozen=True)
class Collation:
    """Completeness of the collected judgements.

    ``tasks`` has one row per task: ``task_id``, ``item_id``, ``required``, ``valid``
    (participants with a complete, valid, non-excluded judgement) and ``missing``.
    ``invalid`` counts malformed rows by reason; ``unknown_tasks`` counts rows whose task
    is not in the design.
    """

    tasks: pd.DataFrame
    required: int
    invalid: dict[str, int] = field(default_factory=dict)
    unknown_tasks: int = 0
    judgements: int = 0
    participants: int = 0

    @property
    def complete(self) -> bool:
        return bool((self.tasks["missing"] == 0).all())

    @property
    def missing(self) -> int:
        return int(self.tasks["missing"].sum())

    def summary(self) -> dict[str, Any]:
        short = self.tasks[self.tasks["missing"] > 0]
        return {
            "complete": self.complete,
            "required_per_task": self.required,
            "tasks": len(self.tasks),
            "tasks_complete": int((self.tasks["missing"] == 0).sum()),
            "tasks_incomplete": len(short),
            "judgements_missing": self.missing,
            "judgements": self.judgements,
            "participants": self.participants,
            "invalid_rows": int(sum(self.invalid.values())),
            "invalid_reasons": self.invalid,
            "unknown_task_rows": self.unknown_tasks,
            "incomplete": short[["task_id", "item_id", "valid", "missing"]].to_dict(orient="records"),
        }


def _expected_rows(task: Task) -> int:
    per_criterion = 1 if task.family == "pair" else len(task.systems)
    return per_criterion * len(task.criteria)


def collate(
    judgements: pd.DataFrame,
    tasks: list[Task],
    protocol: Protocol,
    lists: list[ParticipantList] | None = None,
    excluded: pd.DataFrame | None = None,
) -> Collation:
    """Count the valid judgements of every task in ``tasks`` (the design's ``lists/tasks.jsonl``)."""
    if not tasks:
        raise DataError("collate: the design holds no tasks (lists/tasks.jsonl is empty); run `humeval design` first")
    required = protocol.design.judgements_per_item
    if excluded is None:
        excluded = exclusions(judgements, protocol, lists)
    reasons = invalid_reasons(judgements, protocol)
    rows = judgements.assign(invalid=reasons)
    real = rows[(rows["kind"] == "task") & ~excluded_mask(rows, excluded)]
    known = {t.task_id for t in tasks}
    unknown = int((~rows.loc[rows["kind"] == "task", "task_id"].isin(known)).sum())
    ok = real[(real["invalid"] == "") & real["task_id"].isin(known)]
    counts = ok.drop_duplicates(["participant_id", "task_id", "criterion", "system"]).groupby(
        ["task_id", "participant_id"]).size()
    expected = pd.Series({t.task_id: _expected_rows(t) for t in tasks})
    full = counts[counts.to_numpy() >= expected.reindex(counts.index.get_level_values(0)).to_numpy()]
    valid = full.groupby(level=0).size()
    table = pd.DataFrame({
        "task_id": [t.task_id for t in tasks],
        "item_id": [t.item_id for t in tasks],
        "required": required,
    })
    table["valid"] = table["task_id"].map(valid).fillna(0).astype(int)
    table["missing"] = (required - table["valid"]).clip(lower=0)
    invalid = rows.loc[rows["invalid"] != "", "invalid"].value_counts().to_dict()
    return Collation(table, required, {str(k): int(v) for k, v in invalid.items()}, unknown,
                     len(judgements), int(judgements["participant_id"].nunique()))


def rerun_lists(collation: Collation, tasks: list[Task], per_list: int, prefix: str = "R") -> list[ParticipantList]:
    """New participant lists holding each short task as often as it is short (never twice in one list)."""
    by_id = {t.task_id: t for t in tasks}
    short = collation.tasks[collation.tasks["missing"] > 0]
    lists: list[ParticipantList] = []
    for k in range(int(short["missing"].max()) if len(short) else 0):
        round_tasks = [by_id[t] for t in short.loc[short["missing"] > k, "task_id"]]
        for start in range(0, len(round_tasks), per_list):
            lists.append(ParticipantList(f"{prefix}{len(lists) + 1:04d}", k, round_tasks[start:start + per_list]))
    return lists


def _outputs_lookup(outputs: pd.DataFrame | None) -> dict[tuple[str, str], tuple[str, str]]:
    if outputs is None or outputs.empty:
        return {}
    inputs = outputs["input"] if "input" in outputs else pd.Series("", index=outputs.index)
    return {(str(i), str(s)): (str(o), str(x)) for i, s, o, x in
            zip(outputs["item_id"], outputs["system"], outputs["output"], inputs.fillna(""), strict=True)}


def _mturk_rows(lists: list[ParticipantList], outputs: pd.DataFrame | None) -> list[dict[str, str]]:
    """One row per list (one HIT); a block of columns per task (``t1_...``), as in the paper's 4.3."""
    texts = _outputs_lookup(outputs)
    rows = []
    for pl in lists:
        row = {"list_id": pl.list_id}
        for j, task in enumerate(pl.tasks, start=1):
            row |= {f"t{j}_task_id": task.task_id, f"t{j}_item_id": task.item_id,
                    f"t{j}_criteria": "+".join(task.criteria)}
            for p, system in enumerate(task.systems, start=1):
                output, source = texts.get((task.item_id, system), ("", ""))
                row |= {f"t{j}_system{p}": system, f"t{j}_output{p}": output}
                row.setdefault(f"t{j}_input", source)
        rows.append(row)
    return rows


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []
    for r in rows:
        columns += [c for c in r if c not in columns]
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_rerun(directory: Path, lists: list[ParticipantList], platform: str, outputs: pd.DataFrame | None = None) -> list[Path]:
    """Write the re-run lists in ``platform``'s format into ``directory``; returns the files written.

    ``local``: ``lists.jsonl`` (the participant-list format the server loads);
    ``mturk``: ``batch.csv`` (one HIT per list, a block of columns per task, with texts);
    ``prolific`` and ``files``: ``lists.csv`` (one row per list position).
    """
    if platform == "local":
        return [write_jsonl(directory / "lists.jsonl", lists)]
    if platform == "mturk":
        return [_write_csv(directory / "batch.csv", _mturk_rows(lists, outputs))]
    rows = [{"list_id": pl.list_id, "position": i, "task_id": t.task_id, "item_id": t.item_id,
             "systems": "+".join(t.systems), "criteria": "+".join(t.criteria), "task": json.dumps(t.to_json())}
            for pl in lists for i, t in enumerate(pl.tasks)]
    return [_write_csv(directory / "lists.csv", rows)]
