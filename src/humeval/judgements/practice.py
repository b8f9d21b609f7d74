"""Practice items (``design.practice``): the feedback after an answer, and how the practice went.

A practice item opens every participant list (:func:`humeval.design.lists.practice_tasks`). Its answer is stored
like any judgement, with the kind ``practice``; no analysis reads it and no exclusion rule judges it. Right or not
is decided as the ``attention`` rule decides a check (:func:`humeval.judgements.exclusion.fails_check` on the
answer's rows of the long table), against the answer the item names; an item that names none is judged neither way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from humeval.design.tasks import ParticipantList, Task, practice_index
from humeval.judgements.exclusion import fails_check
from humeval.protocol.models import Protocol

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["practice_counts", "practice_feedback"]


def practice_feedback(protocol: Protocol, task: Task, display: Sequence[str], values: Mapping[str, Any],
                      ) -> dict[str, Any]:
    """What a participant is told after answering the practice item ``task`` with ``values`` (``display``: its
    outputs as shown): ``correct`` (None when the item names no answer), ``expected`` (the answer it names, or
    None) and the item's ``explanation``."""
    item = protocol.design.practice[practice_index(task)]
    c = protocol.criterion(item.criterion)
    correct = None
    if task.expected is not None and c.name in values:
        base = {"participant_id": "", "list_id": "", "task_id": task.task_id, "kind": task.kind, "item_id": task.item_id,
                "seconds": None, "submitted_at": "", "stop_seq": None, "wave_seq": None, "revision": 0, "comment": ""}
        rows = c.task.long_rows(c, values[c.name], list(display), base, None)
        correct = not any(fails_check(r["value"], str(r["choice"]), task.expected) for r in rows)
    return {"correct": correct, "expected": task.expected, "explanation": item.explanation}


def practice_counts(frame: pd.DataFrame, lists: list[ParticipantList]) -> dict[str, Any]:
    """How the practice went, from the long judgements table: the participants who answered a practice item, and
    per item (in the protocol's order) the participants who ``answered`` it and, when it names an answer, those
    whose answer was ``right`` (None otherwise). ``lists``: the participant lists (the items' expected answers)."""
    tasks = {t.task_id: t for pl in lists for t in pl.tasks if t.kind == "practice"}
    rows = frame[frame["kind"] == "practice"]
    items = []
    for task_id, task in sorted(tasks.items(), key=lambda kv: practice_index(kv[1])):
        mine = rows[rows["task_id"] == task_id]
        failed = [fails_check(v, "" if ch != ch else str(ch), task.expected)  # a few rows per participant
                  for v, ch in zip(mine["value"], mine["choice"], strict=True)]
        per = mine.assign(failed=failed).groupby("participant_id")["failed"].any()
        items.append({"item": practice_index(task) + 1, "criterion": task.criteria[0],
                      "expected": task.expected, "answered": len(per),
                      "right": None if task.expected is None else int((~per).sum())})
    return {"participants": int(rows["participant_id"].nunique()), "items": items}
