"""Goals over K systems: closure, display rank sets, goal status on hand-built direct relations, and the live rule."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betaln

from humeval.errors import HumevalError
from humeval.stopping import BetaMixtureRule
from humeval.stopping.goals import (
    GoalRule,
    check_goal,
    closure,
    goal_status,
    open_pairs,
    pair_delta,
    rank_sets,
)


def _rel(k: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    r = np.zeros((k, k), dtype=bool)
    for i, j in pairs:
        r[i, j] = True
    return r


def test_closure_and_rank_sets_by_hand() -> None:
    # 0 > 1, 1 > 2, 3 > 2: closure adds 0 > 2; ranks: 0 in [1, 2], 1 in [2, 3], 2 = 4, 3 in [1, 3]
    c = closure(_rel(4, [(0, 1), (1, 2), (3, 2)]))
    assert c[0, 2] and not c[0, 3] and not c[3, 0]
    low, high = rank_sets(c)
    assert low.tolist() == [1, 2, 4, 1]
    assert high.tolist() == [2, 3, 4, 3]
    # a chain of five closes to the full order
    chain = closure(_rel(5, [(i, i + 1) for i in range(4)]))
    assert chain.sum() == 10 and np.triu(chain, 1).sum() == 10


def test_goal_status_by_hand() -> None:
    # direct 0 > 1, 1 > 2, 3 > 2: 0 and 3 never beaten; nobody beat everyone
    r = _rel(4, [(0, 1), (1, 2), (3, 2)])
    decided, cont = goal_status(r, "best")
    assert not decided and cont.tolist() == [True, False, False, True]
    # 0 beat 1 and 3 directly, 2 only through 1: the only one left, yet not decided (the closure
    # would announce 0); the one pair still open is 0 vs 2
    r = _rel(4, [(0, 1), (1, 2), (0, 3)])
    decided, cont = goal_status(r, "best")
    assert not decided and cont.tolist() == [True, False, False, False]
    assert {(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(open_pairs(r, "best"))), strict=True)} == {(0, 2)}
    decided, cont = goal_status(_rel(4, [(0, 1), (0, 2), (0, 3)]), "best")
    assert decided and cont.tolist() == [True, False, False, False]
    # top-2 of 4: 0 and 3 each beat 1 and 2 directly -> in; 1 and 2 each beaten by two -> out
    top2 = _rel(4, [(0, 1), (0, 2), (3, 1), (3, 2)])
    decided, cont = goal_status(top2, "top-k", 2)
    assert decided and not cont.any() and not open_pairs(top2, "top-k", 2).any()
    decided, _ = goal_status(top2, "ranking")
    assert not decided  # 0 vs 3 and 1 vs 2 unresolved
    # vectorised over runs
    both = np.stack([top2, np.zeros((4, 4), dtype=bool)])
    decided, cont = goal_status(both, "top-k", 2)
    assert decided.tolist() == [True, False] and cont[1].all()


def test_rule_resolves_where_the_mixture_crosses_ln_one_over_delta() -> None:
    k, delta, a = 3, 0.05, 20.0
    rule = GoalRule(k, "best", delta, prior_strength=a)
    dp = delta / 3
    assert rule.pair_delta == pytest.approx(dp) == pair_delta(delta, k)
    # independent reference: ln M_n = n ln 2 + ln B(a + S, a + n - S) - ln B(a, a) >= ln(1/dp)
    n = np.arange(1, 400)
    first = int(n[n * np.log(2) + betaln(a + n, a) - betaln(a, a) >= np.log(1 / dp)][0])
    d = None
    for t in range(1, first + 1):
        d = rule.update(0, 1, 0)
        assert bool(d.resolved[0, 1]) == (t >= first)
    assert d is not None and d.events[0] == {"kind": "pair_resolved", "above": 0, "below": 1, "judgements": first, "wins": first}
    assert {"kind": "eliminated", "system": 1, "rank_low": 2, "rank_high": 3} in d.events
    assert not d.decided and d.contention == (0, 2)
    for _ in range(first):
        d = rule.update(2, 0, 0)
    assert d.decided and d.answer == (0,)
    assert any(e["kind"] == "decided" for e in d.events)
    # sticky: later contrary judgements change nothing
    for _ in range(5 * first):
        d = rule.update(1, 0, 1)
    assert d.answer == (0,) and d.resolved[0, 1] and not d.resolved[1, 0]


def test_two_systems_match_the_pair_rule() -> None:
    rng = np.random.default_rng(3)
    x = (rng.random(3000) < 0.56).astype(int)
    pair = BetaMixtureRule(0.05)
    goal = GoalRule(2, "best", 0.05)
    for t, v in enumerate(x, start=1):
        dp = pair.update(v)
        dg = goal.update(0, 1, 0 if v else 1)
        assert dp.decided == dg.decided, t
        if dp.decided:
            assert dg.answer == ((0,) if dp.outcome == "A" else (1,))
            break


def test_bad_goals() -> None:
    with pytest.raises(HumevalError, match="Did you mean 'top-k'"):
        check_goal("topk", 4)
    with pytest.raises(HumevalError, match="1 <= top < K = 4"):
        check_goal("top-k", 4, 4)
    with pytest.raises(HumevalError, match="goal 'pair' compares two systems"):
        check_goal("pair", 3)
    with pytest.raises(HumevalError, match="names one of them"):
        GoalRule(3).update(0, 1, 2)


def test_win_rate_cs_ends_where_the_mixture_crosses() -> None:
    from humeval.stopping.goals import win_rate_cs

    a, delta, s, n = 20.0, 0.05, 60, 100

    def log_m(p0: float) -> float:  # independent: the mixture over the likelihood under p0
        return float(betaln(a + s, a + n - s) - betaln(a, a) - s * np.log(p0) - (n - s) * np.log(1 - p0))

    lo, hi = (float(x[0]) for x in win_rate_cs(np.array([s]), np.array([n]), delta))
    threshold = np.log(1 / delta)
    assert log_m(lo - 0.001) >= threshold > log_m(lo + 0.001)
    assert log_m(hi + 0.001) >= threshold > log_m(hi - 0.001)
    assert lo < 0.5 < hi  # 60/100 at Beta(20, 20): not resolved at delta 0.05
    # no data: the whole interval
    lo0, hi0 = win_rate_cs(np.array([0]), np.array([0]), delta)
    assert lo0[0] == 0.0 and hi0[0] == 1.0
