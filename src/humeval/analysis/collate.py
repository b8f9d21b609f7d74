"""Collation: does every task have the valid judgements the design requires? If not, what to re-run.

A task (see :mod:`humeval.design.tasks`) needs ``design.judgements_per_item`` valid
judgements, each from a different participant. A participant's judgement of a task
counts when it is complete (every criterion, and every system shown for ratings), every
row is well formed (:mod:`humeval.analysis.validity`) and neither the participant nor the
rows are excluded by a preregistered rule (:mod:`humeval.judgements.exclusion`). Attention
checks and repeated tasks never count.

For the tasks still short, :func:`rerun_lists` deals the missing judgements into new
participant lists (no task twice in one list) and :func:`write_rerun` writes them in the
format of the platform that collects them (opaque keys, never system names). Collect them,
bring the new judgements in with ``humeval export`` or ``humeval import``, and collate again
until complete (Thomson & Belz, 3.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from humeval.analysis.decisions import DECIDED
from humeval.analysis.validity import invalid_reasons
from humeval.data.outputs import Outputs
from humeval.design.tasks import ParticipantList, Task
from humeval.errors import DataError
from humeval.files import csv_text, write_jsonl, write_text
from humeval.judgements import excluded_mask
from humeval.judgements.exclusion import exclusions
from humeval.protocol.models import Protocol

__all__ = ["Collation", "collate", "rerun_lists", "write_rerun"]


@dataclass(frozen=True)
class Collation:
    """Completeness of the collected judgements.

    ``tasks`` has one row per task: ``task_id``, ``item_id``, ``required``, ``valid``
    (participants with a complete, valid, non-excluded judgement), ``decided`` (how the
    stopping rule closed the task; empty when it did not) and ``missing``. ``invalid``
    counts malformed rows by reason; ``unknown_tasks`` counts rows whose task is not in
    the design; ``decisions`` are the stopping rule's replayed decisions.
    """

    tasks: pd.DataFrame
    required: int
    invalid: dict[str, int] = field(default_factory=dict)
    unknown_tasks: int = 0
    judgements: int = 0
    participants: int = 0
    decisions: list[dict[str, Any]] = field(default_factory=list)

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
            "tasks_decided": int((self.tasks["decided"] != "").sum()),
            "decisions": [{k: v for k, v in d.items() if k != "path"} for d in self.decisions],
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
    decisions: list[dict[str, Any]] | None = None,
) -> Collation:
    """Count the valid judgements of every task in ``tasks`` (the design's ``lists/tasks.jsonl``).

    ``decisions`` (:func:`humeval.analysis.decisions.replay_decisions`): the pair tasks of a
    comparison the stopping rule decided (or whose horizon was reached) are complete by
    design, whatever they hold; the table says so in ``decided``.
    """
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
    table["decided"] = [_decided_by(t, decisions or []) for t in tasks]
    table["missing"] = (required - table["valid"]).clip(lower=0).where(table["decided"] == "", 0)
    invalid = rows.loc[rows["invalid"] != "", "invalid"].value_counts().to_dict()
    return Collation(table, required, {str(k): int(v) for k, v in invalid.items()}, unknown,
                     len(judgements), int(judgements["participant_id"].nunique()), list(decisions or []))


def _decided_by(task: Task, decisions: list[dict[str, Any]]) -> str:
    """How the stopping rule closed ``task`` (empty when it did not)."""
    for d in decisions:
        pair = set(d["systems"]) if d.get("goal") not in (None, "pair") else {d["a"], d["b"]}
        if (d["outcome"] in DECIDED and d["criterion"] in task.criteria and len(task.systems) == 2
                and set(task.systems) <= pair):
            return f"{d['criterion']}: {d['decision']} at n = {d['n']} ({d['rule']}, delta {d['delta']:g})"
    return ""


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


def write_rerun(directory: Path, lists: list[ParticipantList], platform: str, outputs: Outputs | None = None,
                *, key_path: Path, seed: int = 0) -> list[Path]:
    """Write the re-run lists in ``platform``'s format into ``directory``; returns the files written.

    Nothing written into ``directory`` names a system: rows carry opaque keys whose
    tasks and display orders are kept in ``key_path`` (under the study's ``.humeval/``).

    ``files``: ``batch.csv``, the batch format of
    :func:`humeval.platforms.mturk.write_batch` (one row per task, with its list and
    texts), imported back with ``humeval import DIR files FILE``;
    ``local`` and the recruitment platforms: ``lists.csv`` (list, position, key, item, criteria) for the
    requester, and the lists ``humeval serve`` adds to the store next to the key file
    (``<key file>.rerun-lists.jsonl``, see :func:`humeval.store.seed.seed_rerun`).
    """
    from humeval.platforms.keys import RowKey, append_keys, new_key, rerun_lists_file
    from humeval.platforms.mturk import write_batch

    entries = [(pl.list_id, t) for pl in lists for t in pl.tasks]
    batch = f"rerun:{directory.name}"
    if platform == "files":
        return [write_batch(directory / "batch.csv", entries, outputs.texts if outputs is not None else {}, key_path,
                            batch, seed)]
    keys = [RowKey(new_key(), t.task_id, t.systems, batch) for _, t in entries]
    append_keys(key_path, keys)
    positions = [i for pl in lists for i in range(len(pl.tasks))]
    rows = [{"list_id": list_id, "position": i, "key": k.key, "item_id": t.item_id, "criteria": "+".join(t.criteria)}
            for (list_id, t), k, i in zip(entries, keys, positions, strict=True)]
    server = write_jsonl(rerun_lists_file(key_path), lists)
    return [_write_csv(directory / "lists.csv", rows), server]


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    columns = list(rows[0]) if rows else []
    return write_text(path, csv_text([columns, *([r[c] for c in columns] for r in rows)]))
