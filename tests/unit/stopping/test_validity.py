"""Null error rates: anytime-valid rules stay below delta, the paper's rule does not."""

from __future__ import annotations

import pytest
from scipy.stats import binom

from humeval.simulate import SimulationConfig, simulate


@pytest.mark.parametrize("delta", [0.05, 0.1])
def test_anytime_rules_control_the_null(delta: float) -> None:
    iterations = 3000
    cfg = SimulationConfig(mu=0.0, n_requests=3000, iterations=iterations, delta=delta, capability=(0.6, 1.0))
    rep = simulate(cfg, ["one", "max3"], ["anytime", "hoeffding-union", "hoeffding"], seed=101)
    # one-sided binomial tolerance: a rate with true value delta exceeds this w.p. 0.001
    tol = binom.ppf(0.999, iterations, delta) / iterations
    for st in ("one", "max3"):
        assert rep.result(st, "anytime").wrong_share <= tol
        assert rep.result(st, "hoeffding-union").wrong_share <= tol
        # the paper's rule under continuous monitoring: far above delta
        assert rep.result(st, "hoeffding").wrong_share > 3 * delta


def test_anytime_controls_wrong_side_for_weak_effects() -> None:
    # a small effect for B: deciding A is the wrong decision
    cfg = SimulationConfig(mu=-0.01, n_requests=2000, iterations=3000, delta=0.1)
    rep = simulate(cfg, ["one"], ["anytime"], seed=7)
    assert rep.result("one", "anytime").wrong_share <= binom.ppf(0.999, 3000, 0.1) / 3000
