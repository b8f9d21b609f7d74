"""Small hand-made protocols and judgement tables for the analysis tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from humeval.design.tasks import Task
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.protocol.models import Protocol


def make_protocol(**sections: Any) -> Protocol:
    base: dict[str, Any] = {
        "study": {"name": "t", "seed": 3},
        "data": {"files": ["data.jsonl"]},
        "systems": ["A", "B", "C"],
        "criteria": [{"name": "q", "type": "likert", "question": "How good?", "points": 5}],
        "design": {"judgements_per_item": 2, "items_per_participant": 3},
        "analysis": {"bootstrap": 100},
    }
    base.update(sections)
    return Protocol.model_validate(base)


def rows(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Judgement rows with defaults for the columns a test does not care about."""
    defaults = {"list_id": "", "kind": "task", "criterion": "q", "system_b": "", "position": 0, "value": np.nan,
                "choice": "", "seconds": 10.0, "submitted_at": ""}
    frame = pd.DataFrame([defaults | r for r in records])
    if "task_id" not in frame:
        frame["task_id"] = frame["item_id"] + "|" + frame["system"] + "|q"
    return frame.reindex(columns=JUDGEMENT_COLUMNS)


def rating_tasks(items: list[str], systems: list[str]) -> list[Task]:
    return [Task(f"{i}|{s}|q", i, (s,), ("q",), "single") for i in items for s in systems]


@pytest.fixture
def protocol() -> Protocol:
    return make_protocol()
