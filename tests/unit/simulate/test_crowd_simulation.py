"""The crowd simulation: sessions admitted by the store's rule, fed at their end, cut at the decision."""

from __future__ import annotations

import math

import numpy as np
import pytest

from humeval.simulate.crowd import simulate_crowd
from humeval.stopping import admission as adm
from humeval.stopping import get_rule

RULE = get_rule("anytime", 0.05)


@pytest.mark.parametrize("w", [3, 7, 10])
@pytest.mark.parametrize("arrivals", [None, 30.0])
def test_p_one_decides_after_ceil_d0_over_w_sessions(w: int, arrivals: float | None) -> None:
    """Every outcome favours A and W = 1 (in-flight bound 1): the rule admits only sessions that cannot
    overshoot, so it decides at n = d0 after exactly ceil(d0 / w) sessions, and nothing is cut."""
    d0 = adm.distance(RULE.a_min, 0, 0)
    r = simulate_crowd(RULE, lists=40, watched=w, minutes_per_list=5, arrivals_per_hour=arrivals, sessions=1, p=1.0,
                       in_flight_share=1e-4, runs=50, seed=1)
    assert (r.runs.outcome == 1).all()
    assert (r.runs.used == d0).all()
    assert (r.runs.places == math.ceil(d0 / w)).all()
    assert (r.runs.unused == math.ceil(d0 / w) * w - d0).all()
    assert (r.runs.cut == 0).all()


def test_fixed_design_without_stopping_pays_every_place() -> None:
    """At p = 0.5 with few lists the rule cannot decide: every place is paid and every judgement used."""
    r = simulate_crowd(RULE, lists=4, watched=5, minutes_per_list=5, arrivals_per_hour=20, sessions=2, p=0.5,
                       runs=200, seed=2)
    assert (r.runs.outcome == 0).all()
    assert (r.runs.places == 4).all() and (r.runs.used == 20).all() and (r.runs.unused == 0).all()


@pytest.mark.parametrize("sessions", [1, 2, 3])
def test_unused_within_the_stated_bound(sessions: int) -> None:
    """At the decision, admitted but unused outcomes are at most unused_bound (admission module docstring)."""
    w = 10
    r = simulate_crowd(RULE, lists=30, watched=w, minutes_per_list=4, arrivals_per_hour=45, sessions=sessions, p=0.7,
                       runs=500, seed=3)
    decided = r.runs.outcome != 0
    assert decided.mean() > 0.5
    bound = np.array([adm.unused_bound(sessions, w, max(1, math.ceil(0.05 * u))) for u in r.runs.used])
    assert (r.runs.unused[decided] <= bound[decided]).all()
    assert r.runs.paid.tolist() == (r.runs.used + r.runs.unfed + r.runs.cut).tolist()


def test_ignoring_the_admission_rule_costs_unused_judgements() -> None:
    """W huge admits every list at once: unused judgements grow far beyond the default's."""
    kw = {"lists": 30, "watched": 10, "minutes_per_list": 4, "arrivals_per_hour": 200, "p": 0.8, "runs": 300, "seed": 4}
    default = simulate_crowd(RULE, sessions=2, **kw).summary()
    unbounded = simulate_crowd(RULE, sessions=1000, **kw).summary()
    assert unbounded["unused"].mean > 5 * default["unused"].mean
    assert unbounded["places"].mean > default["places"].mean + 5


def test_template_settings_places_follow_the_judgements_and_wall_time_stays_close() -> None:
    """The pairwise template (30 items x 3 judgements = 9 lists of 10 watched tasks, W = 2) with a crowd that
    sends about 3 participants per session length: the issue's acceptance formula for places, and wall time
    at most 1.25x the fixed design's."""
    minutes = 4.0
    r = simulate_crowd(RULE, lists=9, watched=10, minutes_per_list=minutes, arrivals_per_hour=3 * 60 / minutes,
                       sessions=2, p=0.8, runs=2000, seed=5)
    sm = r.summary()
    assert sm["places"].mean <= 1.25 * (sm["used"].mean / r.fixed_judgements) * r.fixed_places + 1
    assert sm["wall_hours"].mean <= 1.25 * sm["fixed_wall_hours"].mean
    assert sm["unused"].mean <= 0.15 * sm["used"].mean


def test_seeded_and_recorded() -> None:
    kw = {"lists": 9, "watched": 10, "minutes_per_list": 4, "arrivals_per_hour": 45, "p": 0.75, "runs": 100}
    a, b = simulate_crowd(RULE, seed=7, **kw), simulate_crowd(RULE, seed=7, **kw)
    assert a.runs.places.tolist() == b.runs.places.tolist() and np.array_equal(a.runs.wall, b.runs.wall)
    assert "seed:7" in a.signature() and a.to_json()["seed"] == 7


def test_without_arrivals_wall_time_is_not_predicted() -> None:
    r = simulate_crowd(RULE, lists=9, watched=10, minutes_per_list=4, p=0.8, runs=50, seed=8)
    assert "wall_hours" not in r.summary()


def test_lists_of_unequal_watched_tasks() -> None:
    """Lists of 3 or 4 watched tasks (the demo's design): every paid judgement is used, unfed or cut, and with
    p = 1 the decision still comes at n = d0."""
    per_list = [4, 3, 3] * 15
    d0 = adm.distance(RULE.a_min, 0, 0)
    r = simulate_crowd(RULE, lists=45, watched=per_list, minutes_per_list=4, arrivals_per_hour=45, sessions=2, p=1.0,
                       runs=100, seed=9)
    assert (r.runs.used == d0).all() and r.fixed_judgements == 150
    assert r.runs.paid.tolist() == (r.runs.used + r.runs.unfed + r.runs.cut).tolist()
    r = simulate_crowd(RULE, lists=45, watched=per_list, minutes_per_list=4, arrivals_per_hour=45, sessions=2, p=0.5,
                       runs=100, seed=9)
    assert r.runs.paid.tolist() == (r.runs.used + r.runs.unfed + r.runs.cut).tolist()
