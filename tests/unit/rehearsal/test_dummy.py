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


def test_dummy_seconds_follow_the_declared_time(tmp_path):
    # the dry run's (and a rehearsal's) participants take the protocol's declared time, not 12 s whatever the study
    import numpy as np

    from humeval.simulate.dummy import DEFAULT_SECONDS, declared_seconds, draw_seconds
    from humeval.study import StudyFolder
    from humeval.templates import init_study

    init_study(tmp_path / "s", "pairwise", items=6)
    protocol = StudyFolder.open(tmp_path / "s").protocol
    assert protocol.pay.seconds_per_task == 20 and declared_seconds(protocol) == 20.0
    no_time = protocol.model_copy(update={"pay": protocol.pay.model_copy(update={"seconds_per_task": None,
                                                                                  "minutes_per_list": 6.0})})
    assert declared_seconds(no_time, 12) == 30.0  # 6 minutes over 12 tasks
    bare = no_time.model_copy(update={"pay": no_time.pay.model_copy(update={"minutes_per_list": None})})
    assert declared_seconds(bare, 12) == DEFAULT_SECONDS
    draws = draw_seconds(np.random.default_rng(1), 45.0, size=20_000)
    assert abs(np.median(draws) / 45.0 - 1) < 0.02  # log-normal around the median given
