"""MTurk's file route: a batch input CSV for a HIT layout, and its batch results CSV back.

``export_batch`` writes one row per task with the texts in display order (``output_1``,
``output_2``, ...) and no system names; the display order of each row is kept in a key
file next to it (``<name>.key.json``), which ``read_results`` needs to map the answers
(``Answer.<criterion>``: ``A``/``B``/... for 2afc, numbers otherwise) back to systems.
"""

from __future__ import annotations

import csv
import json
import math
import random
from pathlib import Path
from typing import Any

from humeval.design.tasks import Task
from humeval.errors import PlatformError
from humeval.judgements import JUDGEMENT_COLUMNS

__all__ = ["export_batch", "export_study_batch", "read_results"]


def export_study_batch(study: Any, path: Path | None = None) -> tuple[Path, int]:
    """The batch CSV of every task of ``study`` (default ``results/mturk_batch.csv``); (path, tasks)."""
    from humeval.data.outputs import load_outputs

    frame = load_outputs(study.protocol, study.root)
    texts = {(r.item_id, r.system): (r.output, r.input) for r in frame.itertuples(index=False)}
    tasks = study.read_tasks()
    target = path or study.results_dir / "mturk_batch.csv"
    return export_batch(study.root, tasks, texts, target, study.protocol.study.seed), len(tasks)


def export_batch(study_root: Path, tasks: list[Task], texts: dict[tuple[str, str], tuple[str, str]], path: Path, seed: int) -> Path:
    """Write the batch CSV (and its key file); ``tasks`` as in ``lists/tasks.jsonl``."""
    rng = random.Random(seed)
    width = max((len(t.systems) for t in tasks), default=1)
    key: dict[str, list[str]] = {}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["task_id", "item_id", "criteria", "input", *[f"output_{i + 1}" for i in range(width)]])
        for t in tasks:
            order = list(t.systems)
            rng.shuffle(order)
            key[t.task_id] = order
            outs = [texts.get((t.item_id, s), ("", ""))[0] for s in order]
            item_input = texts.get((t.item_id, order[0]), ("", ""))[1] if order else ""
            writer.writerow([t.task_id, t.item_id, "+".join(t.criteria), item_input, *outs, *[""] * (width - len(outs))])
    key_file = path.with_suffix(".key.json")
    key_file.write_text(json.dumps(key, indent=0), encoding="utf-8")
    return path


def read_results(path: Path, criteria_types: dict[str, str], key_file: Path | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Canonical judgement rows from an MTurk batch results CSV, and the problems skipped."""
    key_file = key_file or _default_key(path)
    if not key_file.is_file():
        raise PlatformError(f"{path}: the key file {key_file} (written by the export) is missing; it holds the display order")
    key = json.loads(key_file.read_text(encoding="utf-8"))
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        needed = {"WorkerId", "Input.task_id"}
        if reader.fieldnames is None or not needed <= set(reader.fieldnames):
            raise PlatformError(f"{path}: not an MTurk batch results file (needs columns {', '.join(sorted(needed))})")
        for lineno, rec in enumerate(reader, start=2):
            task_id = rec["Input.task_id"]
            if task_id not in key:
                problems.append(f"{path}:{lineno}: unknown task {task_id!r}")
                continue
            order = key[task_id]
            base = {"participant_id": rec["WorkerId"], "list_id": rec.get("HITId", ""), "task_id": task_id, "kind": "task",
                    "item_id": rec.get("Input.item_id", ""), "seconds": _float(rec.get("WorkTimeInSeconds", "")),
                    "submitted_at": rec.get("SubmitTime", "")}
            for name, ctype in criteria_types.items():
                answer = rec.get(f"Answer.{name}", "")
                if answer == "":
                    continue
                if ctype == "2afc":
                    if len(order) != 2 or answer not in ("A", "B", "tie", "both-good", "both-bad"):
                        problems.append(f"{path}:{lineno}: Answer.{name}: {answer!r} is not a 2afc answer")
                        continue
                    rows.append(base | {"criterion": name, "system": order[0], "system_b": order[1], "position": 0, "value": math.nan, "choice": answer})
                else:
                    value = _float(answer)
                    if math.isnan(value):
                        problems.append(f"{path}:{lineno}: Answer.{name}: {answer!r} is not a number")
                        continue
                    rows.append(base | {"criterion": name, "system": order[0], "system_b": "", "position": 0, "value": value, "choice": ""})
    return [{c: r.get(c, "") for c in JUDGEMENT_COLUMNS} for r in rows], problems


def _default_key(path: Path) -> Path:
    name = path.name.replace("results", "batch") if "results" in path.name else path.name
    return path.with_name(name).with_suffix(".key.json")


def _float(text: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan
