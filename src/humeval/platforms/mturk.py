"""The batch file route (MTurk history, and spreadsheets handed out): one writer, one reader.

A batch is a CSV with one row per task: ``key`` (opaque, see :mod:`humeval.platforms.keys`),
``list_id``, ``item_id``, ``criteria``, ``input`` and the texts in display order
(``output_1``, ``output_2``, ...). It never carries a system name or a task id (task ids
name the systems). The first batch (``humeval export --format mturk-batch``) and every
re-run batch (``humeval collate``) are written by :func:`write_batch`, and the answers to
either come back through :func:`read_results`:

* an MTurk batch results CSV: ``WorkerId``, ``HITId``, ``WorkTimeInSeconds``,
  ``SubmitTime``, ``Input.key``, ``Answer.<criterion>``;
* a filled-in spreadsheet: ``participant_id``, ``key``, ``<criterion>``.

Answers: ``A``/``B``/``tie``/``both-good``/``both-bad`` for ``2afc``; a number for a
rating of one output (``Answer.<criterion>``) or of output *p* of several
(``Answer.<criterion>_<p>``, 1-based display position).
"""

from __future__ import annotations

import csv
import math
import random
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from humeval.data.outputs import OutputText
from humeval.design.tasks import Task
from humeval.errors import PlatformError
from humeval.files import csv_text, write_text
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.platforms.keys import RowKey, append_keys, new_key
from humeval.tasks import TASK_TYPES

__all__ = ["CHOICES", "read_results", "write_batch"]

CHOICES = ("A", "B", "tie", "both-good", "both-bad")


def write_batch(path: Path, entries: list[tuple[str, Task]], texts: Mapping[tuple[str, str], OutputText],
                key_path: Path, batch: str, seed: int | random.Random) -> Path:
    """Write ``entries`` (list id, task) as a batch CSV; record each row's key in ``key_path``."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    width = max((len(t.systems) for _, t in entries), default=1)
    lines = [["key", "list_id", "item_id", "criteria", "input", *[f"output_{i + 1}" for i in range(width)]]]
    keys: list[RowKey] = []
    for list_id, task in entries:
        order = list(task.systems)
        rng.shuffle(order)
        key = RowKey(new_key(), task.task_id, tuple(order), batch)
        keys.append(key)
        if task.kind == "attention" and task.text:
            outs = [task.text] * len(order)
        else:
            outs = [texts.get((task.item_id, s), ("", ""))[0] for s in order]
        source = next((texts[(task.item_id, s)][1] for s in order if (task.item_id, s) in texts), "")
        lines.append([key.key, list_id, task.item_id, "+".join(task.criteria), source, *outs, *[""] * (width - len(outs))])
    append_keys(key_path, keys)
    return write_text(path, csv_text(lines))


def read_results(path: Path, keys: dict[str, RowKey], tasks: dict[str, Task], criteria_types: Mapping[str, str],
                 ) -> tuple[pd.DataFrame, Counter[str], list[str]]:
    """Canonical judgements from a batch's answers; the skipped answers counted by reason, with examples.

    A row whose key is unknown, whose task is not in the design, or whose answer is
    malformed is skipped and counted (never silently dropped).
    """
    rows: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    examples: list[str] = []

    def skip(reason: str, where: str) -> None:
        skipped[reason] += 1
        if len(examples) < 20:
            examples.append(f"{where}: {reason}")

    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        cols = set(reader.fieldnames or [])
        mturk = "Input.key" in cols
        key_col, pid_col = ("Input.key", "WorkerId") if mturk else ("key", "participant_id")
        answer = "Answer." if mturk else ""
        if not {key_col, pid_col} <= cols:
            found = ", ".join(sorted(cols)[:12]) or "none"
            raise PlatformError(
                f"{path}: not the answers to a humeval batch: needs columns WorkerId and Input.key (MTurk batch results) "
                f"or participant_id and key (a filled-in batch); found {found}. Task ids are no longer accepted: batches "
                "carry opaque keys"
            )
        for lineno, rec in enumerate(reader, start=2):
            where = f"{path}:{lineno}"
            row_key = keys.get(rec.get(key_col) or "")
            if row_key is None:
                skip(f"unknown key (not written by this study's batches): {str(rec.get(key_col))[:20]!r}", where)
                continue
            task = tasks.get(row_key.task_id)
            if task is None:
                skip(f"task not in the design: {row_key.task_id!r}", where)
                continue
            pid = (rec.get(pid_col) or "").strip()
            if not pid:
                skip(f"{pid_col}: empty", where)
                continue
            base = {"participant_id": pid, "list_id": rec.get("Input.list_id" if mturk else "list_id") or rec.get("HITId", ""),
                    "task_id": task.task_id, "kind": task.kind, "item_id": task.item_id,
                    "seconds": _float(rec.get("WorkTimeInSeconds", rec.get("seconds", ""))),
                    "submitted_at": rec.get("SubmitTime", rec.get("submitted_at", "")) or ""}
            order = row_key.order
            for name in task.criteria:
                ctype = criteria_types.get(name, "")
                if ctype in TASK_TYPES and TASK_TYPES.get(ctype).pairwise:
                    value = (rec.get(f"{answer}{name}") or "").strip()
                    if value not in CHOICES or len(order) != 2:
                        skip(f"{answer}{name}: {value!r} is not a 2afc answer ({', '.join(CHOICES)})", where)
                        continue
                    rows.append(base | {"criterion": name, "system": order[0], "system_b": order[1], "position": 0,
                                        "value": math.nan, "choice": value})
                    continue
                for p, system in enumerate(order):
                    column = f"{answer}{name}" if len(order) == 1 else f"{answer}{name}_{p + 1}"
                    number = _float(rec.get(column, ""))
                    if math.isnan(number):
                        skip(f"{column}: {str(rec.get(column, ''))[:20]!r} is not a number", where)
                        continue
                    rows.append(base | {"criterion": name, "system": system, "system_b": "", "position": p,
                                        "value": number, "choice": ""})
    return pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS), skipped, examples


def _float(text: Any) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan
