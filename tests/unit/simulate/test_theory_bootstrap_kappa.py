"""Closed forms and the bootstrap against independent implementations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import bootstrap

from humeval.simulate._bootstrap import bootstrap_mean_ci
from humeval.simulate.theory import expected_difficulty, kl_half, wald_bound


def test_expected_difficulty_monte_carlo() -> None:
    rng = np.random.default_rng(0)
    for mu, var in [(0.25, 0.1), (0.9, 0.3), (-0.5, 1.0)]:
        mc = np.clip(rng.normal(mu, np.sqrt(var), 2_000_000), -1, 1).mean()
        assert expected_difficulty(mu, var) == pytest.approx(mc, abs=2e-3)


def test_expected_difficulty_against_scipy_quadrature() -> None:
    # E[clip(X, -1, 1)] integrated numerically with SciPy's normal density, far tails included
    from scipy.integrate import quad
    from scipy.stats import norm

    for mu, var in [(0.25, 0.1), (0.9, 0.3), (-0.5, 1.0), (3.0, 0.01), (-6.0, 4.0), (0.0, 1e-6)]:
        s = np.sqrt(var)
        inner = quad(lambda x, m=mu, sd=s: x * norm.pdf(x, m, sd), -1, 1, points=[mu] if -1 < mu < 1 else None)[0]
        ref = norm.sf(1, mu, s) - norm.cdf(-1, mu, s) + inner
        assert expected_difficulty(mu, var) == pytest.approx(ref, abs=1e-10)


def test_wald_numbers() -> None:
    assert [round(wald_bound(0.001, (0.9 * m + 1) / 2)) for m in (0.25, 0.125, 0.0625)] == [271, 1089, 4364]
    assert kl_half(0.5) == 0.0


def test_bootstrap_against_scipy() -> None:
    rng = np.random.default_rng(1)
    x = rng.exponential(100, 400)
    lo, hi = bootstrap_mean_ci(x, np.random.default_rng(2), resamples=20000)
    ref = bootstrap((x,), np.mean, confidence_level=0.99, method="percentile", n_resamples=20000, random_state=3)
    assert lo == pytest.approx(ref.confidence_interval.low, rel=0.01)
    assert hi == pytest.approx(ref.confidence_interval.high, rel=0.01)
