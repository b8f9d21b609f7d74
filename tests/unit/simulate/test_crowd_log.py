"""simulate_crowd with a crowd: arrivals and paces from a recorded crowd, quitters, a waitlist (patience)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

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


def test_the_old_poisson_path_is_unchanged() -> None:
    """crowd=None, patience=0: the numbers of the release before the crowd option (b88988a, same seed)."""
    r = simulate_crowd(RULE, lists=20, watched=11, minutes_per_list=3, arrivals_per_hour=40, sessions=2, p=0.6,
                       runs=300, seed=11)
    got = [int(r.runs.places.sum()), int(r.runs.used.sum()), int(r.runs.unfed.sum()), int(r.runs.cut.sum()),
           int((r.runs.outcome != 0).sum())]
    assert got == [4547, 48631, 1154, 232, 183]
    assert float(r.runs.wall.sum()) == pytest.approx(183.68030803771103, rel=1e-12)
    assert float(r.runs.fixed_wall.sum()) == pytest.approx(167.91153842860948, rel=1e-12)


def test_all_at_launch_one_session_decides(tmp_path: Path) -> None:
    """p = 1, W = 1, lists of 17 watched tasks: one session decides. Five participants all at 0 with 600 s
    sessions (the study's 10 minutes: scale 1): one takes the place, four are turned away; wall 10 min."""
    crowd = _crowd(tmp_path, [{"arrived": 0, "session_seconds": 600}] * 5)
    r = simulate_crowd(RULE, lists=5, watched=D0, minutes_per_list=10, sessions=1, p=1.0, in_flight_share=1e-4,
                       crowd=crowd, runs=20, seed=1)
    assert (r.runs.places == 1).all() and (r.runs.used == D0).all() and (r.runs.outcome == 1).all()
    np.testing.assert_allclose(r.runs.wall, 10 / 60)
    assert (r.runs.turned_away == 4).all()
    np.testing.assert_allclose(r.runs.fixed_wall, 10 / 60)  # the fixed design: five places at 0, 10 minutes
    assert "crowd:crowd.jsonl" in r.signature()


@pytest.mark.parametrize(("patience", "places", "used", "wall"), [(0, 1, 10, 10 / 60), (599, 1, 10, 10 / 60),
                                                                   (600, 2, D0, 20 / 60)])
def test_a_waitlist_keeps_the_burst(tmp_path: Path, patience: float, places: int, used: int, wall: float) -> None:
    """Lists of 10 (W = 1 admits one at a time: 10 + 10 > 17). Everyone arrives at 0; the second session can
    start only at 600 s, when the first ends: an arrival who waits 600 s takes it, one who waits less is gone."""
    crowd = _crowd(tmp_path, [{"arrived": 0, "session_seconds": 600}] * 6)
    r = simulate_crowd(RULE, lists=6, watched=10, minutes_per_list=10, sessions=1, p=1.0, in_flight_share=1e-4,
                       crowd=crowd, patience=patience, runs=20, seed=2)
    assert (r.runs.places == places).all() and (r.runs.used == used).all()
    assert (r.runs.outcome == (1 if used == D0 else 0)).all()
    np.testing.assert_allclose(r.runs.wall, wall)


@pytest.mark.parametrize("fed", [False, True])
def test_quitters_dropped_or_fed(tmp_path: Path, fed: bool) -> None:
    """Everyone quits after 8 of 16 tasks (50 s). Dropped (the store today): nothing reaches the rule, no place
    is paid, each quitter's list is taken again until the crowd is gone. Fed: 8 outcomes per quitter, p = 1
    decides at n = 17 in the third quitter's outcomes; still no place paid."""
    crowd = _crowd(tmp_path, [{"arrived": 100 * i, "session_seconds": 50, "completed": 8} for i in range(40)])
    r = simulate_crowd(RULE, lists=4, watched=16, tasks_per_list=16, minutes_per_list=50 / 60, sessions=1, p=1.0,
                       in_flight_share=1e-4, crowd=crowd, quitters_fed=fed, runs=50, seed=3)
    assert (r.runs.places == 0).all() and (r.runs.paid == 0).all()
    if fed:
        assert (r.runs.outcome == 1).all() and (r.runs.used == D0).all() and (r.runs.quit_fed == D0).all()
        assert (r.runs.quits == 3).all()
    else:
        assert (r.runs.outcome == 0).all() and (r.runs.used == 0).all() and (r.runs.quit_fed == 0).all()
        assert (r.runs.quits >= 3).all()
        assert np.isnan(r.runs.fixed_wall).all()  # the fixed design never completes with this crowd either


def test_accounting_with_a_bursty_crowd() -> None:
    """The default crowd: every paid judgement is used, unfed or cut; fed quitters' outcomes are the difference."""
    for fed in (False, True):
        r = simulate_crowd(RULE, lists=20, watched=11, minutes_per_list=2, arrivals_per_hour=45, sessions=2, p=0.6,
                           crowd=DEFAULT_SHAPE, quitters_fed=fed, patience=300, runs=300, seed=4)
        runs = r.runs
        assert (runs.paid + runs.quit_fed == runs.used + runs.unfed + runs.cut).all()
        assert runs.quits.mean() > 0 and (runs.places <= 20).all()
        assert (runs.quit_fed > 0).any() == fed


def test_patience_helps_a_burst() -> None:
    """With the default crowd's launch burst, a waitlist fills more places and decides more often on a hard
    comparison (p = 0.6, 20 lists of 11) than turning arrivals away."""
    kw = {"lists": 20, "watched": 11, "minutes_per_list": 2, "arrivals_per_hour": 20, "sessions": 1, "p": 0.6,
          "crowd": DEFAULT_SHAPE, "runs": 400, "seed": 5}
    lost, wait = simulate_crowd(RULE, **kw), simulate_crowd(RULE, patience=3600, **kw)
    assert wait.decided_share > lost.decided_share
    assert wait.runs.turned_away.mean() < lost.runs.turned_away.mean()


def test_a_task_longer_than_the_lease_is_a_pause_settled_a_lease_later(tmp_path: Path) -> None:
    """Lists of 10 (W = 1: one session at a time), p = 1, three participants at 0 on a waitlist, tasks of 10 s (the
    study's pace: scale 1), the first one's 5th task 1000 s, the lease 600 s. By hand: P0 answers 4 tasks (40 s),
    pauses, is settled at 640 s (4 outcomes fed, paid); P1 takes the list at 640 s and ends at 740 s (n = 14); P2
    starts at 740 s and ends at 840 s, deciding at n = 17. Places 3 (the pauser paid), judgements paid 30."""
    rows = [{"arrived": 0, "seconds_per_task": [10, 10, 10, 10, 1000, 10, 10, 10, 10, 10]}] + \
        [{"arrived": 0, "seconds_per_task": [10] * 10}] * 2
    crowd = _crowd(tmp_path, rows)
    r = simulate_crowd(RULE, lists=3, watched=10, tasks_per_list=10, minutes_per_list=100 / 60, sessions=1, p=1.0,
                       in_flight_share=1e-4, crowd=crowd, patience=3600, lease_seconds=600, resample=False, runs=5,
                       seed=1)
    assert (r.runs.outcome == 1).all() and (r.runs.used == D0).all()
    assert (r.runs.places == 3).all() and (r.runs.paid == 30).all() and (r.runs.pauses == 1).all()
    assert (r.runs.quits == 0).all() and (r.runs.quit_fed == 0).all()
    np.testing.assert_allclose(r.runs.wall, 840 / 3600)
    # the same crowd without a lease to pause past: P0's session is 1090 s, fed at its end (n = 10); P1 then
    # decides at 1190 s with 2 places
    r = simulate_crowd(RULE, lists=3, watched=10, tasks_per_list=10, minutes_per_list=100 / 60, sessions=1, p=1.0,
                       in_flight_share=1e-4, crowd=crowd, patience=3600, resample=False, runs=5, seed=1)
    assert (r.runs.places == 2).all() and (r.runs.pauses == 0).all()
    np.testing.assert_allclose(r.runs.wall, 1190 / 3600)


def test_drawn_pausers_are_paid_and_every_judgement_is_accounted_for() -> None:
    """The default crowd with 30 % pausers: a pauser is a paid place whose unanswered rest is closed for them (cut);
    paid + a quitter's fed outcomes = used + unfed + cut in every run, and pausers cost places."""
    common = dict(lists=20, watched=11, tasks_per_list=11, minutes_per_list=4, arrivals_per_hour=45, sessions=3,
                  p=0.6, crowd=DEFAULT_SHAPE, patience=300, lease_seconds=600, runs=300, seed=4)
    r = simulate_crowd(RULE, pausers=0.3, **common)
    runs = r.runs
    assert (runs.paid + runs.quit_fed == runs.used + runs.unfed + runs.cut).all()
    assert runs.pauses.mean() > 0 and (runs.places <= runs.paid).all()
    assert "pausers:0.3" in r.signature()
    none = simulate_crowd(RULE, pausers=0.0, **common)
    assert runs.places.mean() > none.runs.places.mean()
    with pytest.raises(ValueError, match="pausers is a share"):
        simulate_crowd(RULE, pausers=1.5, **common)
