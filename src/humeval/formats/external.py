"""Judgement files from other tools, by format name: one entry point for the Python API and ``humeval import``.

=============  ======================================================================  =============
format         file                                                                    criterion type
=============  ======================================================================  =============
``fastchat``   FastChat battle log: JSON array, JSON lines, or arena Parquet            ``2afc``
``mqm``        WMT MQM TSV with ``<v>`` span marks                                      ``esa``
``labelstudio`` Label Studio JSON export (ratings, choices, labelled spans)             any
``argilla``    Argilla ``records.to_json`` export                                       any
``summeval``   SummEval JSONL (expert annotations; ``annotators`` for the crowd's)      ratings
=============  ======================================================================  =============

:func:`read_judgement_file` returns the long judgements table of :mod:`humeval.judgements`
with ``task_id`` empty; :func:`match_tasks` gives each judgement the study's task that
shows its item, systems and criterion (``humeval import`` does both).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from humeval.errors import DataError, did_you_mean

__all__ = ["FORMAT_CRITERION_TYPE", "JUDGEMENT_FORMATS", "match_tasks", "read_judgement_file"]

JUDGEMENT_FORMATS = ("fastchat", "mqm", "labelstudio", "argilla", "summeval")
#: the criterion type a format's judgements answer (None: named in the file)
FORMAT_CRITERION_TYPE: dict[str, str | None] = {"fastchat": "2afc", "mqm": "esa", "labelstudio": None,
                                                 "argilla": None, "summeval": None}


def read_judgement_file(path: str | Path, fmt: str, *, criterion: str = "", **options: Any) -> pd.DataFrame:
    """Judgements (``task_id`` empty) from ``path`` in format ``fmt`` (see the module table).

    ``criterion``: the criterion name for formats whose file does not name one (``fastchat``,
    ``mqm``; defaults ``preference`` and ``mqm``). ``options`` go to the format's reader
    (e.g. ``item="doc+seg_id"`` for ``mqm``, ``annotators="both"`` for ``summeval``).
    """
    if fmt == "fastchat":
        from humeval.data.battles import battles_to_judgements, read_battle_table

        return battles_to_judgements(read_battle_table(path), criterion=criterion or "preference", **options)
    if fmt == "mqm":
        from humeval.formats.mqm import read_mqm

        return read_mqm(path, criterion=criterion or "mqm", **options)
    if fmt in ("labelstudio", "argilla"):
        from humeval.formats.annotation_exports import read_argilla, read_label_studio

        return (read_label_studio if fmt == "labelstudio" else read_argilla)(path, **options)
    if fmt == "summeval":
        from humeval.formats.summeval import read_summeval

        return read_summeval(path, **options)
    raise DataError(f"unknown judgement file format {fmt!r}. {did_you_mean(fmt, JUDGEMENT_FORMATS)}")


def match_tasks(frame: pd.DataFrame, tasks: Iterable[Any]) -> tuple[pd.DataFrame, Counter[str], list[str]]:
    """Each judgement with the task of the design that shows its item and systems and asks its criterion.

    Returns the matched judgements (``task_id`` and ``kind`` filled), the skipped ones counted
    by reason, and up to 20 examples. A judgement matches a task with the same item, the same
    set of systems (one system for a rating, the pair for ``2afc``) and the criterion among
    the task's criteria.
    """
    index: dict[tuple[str, frozenset[str], str], Any] = {}
    for task in tasks:
        if task.kind != "task":
            continue
        for name in task.criteria:
            index.setdefault((task.item_id, frozenset(task.systems), name), task)
            if len(task.systems) > 1:  # ratings of several outputs shown together: one judgement per system
                for system in task.systems:
                    index.setdefault((task.item_id, frozenset([system]), name), task)
    keep, ids, kinds = [], [], []
    skipped: Counter[str] = Counter()
    examples: list[str] = []
    for i, (item, first, second, criterion) in enumerate(zip(frame["item_id"], frame["system"], frame["system_b"],
                                                             frame["criterion"], strict=True)):
        systems = frozenset([first, second] if second else [first])
        task = index.get((item, systems, criterion))
        if task is None:
            reason = f"no task of the design shows item {item!r} with {' and '.join(sorted(systems))} for {criterion!r}"
            skipped["no matching task in the design"] += 1
            if len(examples) < 20:
                examples.append(f"judgement {i + 1}: {reason}")
            continue
        keep.append(i)
        ids.append(task.task_id)
        kinds.append(task.kind)
    matched = frame.iloc[keep].copy()
    matched["task_id"], matched["kind"] = ids, kinds
    return matched.reset_index(drop=True), skipped, examples
