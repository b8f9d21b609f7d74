"""The ``design`` stage: tasks and participant lists for the selected items."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from humeval.errors import ProtocolError, did_you_mean
from humeval.files import read_jsonl, write_jsonl
from humeval.stage import StageOutput
from humeval.study import StudyFolder

if TYPE_CHECKING:
    from humeval.design.tasks import Task

__all__ = ["design_stage", "item_strata", "read_items", "shown_texts"]


def read_items(study: StudyFolder) -> list[str]:
    """Selected item ids in selection order (from the ``sample`` stage)."""
    rows = read_jsonl(study.items_file, what="selected items yet", hint=f"run `humeval sample {study.root}` first")
    return [r["item_id"] for r in rows]


def item_strata(study: StudyFolder, columns: list[str]) -> dict[str, str]:
    """Item id -> its combination of the property ``columns`` (``"Airport|1"``), from the study's outputs."""
    frame = study.outputs().frame
    known = list(study.protocol.data.properties)
    for i, col in enumerate(columns):
        if col not in frame.columns:
            raise ProtocolError(f"design.balance[{i}]: no item property '{col}'. {did_you_mean(col, known)}")
    first = frame.drop_duplicates("item_id")
    labels = first[columns].astype(str).agg("|".join, axis=1)
    return dict(zip(first["item_id"].astype(str), labels, strict=True))


def shown_texts(study: StudyFolder, tasks: list[Task]) -> Iterator[dict[str, str]]:
    """One row per (item, system) the tasks show: its output, input, references and format (from the study's outputs)."""
    outputs = study.outputs()
    for item_id, system in dict.fromkeys((t.item_id, s) for t in tasks if t.kind == "task" for s in t.systems):
        text = outputs.text(item_id, system)
        yield {"item_id": item_id, "system": system, "output": text.output, "input": text.input,
               "references": text.references, "format": text.format}


def design_stage(study: StudyFolder) -> StageOutput:
    """Build every task of the selected items and deal them into participant lists.

    A study whose stopping rule watches a comparison gets its items in serving order
    (:func:`humeval.design.order.serving_order`; ``lists/tasks.jsonl`` holds that order) and its
    watched tasks in lists of their own (:func:`humeval.design.lists.build_lists`).
    """
    from humeval.design.lists import design_lists
    from humeval.design.order import ORDER_STREAM

    protocol = study.protocol
    systems = protocol.systems or study.outputs().systems
    balance = list(protocol.design.balance)
    strata = item_strata(study, balance) if balance else None
    comparisons, items, tasks, lists = design_lists(protocol, read_items(study), systems, strata)
    tasks_file = study.tasks_file
    lists_file = study.lists_file
    write_jsonl(tasks_file, (t.to_json() for t in tasks))
    write_jsonl(lists_file, (pl.to_json(compact=True) for pl in lists))  # tasks by id: they are in tasks_file
    write_jsonl(study.texts_file, shown_texts(study, tasks))
    n_judged = sum(len(pl.tasks) for pl in lists)
    summary = {"tasks": len(tasks), "lists": len(lists), "tasks_in_lists": n_judged,
               "assignments": sum(t.kind == "task" for pl in lists for t in pl.tasks), "systems": systems}
    if comparisons:
        summary["serving_order"] = {"items": len(items), "seed": protocol.study.seed, "stream": ORDER_STREAM}
        summary["watched_lists"] = sum(bool(pl.watched) for pl in lists)
    if strata is not None:
        summary["combinations"] = len({strata[i] for i in items})
    return StageOutput(
        outputs=[tasks_file, lists_file, study.texts_file],
        seed=protocol.study.seed,
        parameters=protocol.design.model_dump(),
        summary=summary,
    )
