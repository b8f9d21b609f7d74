"""The report says whose preference a decision is about, and states the drift check's flag where it reads it."""

from __future__ import annotations

from humeval.analysis.status import caveats
from humeval.report.build import build_report
from humeval.report.document import render_markdown

from ..analysis.conftest import make_protocol
from .test_caveats import COMPLETE, _results

POPULATION = {"participants": 12, "judgements": 59, "first": "2026-03-02T09:00:05Z", "last": "2026-03-02T11:41:30Z"}
HALF = {"early": {"n": 29, "wins_a": 19, "share": 19 / 29, "ci_low": 0.47, "ci_high": 0.80,
                  "first": "2026-03-02T09:00:05Z", "last": "2026-03-02T10:02:00Z"},
        "late": {"n": 30, "wins_a": 11, "share": 11 / 30, "ci_low": 0.22, "ci_high": 0.54,
                 "first": "2026-03-02T10:03:10Z", "last": "2026-03-02T11:41:30Z"}}
DECIDED = {"criterion": "q", "rule": "anytime", "delta": 0.05, "anytime_valid": True, "outcome": "A", "decision": "A",
           "a": "A", "b": "B", "n": 59, "collected": 59, "population": POPULATION}


def _drift(p: float) -> dict:
    return {"check": "halves", "method": "exact split test", "alpha": 0.05, **HALF, "p_value": p, "flagged": p <= 0.05,
            "undefined": None}


def _report(stopping: dict) -> str:
    results = _results({}, stopping=stopping, crit_type="2afc")
    return render_markdown(build_report(make_protocol(), results, design={}, collation=COMPLETE, exclusion=None))


def test_the_guarantee_names_the_participants_and_the_times():
    text = _report(DECIDED | {"drift": _drift(0.4)})
    assert ("the probability that it ever decides wrongly is at most 0.05, about the preference among the 12 "
            "participants who took part between 2026-03-02 09:00:05 UTC and 2026-03-02 11:41:30 UTC, in the order "
            "they arrived") in text
    key = text[text.index("Key results"):text.index("## Study")]
    assert "It is about the preference of the 12 participants who took part between 2026-03-02 09:00:05 UTC" in key
    assert "Drift check (halves): no change detected between the early and late halves (p = 0.4)" in key
    assert "DRIFT" not in text
    assert caveats(_results({}, stopping=DECIDED | {"drift": _drift(0.4)}, crit_type="2afc"), COMPLETE) == []


def test_a_flagged_drift_qualifies_the_decision_everywhere_and_keeps_it():
    flagged = DECIDED | {"drift": _drift(0.012)}
    text = _report(flagged)
    said = ("the crowd's preference changed during collection: early 0.66 [0.47, 0.80], late 0.37 [0.22, 0.54] "
            "(share for A, 95% Wilson intervals; 29 and 30 outcomes), p = 0.012; the decision is about the mixture "
            "of both")
    key = text[text.index("Key results"):text.index("## Study")]
    stopping = text[text.index("## Dynamic stopping"):]
    assert said in key and said in stopping and "decided for A after n = 59" in key
    assert "this qualifies the decision and does not change it" in stopping
    assert "FLAGGED (p = 0.012)" in stopping  # the decisions table
    (banner,) = caveats(_results({}, stopping=flagged, crit_type="2afc"), COMPLETE)
    assert banner == f"DRIFT: q (A vs B): {said}."
    assert banner in text  # the report opens with it


def test_an_old_results_file_without_population_keeps_the_plain_guarantee():
    old = {k: v for k, v in DECIDED.items() if k != "population"}
    text = _report(old)
    assert "anytime-valid: the probability that it ever decides wrongly is at most 0.05)" in text
    assert "It is about the preference" not in text
