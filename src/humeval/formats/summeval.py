"""SummEval-style JSONL (``model_annotations.aligned.jsonl``) read as ratings.

The layout: one JSON object per line with ``id`` (the document), ``model_id`` (the
system), ``decoded`` (the summary), ``references``, ``filepath``, and the lists
``expert_annotations`` and ``turker_annotations`` of ``{"coherence", "consistency",
"fluency", "relevance"}`` ratings (1-5). :func:`read_summeval` turns every rating into one
judgement: ``item_id`` = ``id``, ``system`` = ``model_id``, ``criterion`` = the rated
dimension, ``participant_id`` = ``expert-1``, ``expert-2``, ... by position in the list (the
file does not name annotators, so the k-th annotation of every summary is attributed to one
annotator ``k``, as analyses of SummEval do). The same file read as data (``data.files``
with ``item_id: id``, ``system: model_id``, ``output: decoded``) gives the outputs.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import pandas as pd

from humeval.data.cells import text_cell
from humeval.errors import DataError
from humeval.files import iter_jsonl
from humeval.judgements import JUDGEMENT_COLUMNS

__all__ = ["SUMMEVAL_LAYOUT", "read_summeval"]

SUMMEVAL_LAYOUT = ("SummEval JSONL: one object per line with id, model_id and expert_annotations / turker_annotations, "
                   "lists of {coherence, consistency, fluency, relevance} ratings")
_GROUPS = {"expert": ("expert_annotations",), "turker": ("turker_annotations",),
           "both": ("expert_annotations", "turker_annotations")}


def read_summeval(path: str | Path, *, annotators: Literal["expert", "turker", "both"] = "expert") -> pd.DataFrame:
    """Rating judgements (the long table of :mod:`humeval.judgements`, ``task_id`` empty) from SummEval JSONL.

    ``annotators``: the expert annotations (default), the crowd's (``turker``), or both.
    Raises :class:`DataError` naming the file, the line and the expected layout for a broken
    line, a missing field, or a rating that is not a number.
    """
    path = Path(path)
    if annotators not in _GROUPS:
        raise DataError(f"read_summeval: annotators must be expert, turker or both, got {annotators!r}")
    rows = []
    for lineno, obj in iter_jsonl(path, what="SummEval file"):
        where = f"{path}:{lineno}"
        for key in ("id", "model_id", *_GROUPS[annotators]):
            if key not in obj:
                raise DataError(f"{where}: missing field {key!r} (fields: {', '.join(list(obj)[:10])}); "
                                f"expected {SUMMEVAL_LAYOUT}")
        item_id, system = (text_cell(obj[key], where=where, what=key, layout=SUMMEVAL_LAYOUT) for key in ("id", "model_id"))
        for group in _GROUPS[annotators]:
            ratings = obj[group]
            if not isinstance(ratings, list):
                raise DataError(f"{where}: {group} must be a list of rating objects, got {type(ratings).__name__}")
            who = group.split("_")[0]
            for k, rating in enumerate(ratings, start=1):
                if not isinstance(rating, dict):
                    raise DataError(f"{where}: {group}[{k - 1}] must be an object of ratings, got {rating!r}")
                for criterion, value in rating.items():
                    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                        raise DataError(f"{where}: {group}[{k - 1}].{criterion} must be a number, got {value!r}")
                    rows.append({"participant_id": f"{who}-{k}", "list_id": "", "task_id": "", "kind": "task",
                                 "item_id": item_id, "criterion": str(criterion), "system": system,
                                 "system_b": "", "position": 0, "value": float(value), "choice": "",
                                 "seconds": math.nan, "submitted_at": "", "stop_seq": pd.NA, "spans": "", "comment": ""})
    if not rows:
        raise DataError(f"{path}: no ratings found; expected {SUMMEVAL_LAYOUT}")
    return pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS)
