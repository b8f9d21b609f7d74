"""Goal simulation (reduced forms of the docs/stopping.md runs): validity and the adaptive saving."""

from __future__ import annotations

import pytest
from scipy.stats import binom

from humeval.errors import HumevalError
from humeval.simulate.multi import profile_scores, simulate_goal


def _bound(runs: int, delta: float) -> float:
    return binom.ppf(0.999, runs, delta) / runs


@pytest.mark.parametrize("goal", ["best", "ranking"])
def test_null_never_decides_more_often_than_delta(goal: str) -> None:
    r = simulate_goal(4, "equal", goal, "uniform", delta=0.1, iterations=300, max_judgements=20000, seed=5)
    assert r.wrong_pair_share <= _bound(300, 0.1)
    assert r.wrong_share <= r.wrong_pair_share


def test_adaptive_best_is_cheaper_and_right() -> None:
    a = simulate_goal(8, "close-leaders", "best", "adaptive", iterations=150, seed=2)
    u = simulate_goal(8, "close-leaders", "best", "uniform", iterations=150, seed=2)
    assert a.decided_share == u.decided_share == 1.0
    assert a.wrong_share <= _bound(150, 0.05) and u.wrong_share <= _bound(150, 0.05)
    assert a.mean_effort < 0.5 * u.mean_effort


def test_top_k_decides() -> None:
    r = simulate_goal(6, "long-tail", "top-k", "adaptive", top=2, iterations=100, seed=1)
    assert r.decided_share == 1.0 and r.wrong_share <= _bound(100, 0.05)
    assert "goal:top-k-2" in r.signature


def test_profiles_and_errors() -> None:
    assert profile_scores("long-tail", 3).tolist() == pytest.approx([0.0, -0.6931, -1.0986], abs=1e-4)
    assert profile_scores("close-leaders", 2).tolist() == [0.25, 0.0]
    with pytest.raises(HumevalError, match="Did you mean 'long-tail'"):
        profile_scores("longtail", 4)
    with pytest.raises(HumevalError, match="pair policy"):
        simulate_goal(4, "equal", "best", "lucb")
