"""The stopping rule replayed on collected judgements: one function for collation, analysis and report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from humeval.analysis.collate import collate
from humeval.analysis.decisions import replay_decisions
from humeval.design.tasks import Task
from humeval.judgements.exclusion import EXCLUDED_COLUMNS
from humeval.stopping import get_rule

from .conftest import make_protocol, rows

NONE = pd.DataFrame(columns=EXCLUDED_COLUMNS)


def _protocol(**stopping):
    return make_protocol(systems=["X", "Y"], criteria=[{"name": "q", "type": "2afc", "question": "Which?"}],
                         stopping={"rule": "anytime", "delta": 0.05, **stopping},
                         design={"judgements_per_item": 3, "items_per_participant": 5},
                         analysis={"rankings": [], "agreement": [], "bootstrap": 100})


def _frame(choices, seqs=None):
    return rows([{"participant_id": f"p{k}", "item_id": f"i{k % 40}", "task_id": f"i{k % 40}|X+Y|q", "system": "X",
                  "system_b": "Y", "choice": c, "submitted_at": f"2025-01-01T00:{k // 60:02d}:{k % 60:02d}",
                  "stop_seq": np.nan if seqs is None else seqs[k]} for k, c in enumerate(choices)])


def _tasks(n=40):
    return [Task(f"i{k}|X+Y|q", f"i{k}", ("X", "Y"), ("q",), "pair") for k in range(n)]


def test_a_two_system_study_with_an_empty_list_is_replayed():
    # the resolver compares the study's two systems; the old replay returned no decision path
    (d,) = replay_decisions(_frame(["B"] * 30), _protocol(), ["X", "Y"], _tasks())
    assert (d["a"], d["b"], d["outcome"], d["decision"]) == ("X", "Y", "B", "Y")
    rule = get_rule("anytime", 0.05)
    expected = next(k for k in range(1, 31) if rule.update(0).decided)  # hand replay: first n that decides
    assert d["n"] == expected and len(d["path"]) == expected
    assert d["fixed_design"] == 40 * 3 and d["collected"] == 30 and d["saved"] == 90


def test_the_live_order_stop_seq_comes_before_submission_time():
    choices = ["A"] * 10 + ["B"] * 40
    seqs = [np.nan] * 10 + list(range(40, 0, -1))  # the live rule consumed the B votes, latest submitted first
    (d,) = replay_decisions(_frame(choices, seqs), _protocol(), ["X", "Y"])
    assert d["outcome"] == "B" and d["live_n"] == 40
    assert d["agrees_with_live"] is (d["n"] == 40)
    assert all(p["estimate"] == 0.0 for p in d["path"])  # the unfed A votes come only after every fed row


def test_bounds_are_on_the_win_rate_scale_within_0_and_1():
    (d,) = replay_decisions(_frame(["A", "B"] * 60), _protocol(), ["X", "Y"])
    assert d["outcome"] == "continue"
    for p in d["path"]:
        assert 0 <= p["threshold_b"] <= p["threshold_a"] <= 1
    assert not d["path"][0]["reachable_a"]  # one judgement cannot decide: its bound lies beyond 1


def test_horizon_stops_without_a_decision():
    (d,) = replay_decisions(_frame(["A", "B"] * 30), _protocol(rule="hoeffding-lastrun", max_judgements=20),
                            ["X", "Y"], _tasks())
    assert d["outcome"] == "horizon" and d["n"] == 20 and d["horizon"] == 20


def test_a_decided_comparison_is_complete_in_collation():
    frame = _frame(["B"] * 30)
    decisions = replay_decisions(frame, _protocol(), ["X", "Y"], _tasks())
    result = collate(frame, _tasks(), _protocol(), excluded=NONE, decisions=decisions)
    assert result.complete and result.missing == 0
    assert result.summary()["tasks_decided"] == 40
    assert result.tasks["decided"].str.startswith("q: Y at n = ").all()
    undecided = collate(frame, _tasks(), _protocol(), excluded=NONE)
    assert not undecided.complete  # without the decision the same judgements leave tasks short


def test_a_comparison_whose_every_judgement_was_excluded_is_replayed_as_undecided():
    # every judgement of the watched comparison excluded (a pilot clicking at 1 s under min-time): the rows left
    # are none; the replay says so instead of failing on a frame that lost its columns
    frame = _frame(["A"] * 6)
    (d,) = replay_decisions(frame.iloc[:0], _protocol(), ["X", "Y"], _tasks())
    assert (d["outcome"], d["n"], d["collected"], d["reason"]) == ("continue", 0, 0, "no decisive judgement yet")
    other = frame.assign(criterion="other")  # rows of another criterion only: none of them judge the comparison
    (d,) = replay_decisions(other, _protocol(), ["X", "Y"], _tasks())
    assert (d["outcome"], d["n"], d["collected"]) == ("continue", 0, 0)


def test_the_decision_names_whose_preference_it_is_about():
    """The participants whose judgements the rule used, and the times of the first and last: ties are no outcome."""
    choices = ["tie", "B", "B", "tie"] + ["B"] * 40
    (d,) = replay_decisions(_frame(choices), _protocol(), ["X", "Y"], _tasks())
    assert d["outcome"] == "B"
    used = [k for k, c in enumerate(choices) if c == "B"][: d["n"]]  # hand count: the first n decisive rows
    assert d["population"] == {"participants": d["n"], "judgements": d["n"],
                               "first": "2025-01-01T00:00:01Z", "last": f"2025-01-01T00:00:{used[-1]:02d}Z"}


def test_pool_votes_of_one_outcome_count_every_participant_who_gave_them():
    protocol = _protocol().model_copy(update={"assignment": _protocol().assignment.model_copy(
        update={"strategy": "majority", "workers": 3})})
    choices, seqs = [], []
    for k in range(30):  # three votes per task, two of them for Y: a majority label for Y
        choices += ["B", "B", "A"]
        seqs += [k + 1] * 3
    (d,) = replay_decisions(_frame(choices, seqs), protocol, ["X", "Y"])
    assert d["outcome"] == "B"
    assert d["population"]["participants"] == d["population"]["judgements"] == 3 * d["n"]
    assert d["population"]["last"] == f"2025-01-01T00:00:{3 * d['n'] - 1:02d}Z"


def test_the_drift_check_flags_a_crowd_whose_preference_changed():
    from statsmodels.stats.proportion import proportion_confint

    from humeval.stats.drift import stopped_split_pvalues

    choices = ["A", "A", "A", "B"] * 10 + ["B", "B", "B", "A"] * 10  # 0.75 for X early, 0.25 late
    (d,) = replay_decisions(_frame(choices), _protocol(), ["X", "Y"], _tasks())
    assert d["outcome"] == "continue" and d["n"] == 80
    drift = d["drift"]
    assert drift["flagged"] and drift["check"] == "halves" and drift["alpha"] == 0.05
    assert (drift["early"]["n"], drift["early"]["wins_a"], drift["late"]["n"], drift["late"]["wins_a"]) == (40, 30, 40, 10)
    low, high = proportion_confint(30, 40, method="wilson")
    assert (drift["early"]["ci_low"], drift["early"]["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert drift["late"]["first"] == "2025-01-01T00:00:40Z" and drift["late"]["last"] == "2025-01-01T00:01:19Z"
    boundary = get_rule("anytime", 0.05).boundary(80)
    assert drift["p_value"] == pytest.approx(stopped_split_pvalues(boundary, 80, 40, 40, 30)[0])
    assert drift["p_value"] < 1e-4

    (steady,) = replay_decisions(_frame(["A", "B"] * 40), _protocol(), ["X", "Y"], _tasks())
    assert not steady["drift"]["flagged"] and steady["drift"]["p_value"] == pytest.approx(1.0)
    (off,) = replay_decisions(_frame(choices), _protocol(drift_check="none"), ["X", "Y"], _tasks())
    assert off["drift"] is None and off["outcome"] == d["outcome"] and off["n"] == d["n"]


def test_the_drift_check_is_undefined_for_a_rule_without_a_boundary():
    (d,) = replay_decisions(_frame(["A", "B"] * 30), _protocol(rule="hoeffding-lastrun", max_judgements=20),
                            ["X", "Y"], _tasks())
    assert d["drift"]["undefined"].startswith("the rule has no boundary form") and not d["drift"]["flagged"]


def test_an_undecided_replay_that_counts_an_unfed_judgement_agrees_with_the_live_rule():
    # live: 60 outcomes fed (stop_seq 1..60), no decision; one more judgement stored but never fed (no stop_seq):
    # the replay uses 61 outcomes and does not decide either, which is no disagreement
    choices = ["A", "B"] * 30 + ["A"]
    seqs = list(range(1, 61)) + [np.nan]
    (d,) = replay_decisions(_frame(choices, seqs), _protocol(), ["X", "Y"])
    assert (d["outcome"], d["n"], d["live_n"], d["agrees_with_live"]) == ("continue", 61, 60, True)
    from humeval.analysis.decisions import agrees_with_live

    assert agrees_with_live(None, 10, True) is None
    assert agrees_with_live(20, 20, True) is True and agrees_with_live(19, 20, True) is False
    assert agrees_with_live(21, 20, False) is False  # the live rule was fed more than the replay could use


def test_the_report_says_an_undecided_live_rule_had_not_decided():
    from humeval.report.build import _stopping_text
    from humeval.results import Stopping

    (d,) = replay_decisions(_frame(["A", "B"] * 30, list(range(1, 61))), _protocol(), ["X", "Y"])
    text = _stopping_text(Stopping.model_validate(d))
    assert "The live rule was fed n = 60 outcomes and had not decided; the replay on the exported" in text
    assert "agrees." in text and "decided at n" not in text
