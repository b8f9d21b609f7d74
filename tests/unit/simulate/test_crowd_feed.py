"""simulate_crowd with ``feed="judgement"``: each watched outcome fed when it is submitted, after the qualification."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from humeval.errors import HumevalError
from humeval.simulate.arrivals import DEFAULT_SHAPE, read_crowd
from humeval.simulate.crowd import simulate_crowd
from humeval.stopping import admission as adm
from humeval.stopping import get_rule

RULE = get_rule("anytime", 0.05)
D0 = adm.distance(RULE.a_min, 0, 0)  # 17: with p = 1 the rule decides at n = 17


def _crowd(tmp_path: Path, rows: list[dict]) -> object:
    f = tmp_path / "crowd.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return read_crowd(f)


#: lists of 1 qualification check + 10 watched tasks, 60 s a task (11 minutes: the crowd's pace, scale 1)
LISTS = {"lists": 6, "watched": 10, "tasks_per_list": 11, "minutes_per_list": 11, "p": 1.0, "in_flight_share": 1e-4,
         "patience": 3600, "resample": False, "runs": 3, "seed": 1, "qualification": 1}


@pytest.mark.parametrize(("sessions", "feed", "wall", "cut_sessions"), [
    (1, "session", 1320, 0), (1, "judgement", 1140, 1), (2, "session", 660, 0), (2, "judgement", 600, 2)])
def test_p_one_decides_at_the_submit_of_the_d0th_outcome(tmp_path: Path, sessions: int, feed: str, wall: float,
                                                         cut_sessions: int) -> None:
    """Everyone at 0 on the waitlist, sessions of 660 s, the i-th watched task submitted at 60 (1 + i) s.
    W = 1 (allowance 0): pending - d stays 10 - 17 + 10 > 0 while P0 feeds, so P1 starts only when P0's last
    outcome is in (660 s; feed session: at P0's end, the same time); with feed judgement the 7th of P1's outcomes is
    the 17th, submitted at 660 + 60 x 8 = 1140 s (feed session: P1's end, 1320 s). W = 2: P0 and P1 both at 0, their
    outcomes interleaved (P0 first at equal times): the 17th is P0's 9th, at 600 s; P0 has 1 watched task left, P1 2
    (cut; feed session: both end at 660 s, P1's last 3 answered but not fed). Two places either way."""
    r = simulate_crowd(RULE, crowd=_crowd(tmp_path, [{"arrived": 0, "session_seconds": 660}] * 6), sessions=sessions,
                       feed=feed, **LISTS)
    assert (r.runs.outcome == 1).all() and (r.runs.used == D0).all() and (r.runs.places == 2).all()
    np.testing.assert_allclose(r.runs.wall * 3600, wall)
    assert (r.runs.unused == 3).all() and (r.runs.cut_sessions == cut_sessions).all()
    assert (r.runs.unfed == (0 if feed == "judgement" else 3)).all()
    assert (r.runs.cut == (3 if feed == "judgement" else 0)).all()
    assert ("|feed:judgement|qualification:1|" in r.signature()) == (feed == "judgement")
    assert r.to_json()["feed"] == feed


@pytest.mark.parametrize(("feed", "wall"), [("judgement", 960), ("session", 1320)])
def test_a_place_opens_mid_session(tmp_path: Path, feed: str, wall: float) -> None:
    """W = 1 with an in-flight share of 0.5: the allowance ceil(n / 2) - 1 grows as outcomes are fed. Feed judgement:
    after P0's k-th outcome pending = 10 - k, d = 17 - k, so a place opens when 20 <= 16 + ceil(k / 2), at k = 7
    (480 s, P0 mid-session); P1's i-th outcome is in at 540 + 60 i, the 17th outcome overall P1's 7th, at 960 s.
    Feed session: P1 starts at P0's end (660 s; n = 10) and decides at its own end, 1320 s."""
    r = simulate_crowd(RULE, crowd=_crowd(tmp_path, [{"arrived": 0, "session_seconds": 660}] * 6), sessions=1,
                       feed=feed, **(LISTS | {"in_flight_share": 0.5}))
    assert (r.runs.outcome == 1).all() and (r.runs.used == D0).all() and (r.runs.places == 2).all()
    np.testing.assert_allclose(r.runs.wall * 3600, wall)


def test_a_quitters_answers_were_fed_at_submit(tmp_path: Path) -> None:
    """P0 answers the check and 5 watched tasks (6 tasks, 360 s) and quits; the store settles them a lease (600 s)
    later, at 960 s: nothing more is fed (n = 5, fed at 120..360 s), their list goes to P1 (waiting), who feeds 10 by
    1620 s (n = 15); P2 then feeds the 17th at 1620 + 60 x 3 = 1800 s. Feed session: the same places, P2's end 2280 s."""
    rows = [{"arrived": 0, "seconds_per_task": [60] * 6}] + [{"arrived": 0, "seconds_per_task": [60] * 11}] * 5
    crowd = _crowd(tmp_path, rows)
    for feed, wall in (("judgement", 1800), ("session", 2280)):
        r = simulate_crowd(RULE, crowd=crowd, sessions=1, lease_seconds=600, feed=feed, **LISTS)
        assert (r.runs.outcome == 1).all() and (r.runs.used == D0).all()
        assert (r.runs.places == 2).all() and (r.runs.quits == 1).all() and (r.runs.quit_fed == 5).all()
        np.testing.assert_allclose(r.runs.wall * 3600, wall)
        assert (r.runs.unused == 20 - (D0 - 5)).all()


@pytest.mark.parametrize("w", [3, 7, 10])
@pytest.mark.parametrize("sessions", [1, 2, 3])
def test_p_one_never_worse_than_feed_session_on_the_same_crowd(w: int, sessions: int) -> None:
    """p = 1 and a drawn Poisson crowd (a waitlist: the same arrivals and durations in both runs). Each outcome lowers
    pending and d by one, so pending - d changes only when a session starts, and pending reaches 0 at the same time
    (the last watched task is the list's last): both feeds admit the same sessions at the same times. Feeding at
    submit, the d0-th outcome is in no later than the end of its session: wall time and places are never worse."""
    kw = {"lists": 30, "watched": w, "minutes_per_list": 5, "arrivals_per_hour": 30, "sessions": sessions, "p": 1.0,
          "in_flight_share": 1e-4, "patience": 60, "qualification": 1, "runs": 200, "seed": 5}
    per_s, per_j = simulate_crowd(RULE, **kw).runs, simulate_crowd(RULE, feed="judgement", **kw).runs
    assert (per_j.outcome == 1).all() and (per_j.used == D0).all() and (per_s.used == D0).all()
    assert (per_j.wall <= per_s.wall).all() and (per_j.places <= per_s.places).all()
    assert (per_j.wall < per_s.wall).mean() > 0.9
    if sessions == 1:  # nothing overshoots: ceil(d0 / w) sessions, as with feed session
        assert (per_j.places == math.ceil(D0 / w)).all()


@pytest.mark.parametrize("crowd", [None, DEFAULT_SHAPE])
def test_every_paid_judgement_is_used_or_cut(crowd: object) -> None:
    """Feed judgement: nothing answered waits to be fed, so the unused are the cut (quitters and pausers included);
    the rule decides sooner on the same crowd than fed per session."""
    kw = {"lists": 30, "watched": 10, "tasks_per_list": 12, "minutes_per_list": 4, "arrivals_per_hour": 45, "p": 0.7,
          "crowd": crowd, "patience": 300, "lease_seconds": 600, "pausers": 0.1, "qualification": 2, "runs": 300,
          "seed": 3}
    per_j, per_s = simulate_crowd(RULE, feed="judgement", **kw), simulate_crowd(RULE, **kw)
    r = per_j.runs
    assert (r.unfed == 0).all() and (r.unused == r.cut).all() and (r.pauses > 0).any()
    assert (r.outcome != 0).mean() > 0.8
    assert per_j.summary()["wall_hours"].mean < per_s.summary()["wall_hours"].mean


@pytest.mark.parametrize("sessions", [1, 2, 3])
def test_unused_within_the_stated_bound(sessions: int) -> None:
    """Each outcome fed at submit lowers d by at most one and pending by exactly one, so the admission's bound on
    the outcomes admitted but unused at the decision holds as with feed session (no pausers: their rest is not
    admitted pending)."""
    w = 10
    r = simulate_crowd(RULE, lists=30, watched=w, minutes_per_list=4, arrivals_per_hour=45, sessions=sessions, p=0.7,
                       qualification=1, feed="judgement", runs=500, seed=3).runs
    decided = r.outcome != 0
    assert decided.mean() > 0.5
    bound = np.array([adm.unused_bound(sessions, w, max(1, math.ceil(0.05 * u))) for u in r.used])
    assert (r.unused[decided] <= bound[decided]).all()
    assert r.paid.tolist() == (r.used + r.cut).tolist()


def test_without_arrivals_every_open_place_is_taken_at_once() -> None:
    """No rate: the places open at 0 are taken at once; with p = 1 and W = 1, ceil(d0 / w) sessions either way."""
    kw = {"lists": 20, "watched": 5, "minutes_per_list": 5, "sessions": 1, "p": 1.0, "in_flight_share": 1e-4,
          "qualification": 1, "runs": 20, "seed": 2}
    r = simulate_crowd(RULE, feed="judgement", **kw).runs
    assert (r.used == D0).all() and (r.places == math.ceil(D0 / 5)).all() and np.isnan(r.wall).all()


@pytest.mark.parametrize(("options", "message"), [
    ({"feed": "submit"}, "feed is 'session' or 'judgement'"),
    ({"feed": "judgement"}, "give qualification >= 1"),
    ({"feed": "judgement", "qualification": 1, "tasks_per_list": 10}, "cannot hold the 0 practice items, 1 qualif"),
    ({"feed": "judgement", "qualification": 1, "practice": 1, "tasks_per_list": 11}, "cannot hold the 1 practice"),
    ({"feed": "judgement", "qualification": 1, "quitters_fed": False}, "fed as they were submitted"),
])
def test_bad_feed_settings_are_refused(options: dict, message: str) -> None:
    with pytest.raises(HumevalError, match=message):
        simulate_crowd(RULE, lists=4, watched=10, minutes_per_list=5, arrivals_per_hour=20, p=0.7, runs=5, **options)


def test_feed_session_is_unchanged() -> None:
    """The default path: the numbers before the feed option (same seeds; recorded from the release before it)."""
    r = simulate_crowd(RULE, lists=20, watched=8, minutes_per_list=4, arrivals_per_hour=40, p=0.7, crowd=DEFAULT_SHAPE,
                       tasks_per_list=10, patience=300, lease_seconds=600, pausers=0.2, runs=200, seed=13).runs
    assert [int(v.sum()) for v in (r.places, r.used, r.unfed, r.cut)] == [1701, 12594, 728, 1669]
    assert float(np.nansum(r.wall)) == pytest.approx(295.9132736638983, rel=1e-12)
    r = simulate_crowd(RULE, lists=15, watched=[6] * 10 + [4] * 5, minutes_per_list=4, arrivals_per_hour=60,
                       sessions=3, p=0.65, patience=120, runs=200, seed=14).runs
    assert [int(v.sum()) for v in (r.places, r.used, r.unfed, r.cut)] == [2649, 13625, 463, 334]
    assert float(np.nansum(r.wall)) == pytest.approx(63.92821620950805, rel=1e-12)


def test_practice_items_come_before_the_qualification(tmp_path: Path) -> None:
    """One practice item and one check first (12 tasks of 60 s): the i-th watched outcome is in at 60 (2 + i) s of a
    session; W = 1: P1 starts at P0's end (720 s) and its 7th outcome, the 17th, is in at 720 + 60 x 9 = 1260 s."""
    r = simulate_crowd(RULE, crowd=_crowd(tmp_path, [{"arrived": 0, "session_seconds": 720}] * 6), sessions=1,
                       feed="judgement", practice=1, **(LISTS | {"tasks_per_list": 12, "minutes_per_list": 12}))
    assert (r.runs.used == D0).all() and (r.runs.places == 2).all() and "|practice:1|" in r.signature()
    np.testing.assert_allclose(r.runs.wall * 3600, 1260)
