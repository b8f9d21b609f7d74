"""Exact operating characteristics, the normal mixture, the betting test and the tuning, against independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from humeval.errors import HumevalError
from humeval.stopping import (
    BetaMixtureRule,
    NormalMixtureRule,
    get_rule,
    prior_strength_for,
    rho_for,
)
from humeval.stopping.betting import betting_paths
from humeval.stopping.exact import operating_characteristics, wald_bound
from humeval.stopping.registry import rule_problems
from humeval.stopping.tuning import recommend_tuning, rule_efforts, tuned_mixture


def test_exact_against_a_hand_computed_boundary() -> None:
    # decide A at S >= 2 from n = 2 on (B at n - S >= 2); horizon 3, p = 0.6.
    # n = 2: AA (0.36) decides A, BB (0.16) decides B; AB/BA (0.48) go on.
    # n = 3 from S = 1: A with p (0.48 * 0.6 = 0.288), B with 1 - p (0.192).
    oc = operating_characteristics(np.array([2, 2, 2]), 0.6)
    assert oc.decide_a == pytest.approx(0.36 + 0.288, abs=1e-15)
    assert oc.decide_b == pytest.approx(0.16 + 0.192, abs=1e-15)
    assert oc.undecided == pytest.approx(0.0, abs=1e-15)
    # E[min(tau, 3)] = 1 * P(tau >= 1) + P(tau >= 2) + P(tau >= 3) = 1 + 1 + 0.48
    assert oc.expected_n == pytest.approx(2.48, abs=1e-15)


def test_exact_against_the_binomial_for_a_single_look() -> None:
    # a boundary that can only decide at n = 50: P(A) = P(Bin(50, p) >= 30)
    a = np.full(50, 51)
    a[-1] = 30
    oc = operating_characteristics(a, 0.55)
    assert oc.decide_a == pytest.approx(binom.sf(29, 50, 0.55), rel=1e-12)
    assert oc.decide_b == pytest.approx(binom.cdf(20, 50, 0.55), rel=1e-12)
    assert oc.expected_n == pytest.approx(50.0)


def test_exact_against_monte_carlo() -> None:
    rule = BetaMixtureRule(0.05)
    p, runs, horizon = 0.6, 20000, 400
    oc = operating_characteristics(rule.boundary(horizon), p)
    rng = np.random.default_rng(5)
    paths = np.cumsum(rng.random((runs, horizon)) < p, axis=1)
    dec = rule.decide_paths(paths)
    n = np.where(dec.outcome != 0, dec.n, horizon)  # min(tau, horizon)
    assert abs(n.mean() - oc.expected_n) < 4 * n.std() / math.sqrt(runs)
    for share, exact in ((np.mean(dec.outcome == -1), oc.decide_b), (np.mean(dec.outcome == 0), oc.undecided)):
        assert abs(share - exact) < 4 * math.sqrt(exact * (1 - exact) / runs) + 1e-4


@pytest.mark.parametrize("delta", [0.05, 0.01])
def test_anytime_rules_keep_delta_under_the_null(delta: float) -> None:
    for rule in (BetaMixtureRule(delta), NormalMixtureRule(delta), tuned_mixture(delta, 5000)):
        oc = operating_characteristics(rule.boundary(20000), 0.5)
        assert oc.decide_a + oc.decide_b <= delta, rule
    hoeffding = get_rule("hoeffding", delta)
    oc = operating_characteristics(hoeffding.boundary(20000), 0.5)
    assert oc.decide_a + oc.decide_b > 3 * delta  # the fixed-n bound watched continuously is not valid


def test_normal_mixture_boundary_is_where_the_martingale_crosses() -> None:
    rule = NormalMixtureRule(0.05, rho=30.0)
    n = np.arange(1, 3001)
    a = rule.a_min(n)
    for k in (10, 100, 1000, 3000):
        s = int(a[k - 1])
        if s <= k:
            assert rule.statistic(k, s) >= math.log(20) - 1e-9
            if s - 1 > k / 2:
                assert rule.statistic(k, s - 1) < math.log(20)


def test_tunings_minimise_the_boundary_where_asked() -> None:
    for n in (100, 1000, 10000):
        a = prior_strength_for(n, 0.05)
        def at(strength: float, n: int = n) -> int:
            return int(BetaMixtureRule(0.05, strength).a_min(np.array([n]))[0])

        assert at(a) <= min(at(a / 3), at(a * 3))
        rho = rho_for(n, 0.05)
        def r(value: float, n: int = n) -> int:
            return int(NormalMixtureRule(0.05, value).a_min(np.array([n]))[0])

        assert r(rho) <= min(r(rho / 3), r(rho * 3))
    assert rule_problems("hoeffding", 0.05, None, tuned_for=500) == [
        "stopping.tuned_for: rule 'hoeffding' has no tuning; it applies to anytime, mixture, normal-mixture"]
    assert get_rule("anytime", 0.05, tuned_for=1000).prior_strength == pytest.approx(prior_strength_for(1000, 0.05))
    with pytest.raises(HumevalError):
        NormalMixtureRule(0.05, rho=-1.0)


@pytest.mark.parametrize("mu", [0.05, 0.2, 0.4])
def test_recommended_tuning_is_within_three_percent_of_the_best_rule(mu: float) -> None:
    p = (1 + mu) / 2
    t = recommend_tuning(p, 0.05)
    best = min(r.expected_n for r in rule_efforts(p, 0.05))
    assert t.expected_n <= 1.03 * best
    assert t.expected_n <= t.default_expected_n
    assert t.expected_n >= wald_bound(0.05, p)


def test_betting_is_valid_and_decides_the_right_way() -> None:
    rng = np.random.default_rng(11)
    null = betting_paths((rng.random((400, 3000)) < 0.5).astype(np.int8), 0.05)
    share = np.mean(null.outcome != 0)
    assert share <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400)
    alt = betting_paths((rng.random((400, 3000)) < 0.7).astype(np.int8), 0.05)
    assert np.mean(alt.outcome == 1) > 0.98 and np.all(alt.outcome != -1)
    # a path of all A: the wealth K+ doubles with bets capped at 1 (x 1.5 per outcome), so it crosses 2/delta = 40 at n = 10
    one = betting_paths(np.ones((1, 50), dtype=np.int8), 0.05)
    assert one.outcome[0] == 1 and 5 <= one.n[0] <= 12


def test_normal_mixture_matches_quadrature() -> None:
    from scipy.integrate import quad
    from scipy.stats import norm

    rule = NormalMixtureRule(0.05, rho=12.0)
    for n, s in ((40, 28), (400, 230), (3000, 1600)):
        z, v = s - n / 2, n / 4
        value = quad(lambda lam, z=z, v=v: math.exp(lam * z - lam * lam * v / 2) * norm.pdf(lam, scale=1 / math.sqrt(12.0)),
                     -3, 3, limit=400, points=[z / v])[0]
        assert rule.statistic(n, s) == pytest.approx(math.log(value), rel=1e-8)
