"""humeval.costs.budget on a fixed design, against hand-computed numbers.

The study: the balanced design of Thomson & Belz (2025): 90 lists of 36 tasks, 3,240 judgements.
"""

from __future__ import annotations

import json

import pytest

from humeval.costs import budget, reward_per_list
from humeval.errors import ProtocolError
from humeval.reproduce.thomson import write_study
from tests.cli import humeval


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return write_study(tmp_path_factory.mktemp("b") / "s", 0)


def _with(study, text: str):
    base = study.protocol_file.read_text()
    base = base.split("\n# pay\n")[0]
    base = base.split("\nplatform:\n")[0]  # the paper's study (kind files) is replaced by the platform under test
    study.protocol_file.write_text(base + "\n# pay\n" + text)
    from humeval.study import StudyFolder

    return StudyFolder.open(study.root)


def test_prolific_fixed_design_hand_computed(study):
    s = _with(study, "platform:\n  kind: prolific\npay:\n  currency: GBP\n  hourly: 9.0\n  seconds_per_task: 10\n")
    b = budget(s)
    # 36 tasks x 10 s = 6 min; 9.00/h x 6/60 h = 0.90 per list; 90 lists = 81.00;
    # fee 42.8% = 34.668 -> 34.67; total 115.668 -> 115.67
    assert (b.places, b.tasks_per_list, b.judgements) == (90, 36, 3240)
    assert b.minutes_per_list == 6.0 and b.reward_per_list == 0.90 and b.hourly_pay == 9.00
    assert b.minimum_hourly == 6.00 and b.meets_minimum is True
    assert (b.rewards, b.fee, b.total) == (81.00, 34.67, 115.67)
    assert b.design == "fixed" and b.effort == []


@pytest.mark.parametrize("pay", ["hourly: 9.0\n  seconds_per_task: 10", "hourly: 8.1\n  minutes_per_list: 7",
                                 "seconds_per_task: 10"])
def test_the_reward_of_a_place_is_the_budgets_without_reading_the_design(study, pay):
    s = _with(study, f"platform:\n  kind: prolific\n  reward: 0.75\npay:\n  currency: GBP\n  {pay}\n")
    b = budget(s)
    assert reward_per_list(s, b.tasks_per_list) == (b.reward_per_list, "GBP")


def test_academic_fee_and_reward_rounded_up_to_the_cent(study):
    s = _with(study, "platform:\n  kind: prolific\npay:\n  hourly: 8.1\n  fee_rate: 0.333\n  minutes_per_list: 7\n")
    b = budget(s)
    # 8.10 x 7/60 = 0.945 -> 0.95 (never below the declared hourly pay); 90 x 0.95 = 85.50;
    # fee 0.333 x 85.50 = 28.4715 -> 28.47; total 113.97; hourly 0.95 / (7/60) = 8.142857 -> 8.14
    assert b.reward_per_list == 0.95 and b.hourly_pay == 8.14
    assert (b.rewards, b.fee, b.total) == (85.50, 28.47, 113.97)


def test_below_the_minimum_is_flagged(study):
    s = _with(study, "platform:\n  kind: prolific\n  reward: 0.75\npay:\n  currency: USD\n  seconds_per_task: 10\n")
    b = budget(s)
    # 0.75 per 6 minutes = 7.50 USD/h < Prolific's 8.00 USD/h
    assert b.hourly_pay == 7.50 and b.minimum_hourly == 8.00 and b.meets_minimum is False
    assert any("below the minimum 8.00" in n for n in b.notes)


def test_local_study_has_no_fee_and_a_declared_minimum(study):
    s = _with(study, "platform:\n  reward: 1.0\npay:\n  minimum_hourly: 12\n  seconds_per_task: 10\n")
    b = budget(s)
    assert b.fee_rate == 0.0 and b.total == 90.0 and b.hourly_pay == 10.0 and b.meets_minimum is False


def test_missing_time_or_reward_is_a_clear_error(study):
    s = _with(study, "platform:\n  kind: prolific\npay:\n  hourly: 9\n")
    with pytest.raises(ProtocolError, match="no time estimate"):
        budget(s)
    s = _with(study, "pay:\n  seconds_per_task: 5\n")
    with pytest.raises(ProtocolError, match="no reward"):
        budget(s)


def test_cli_json_and_table(study):
    _with(study, "platform:\n  kind: prolific\npay:\n  currency: GBP\n  hourly: 9.0\n  seconds_per_task: 10\n")
    proc = humeval("budget", study.root, "--format", "json", expect=0)
    data = json.loads(proc.stdout)
    assert data["total"] == 115.67 and data["fee_rate"] == 0.428
    proc = humeval("budget", study.root)
    assert "115.67 GBP" in proc.stdout and "meets the minimum" in proc.stdout


def test_a_difficulty_variance_for_a_fixed_design_is_refused(study):
    s = _with(study, "platform:\n  kind: prolific\npay:\n  currency: GBP\n  hourly: 9.0\n  seconds_per_task: 10\n")
    with pytest.raises(ProtocolError, match="--difficulty-var: .* this protocol has no stopping section"):
        budget(s, difficulty_var=0.1)


@pytest.mark.parametrize(("declared", "measured", "minutes", "source"), [
    (45, 12.0, 27, "protocol (pay.seconds_per_task 45 s), above the median seconds per task (12.0 s) of the pilot: "
                   "the higher is used"),
    (10, 20.0, 12, "median seconds per task (20.0 s) of the pilot, above pay.seconds_per_task (10 s): the higher is used"),
])
def test_a_place_is_never_priced_below_the_declared_time(study, tmp_path, declared, measured, minutes, source):
    # a fast pilot (at 12 s a task for reading long articles) is shown beside the declared 45 s, which prices the list:
    # 36 tasks x 45 s = 27 min; a slower pilot than declared wins the same way: 36 x 20 s = 12 min
    from humeval.judgements import JUDGEMENT_COLUMNS

    pilot = tmp_path / "pilot.jsonl"
    rows = [{c: None for c in JUDGEMENT_COLUMNS} | {"participant_id": f"p{k % 3}", "task_id": f"t{k}", "kind": "task",
                                                    "item_id": f"i{k}", "criterion": "q", "system": "A",
                                                    "value": 3.0, "seconds": measured} for k in range(9)]
    pilot.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = _with(study, f"platform:\n  kind: prolific\npay:\n  currency: GBP\n  hourly: 9.0\n  seconds_per_task: {declared}\n")
    b = budget(s, pilot=pilot)
    assert (b.minutes_per_list, b.time_source) == (minutes, source)
    assert b.reward_per_list == round(9.0 * minutes / 60, 2)


def test_the_session_spread_comes_from_the_pilots_whole_lists():
    # four participants with 2 timed tasks each (sessions of 20, 40, 10 and 80 s) and one who did 1 task: the
    # log-sd of the whole lists' times, computed by hand; fewer than 3 whole lists give none
    import math

    import numpy as np
    import pandas as pd

    from humeval.costs import _pilot_spread
    from humeval.judgements import JUDGEMENT_COLUMNS
    from humeval.simulate.plan import pilot_from_judgements

    times = {"p1": [5, 15], "p2": [30, 10], "p3": [4, 6], "p4": [40, 40], "p5": [7]}
    rows = [{c: "" for c in JUDGEMENT_COLUMNS} | {"participant_id": p, "task_id": f"{p}-{k}", "kind": "task",
                                                 "item_id": f"i{k}", "criterion": "q", "system": "A", "system_b": "B",
                                                 "choice": "A", "seconds": s} for p, ts in times.items()
            for k, s in enumerate(ts)]
    pilot = pilot_from_judgements(pd.DataFrame(rows))
    logs = np.log([20.0, 40.0, 10.0, 80.0])
    expected = math.sqrt(((logs - logs.mean()) ** 2).sum() / 3)
    assert _pilot_spread(pilot, 2) == pytest.approx((expected, 4))
    assert _pilot_spread(pilot, 3) is None and _pilot_spread(None, 2) is None
