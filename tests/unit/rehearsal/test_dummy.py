"""Dummy responses: the three kinds behave as the paper describes."""

from __future__ import annotations

import numpy as np
import pytest

from humeval.design import build_lists, build_tasks
from humeval.errors import HumevalError
from humeval.protocol import parse_protocol
from humeval.simulate.dummy import dummy_judgements

P = parse_protocol(
    {
        "study": {"name": "s", "seed": 1},
        "data": {"files": ["d.jsonl"]},
        "criteria": [
            {"name": "g", "type": "likert", "question": "?", "points": 5},
            {"name": "me", "type": "magnitude", "question": "?", "standard": {"text": "x"}, "modulus": 100},
            {"name": "pick", "type": "2afc", "question": "?", "tie": True},
        ],
        "design": {"judgements_per_item": 3, "items_per_participant": 9, "attention_checks": 1},
    }
)
SYSTEMS = ["A", "B", "C"]


@pytest.fixture(scope="module")
def lists():
    tasks = build_tasks(P, [f"i{i}" for i in range(12)], SYSTEMS)
    return build_lists(tasks, P, seed=2)


def test_static_is_evenly_spaced_and_constant(lists):
    frame = dummy_judgements(lists, P, "static", seed=1)
    g = frame[(frame.criterion == "g") & (frame.kind == "task")]
    assert g.groupby("system")["value"].agg(["min", "max"]).to_dict("index") == {
        "A": {"min": 2.0, "max": 2.0}, "B": {"min": 3.0, "max": 3.0}, "C": {"min": 4.0, "max": 4.0}
    }
    pick = frame[(frame.criterion == "pick") & (frame.kind == "task")]
    better = np.where(pick["choice"] == "A", pick["system"], pick["system_b"])
    assert set(better) <= {"B", "C"}  # the lower static score never wins


def test_normal_is_rounded_clipped_and_centred(lists):
    frame = dummy_judgements(lists, P, "normal", seed=3)
    g = frame[(frame.criterion == "g") & (frame.kind == "task")]["value"]
    assert set(g.unique()) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    me = frame[(frame.criterion == "me") & (frame.kind == "task")]["value"]
    assert (me > 0).all() and me.between(25 - 1e-9, 400 + 1e-9).all()


def test_random_covers_the_scale(lists):
    g = dummy_judgements(lists, P, "random", seed=3).query("criterion == 'g'")["value"]
    assert set(g.unique()) == {1.0, 2.0, 3.0, 4.0, 5.0}


def test_attention_checks_answered_as_expected(lists):
    frame = dummy_judgements(lists, P, "random", seed=4)
    checks = frame[frame.kind == "attention"]
    assert len(checks) > 0
    expected = {t.task_id: t.expected for pl in lists for t in pl.tasks if t.kind == "attention"}
    asked = checks["task_id"].map(expected)
    answered = checks["choice"].where(checks["choice"] != "", checks["value"])
    assert (answered.astype(str) == asked.map(lambda v: v if isinstance(v, str) else float(v)).astype(str)).all()


def test_same_seed_same_judgements(lists):
    a = dummy_judgements(lists, P, "normal", seed=7)
    b = dummy_judgements(lists, P, "normal", seed=7)
    assert a.equals(b)


def test_unknown_kind(lists):
    with pytest.raises(HumevalError, match="Did you mean 'normal'"):
        dummy_judgements(lists, P, "normall", seed=1)
