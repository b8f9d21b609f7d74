"""Correlations against scipy and pingouin; CIs against their formulas."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from humeval.errors import DataError
from humeval.stats import kendall, pearson, spearman


def _xy(seed: int, ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=60)
    y = 0.5 * x + rng.normal(size=60)
    return (np.round(x), np.round(y)) if ties else (x, y)


@pytest.mark.parametrize("seed", range(3))
def test_pearson_matches_scipy_with_fisher_ci(seed: int) -> None:
    x, y = _xy(seed)
    res = pearson(x, y)
    ref = sps.pearsonr(x, y)
    ci = ref.confidence_interval(0.95)
    assert (res.estimate, res.p_value) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-10)
    assert res.ci == pytest.approx((ci.low, ci.high), rel=1e-10)


@pytest.mark.parametrize("ties", [False, True])
def test_spearman_matches_scipy_and_bonett_wright_ci(ties: bool) -> None:
    x, y = _xy(4, ties)
    res = spearman(x, y)
    ref = sps.spearmanr(x, y)
    assert (res.estimate, res.p_value) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-10)
    se = np.sqrt((1 + ref.statistic**2 / 2) / (x.size - 3))
    z = np.arctanh(ref.statistic)
    assert res.ci == pytest.approx(
        (np.tanh(z - 1.959963984540054 * se), np.tanh(z + 1.959963984540054 * se)), rel=1e-9
    )


@pytest.mark.parametrize("ties", [False, True])
def test_kendall_tau_b_matches_scipy_and_definition(ties: bool) -> None:
    x, y = _xy(5, ties)
    res = kendall(x, y)
    ref = sps.kendalltau(x, y)
    assert (res.estimate, res.p_value) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-12)
    sx, sy = np.sign(x[:, None] - x[None, :]), np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(x.size, 1)
    tau_b = (sx * sy)[upper].sum() / np.sqrt((sx[upper] != 0).sum() * (sy[upper] != 0).sum())
    assert res.estimate == pytest.approx(tau_b, abs=1e-12)


def test_bootstrap_ci_seeded_and_covers() -> None:
    x, y = _xy(6)
    for fn in (pearson, spearman, kendall):
        a = fn(x, y, ci="bootstrap", n_boot=300, seed=2)
        assert a == fn(x, y, ci="bootstrap", n_boot=300, seed=2)
        assert a.ci_low < a.estimate < a.ci_high
        fisher = fn(x, y)
        assert abs(a.ci_low - fisher.ci_low) < 0.15 and abs(a.ci_high - fisher.ci_high) < 0.15


def test_perfect_and_degenerate_correlations() -> None:
    x = np.arange(10.0)
    assert spearman(x, x**3).estimate == pytest.approx(1.0)
    assert kendall(x, -x).estimate == pytest.approx(-1.0)
    with pytest.raises(DataError, match="y is constant \\(2 for all 10 values\\)"):
        pearson(x, np.full(10, 2.0))
    with pytest.raises(DataError, match="x has 10 values but y has 9"):
        spearman(x, x[:9])
    with pytest.raises(DataError, match="need at least 4"):
        pearson([1, 2, 3], [1, 2, 4])
    with pytest.raises(DataError, match="Did you mean 'fisher'"):
        pearson(x, x**2, ci="fischer")
