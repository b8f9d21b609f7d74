"""`humeval budget` plans sessions: places, money and wall time of dynamic stopping beside the fixed design."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from humeval.costs import budget
from humeval.lock import lock_study
from humeval.pipeline import run_stage
from humeval.study import Study
from humeval.templates import init_study


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("sess") / "s"
    path = init_study(root, "pairwise", items=30)
    text = re.sub(r"\npay:.*?\n\n", "\n", path.read_text(), flags=re.S)  # the template's own pay: replaced below
    text = text.replace("platform:\n  kind: local",
                        "platform:\n  kind: prolific\n  completion_code: C1\n  reward: 1.2\npay:\n  seconds_per_task: 20")
    path.write_text(text)
    s = Study.open(root)
    lock_study(s)
    run_stage(s, "sample")
    run_stage(s, "design")
    rng = np.random.default_rng(0)  # a pilot: 60 requests, 3 judgements each, A preferred 80 % of the time
    pd.DataFrame({"request": np.repeat(np.arange(60), 3), "choice": (rng.random(180) < 0.8).astype(int)}).to_csv(
        root / "pilot.csv", index=False)
    return s


def test_sessions_planned_beside_the_fixed_design(study):
    b = budget(study, pilot=study.root / "pilot.csv", strategies=["one"], iterations=20, crowd_runs=400)
    designs = [(p.design, p.sessions, p.protocol) for p in b.sessions]
    assert designs == [("fixed", 0, False), ("dynamic", 1, False), ("dynamic", 2, True), ("dynamic", 3, False)]
    fixed, w1, w2, w3 = b.sessions
    cost = b.reward_per_list * (1 + b.fee_rate)
    assert fixed.places[0] == b.places == 9 and fixed.total[0] == pytest.approx(9 * cost, abs=0.01)
    assert w2.total[0] == pytest.approx(w2.places[0] * cost, abs=0.02)
    for p in (w1, w2, w3):
        assert p.places[1] <= p.places[0] <= p.places[2] and p.places[0] < 9
        assert p.wall_hours is not None and p.wall_ratio is not None
    assert w1.unused[0] <= w2.unused[0] < w3.unused[0]  # the trade-off the table shows
    assert w3.wall_hours[0] <= w1.wall_hours[0]
    assert "arrivals:45/h" in w2.signature and "W:2" in w2.signature
    rows = b.session_rows()
    assert rows[2]["design"] == "dynamic W=2 (protocol)" and b.to_json()["sessions"][2]["sessions"] == 2


def test_without_arrivals_wall_time_is_not_predicted(study):
    text = study.protocol_file.read_text()
    study.protocol_file.write_text(text.replace("  arrivals_per_hour: 45", "  wave: 1"))
    try:
        b = budget(Study.open(study.root), pilot=study.root / "pilot.csv", strategies=["one"], iterations=20,
                   crowd_runs=200)
    finally:
        study.protocol_file.write_text(text)
    assert all(p.wall_hours is None for p in b.sessions)
    assert any("wall time is not predicted: set crowd.arrivals_per_hour" in n for n in b.notes)
