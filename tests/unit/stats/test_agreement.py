"""humeval.stats agreement: Fleiss' kappa, Krippendorff's alpha, ICC against their oracles."""

from __future__ import annotations

import warnings

import krippendorff  # GPL: test oracle only
import numpy as np
import pandas as pd
import pingouin as pg  # GPL: test oracle only
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from humeval.errors import DataError
from humeval.stats import Estimate, fleiss_kappa, icc, krippendorff_alpha

LEVELS = ["nominal", "ordinal", "interval", "ratio"]


# ------------------------------------------------------------------ Fleiss


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_matches_statsmodels_on_random_tables(seed: int) -> None:
    rng = np.random.default_rng(seed)
    raters, cats = int(rng.integers(2, 8)), int(rng.integers(2, 6))
    table = np.stack([rng.multinomial(raters, rng.dirichlet(np.ones(cats))) for _ in range(40)])
    assert fleiss_kappa(table, n_boot=0).estimate == pytest.approx(sm_fleiss(table), abs=1e-12)


def test_fleiss_bootstrap_is_seeded_and_covers_estimate() -> None:
    rng = np.random.default_rng(3)
    table = np.stack([rng.multinomial(5, [0.6, 0.3, 0.1]) for _ in range(60)])
    a = fleiss_kappa(table, n_boot=300, seed=11)
    b = fleiss_kappa(table, n_boot=300, seed=11)
    c = fleiss_kappa(table, n_boot=300, seed=12)
    assert a == b
    assert a.ci != c.ci
    assert a.ci_low < a.estimate < a.ci_high
    assert a.extra["n_boot_valid"] == 300


def test_fleiss_rejects_unequal_rows_with_the_row() -> None:
    with pytest.raises(DataError, match=r"row 1 sums to 4 .* row 0 sums to 3"):
        fleiss_kappa([[1, 2], [2, 2]])


def test_fleiss_rejects_no_variation_and_one_rater() -> None:
    with pytest.raises(DataError, match="undefined"):
        fleiss_kappa([[3, 0], [3, 0]])
    with pytest.raises(DataError, match="at least 2"):
        fleiss_kappa([[1, 0], [0, 1]])
    with pytest.raises(DataError, match="non-negative integers"):
        fleiss_kappa([[1.5, 1.5], [2, 1]])


# ------------------------------------------------------------------ Krippendorff


def _random_ratings(seed: int, continuous: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raters, items = int(rng.integers(2, 7)), int(rng.integers(5, 60))
    truth = rng.normal(size=items) * 2
    data = truth + rng.normal(size=(raters, items))
    data = np.abs(data) * 10 if continuous else np.clip(np.round(data + 3), 1, 6)
    data[rng.random(data.shape) < 0.25] = np.nan
    return data


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", range(6))
def test_alpha_matches_krippendorff_package(level: str, seed: int) -> None:
    data = _random_ratings(seed, continuous=seed % 2 == 1 and level != "nominal")
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level, n_boot=0).estimate == pytest.approx(expected, abs=1e-9)


def _ratio_alpha_by_definition(data: np.ndarray) -> float:
    """Krippendorff's definition summed over all value pairs (O(n^2) memory, test only)."""
    def delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return ((a - b) / (a + b)) ** 2

    values = data[~np.isnan(data)]
    n = values.size
    within = 0.0
    for col in data.T:
        v = col[~np.isnan(col)]
        within += delta(v[:, None], v[None, :]).sum() / (v.size - 1)
    expected = delta(values[:, None], values[None, :]).sum()
    return 1.0 - (n - 1) * within / expected


def test_alpha_ratio_with_many_distinct_values_uses_blocks() -> None:
    # 3000 distinct values: several 1024-value blocks; the krippendorff package would
    # allocate a (units x V x V) array here (~100 GB), so the oracle is the definition itself.
    rng = np.random.default_rng(5)
    data = np.abs(rng.normal(size=(3, 1000))) + rng.random(1000) + 0.01
    res = krippendorff_alpha(data, "ratio", n_boot=20, seed=0)
    assert res.estimate == pytest.approx(_ratio_alpha_by_definition(data), abs=1e-9)
    assert res.extra["n_boot_valid"] == 20


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.integers(1, 7), min_size=2, max_size=25).filter(lambda v: len(set(v)) > 1),
    raters=st.integers(2, 5),
    level=st.sampled_from(LEVELS),
)
def test_alpha_is_one_under_perfect_agreement(values: list[int], raters: int, level: str) -> None:
    data = np.tile(np.array(values, float), (raters, 1))
    assert krippendorff_alpha(data, level, n_boot=0).estimate == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), level=st.sampled_from(["interval", "ordinal", "ratio"]))
def test_alpha_invariant_under_item_permutation_and_rater_order(seed: int, level: str) -> None:
    data = _random_ratings(seed, continuous=True)
    rng = np.random.default_rng(seed)
    shuffled = data[rng.permutation(data.shape[0])][:, rng.permutation(data.shape[1])]
    try:
        base = krippendorff_alpha(data, level, n_boot=0).estimate
    except DataError:
        return
    assert krippendorff_alpha(shuffled, level, n_boot=0).estimate == pytest.approx(base, abs=1e-9)


def test_alpha_interval_invariant_under_affine_maps_and_ordinal_under_monotone() -> None:
    data = _random_ratings(7, continuous=True)
    interval = krippendorff_alpha(data, "interval", n_boot=0).estimate
    assert krippendorff_alpha(3 * data - 7, "interval", n_boot=0).estimate == pytest.approx(
        interval, abs=1e-10
    )
    ordinal = krippendorff_alpha(data, "ordinal", n_boot=0).estimate
    assert krippendorff_alpha(np.exp(data / 10), "ordinal", n_boot=0).estimate == pytest.approx(
        ordinal, abs=1e-10
    )


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_bootstrap_ci_is_seeded_and_brackets(level: str) -> None:
    data = _random_ratings(2, continuous=level != "nominal")
    a = krippendorff_alpha(data, level, n_boot=200, seed=4)
    assert a == krippendorff_alpha(data, level, n_boot=200, seed=4)
    assert a.ci_low <= a.estimate <= a.ci_high
    assert a.ci_high - a.ci_low > 0
    assert a.extra["n_boot"] == 200 and a.extra["seed"] == 4


def test_alpha_bootstrap_ci_agrees_with_a_resampling_loop() -> None:
    """The weight-matrix bootstrap has the distribution of resampling items with replacement."""
    data = _random_ratings(9, continuous=True)
    data = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    fast = krippendorff_alpha(data, "interval", n_boot=2000, seed=1)
    rng = np.random.default_rng(99)
    loop = []
    for _ in range(2000):
        sample = data[:, rng.integers(0, data.shape[1], data.shape[1])]
        loop.append(krippendorff.alpha(reliability_data=sample, level_of_measurement="interval"))
    lo, hi = np.percentile(loop, [2.5, 97.5])
    assert fast.ci_low == pytest.approx(lo, abs=0.04)
    assert fast.ci_high == pytest.approx(hi, abs=0.04)


def test_alpha_degenerate_inputs_raise_with_the_bad_value() -> None:
    with pytest.raises(DataError, match="1 participant row"):
        krippendorff_alpha([[1, 2, 3]], "interval")
    with pytest.raises(DataError, match="no item was judged by two or more participants"):
        krippendorff_alpha([[1, np.nan], [np.nan, 2]], "interval")
    with pytest.raises(DataError, match="no item was judged by two or more"):
        krippendorff_alpha(np.full((3, 4), np.nan), "nominal")
    with pytest.raises(DataError, match="every pairable value is 4"):
        krippendorff_alpha([[4, 4], [4, 4]], "nominal")
    with pytest.raises(DataError, match="negative value -1"):
        krippendorff_alpha([[1, -1], [2, 3]], "ratio")
    with pytest.raises(DataError, match="Did you mean 'ordinal'"):
        krippendorff_alpha([[1, 2], [2, 3]], "ordnal")


def test_alpha_drops_unpairable_items_and_reports_counts() -> None:
    data = np.array([[1, 2, 3, 5.0], [1, 2, 4, np.nan]])
    res = krippendorff_alpha(data, "interval", n_boot=0)
    assert res.n == 3 and res.extra["n_values"] == 6
    assert res.estimate == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    )


# ------------------------------------------------------------------ ICC


def _pingouin_icc(x: np.ndarray) -> pd.DataFrame:
    n, k = x.shape
    long = pd.DataFrame(
        {"item": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n), "y": x.ravel()}
    )
    with warnings.catch_warnings():  # the oracle's own pandas deprecation warnings
        warnings.simplefilter("ignore")
        return pg.intraclass_corr(long, targets="item", raters="rater", ratings="y").set_index(
            "Type"
        )


PG_TYPES = {
    "1,1": "ICC1",
    "2,1": "ICC2",
    "3,1": "ICC3",
    "1,k": "ICC1k",
    "2,k": "ICC2k",
    "3,k": "ICC3k",
}


@pytest.mark.parametrize("seed", range(4))
def test_icc_matches_pingouin_all_forms(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(5, 40)), int(rng.integers(2, 6))
    x = (
        rng.normal(size=(n, 1)) * rng.uniform(0.2, 2)
        + rng.normal(size=(1, k)) * 0.5
        + rng.normal(size=(n, k))
    )
    ref = _pingouin_icc(x)
    ref.index = [PG_TYPES_REV.get(i, i) for i in ref.index]
    for form in PG_TYPES:
        res = icc(x, form)
        row = ref.loc[form]
        assert res.estimate == pytest.approx(row["ICC"], abs=1e-9)
        assert res.extra["F"] == pytest.approx(row["F"], rel=1e-9)
        assert res.p_value == pytest.approx(row["pval"], rel=1e-6, abs=1e-15)
        assert res.ci == pytest.approx(
            tuple(row["CI95%"] if "CI95%" in row else row["CI95"]), abs=5e-3 + 1e-9
        )


PG_TYPES_REV = {
    "ICC(1,1)": "1,1",
    "ICC(A,1)": "2,1",
    "ICC(C,1)": "3,1",
    "ICC(1,k)": "1,k",
    "ICC(A,k)": "2,k",
    "ICC(C,k)": "3,k",
    "ICC1": "1,1",
    "ICC2": "2,1",
    "ICC3": "3,1",
    "ICC1k": "1,k",
    "ICC2k": "2,k",
    "ICC3k": "3,k",
}


def test_icc_ci_equals_mcgraw_wong_formulas_exactly() -> None:
    """CI against McGraw & Wong (1996) Table 7, recomputed here independently from the ANOVA."""
    from scipy.stats import f as fdist

    rng = np.random.default_rng(8)
    x = rng.normal(size=(25, 1)) + rng.normal(size=(25, 3))
    n, k = x.shape
    res = icc(x, "3,1")
    msr, mse = res.extra["ms_rows"], res.extra["ms_error"]
    f_obs = msr / mse
    fl = f_obs / fdist.ppf(0.975, n - 1, (n - 1) * (k - 1))
    fu = f_obs * fdist.ppf(0.975, (n - 1) * (k - 1), n - 1)
    assert res.ci_low == pytest.approx((fl - 1) / (fl + k - 1), abs=1e-12)
    assert res.ci_high == pytest.approx((fu - 1) / (fu + k - 1), abs=1e-12)
    resk = icc(x, "3,k")
    assert resk.ci == pytest.approx((1 - 1 / fl, 1 - 1 / fu), abs=1e-12)


def test_icc_unbalanced_one_way_matches_anova_by_hand() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(30, 1)) + rng.normal(size=(30, 5))
    x[rng.random(x.shape) < 0.3] = np.nan
    x[:, :2] = np.where(np.isnan(x[:, :2]), 0.5, x[:, :2])  # at least 2 per item
    groups = [row[~np.isnan(row)] for row in x]
    grand = np.concatenate(groups).mean()
    total = sum(g.size for g in groups)
    msb = sum(g.size * (g.mean() - grand) ** 2 for g in groups) / (len(groups) - 1)
    msw = sum(((g - g.mean()) ** 2).sum() for g in groups) / (total - len(groups))
    k0 = (total - sum(g.size**2 for g in groups) / total) / (len(groups) - 1)
    assert icc(x, "1,k").estimate == pytest.approx((msb - msw) / msb, abs=1e-12)
    assert icc(x, "1,1").estimate == pytest.approx((msb - msw) / (msb + (k0 - 1) * msw), abs=1e-12)
    with pytest.raises(DataError, match="missing value"):
        icc(x, "2,1")


def test_icc_degenerate_inputs() -> None:
    with pytest.raises(DataError, match="all 6 scores equal 3"):
        icc(np.full((3, 2), 3.0), "1,1")
    with pytest.raises(DataError, match="differ only between participants"):
        icc(np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]), "3,1")
    with pytest.raises(DataError, match="at least 2 items"):
        icc([[1.0, 2.0]], "1,1")
    with pytest.raises(DataError, match="item \\(row\\) 1 has 1 judgement"):
        icc([[1.0, 2.0], [3.0, np.nan], [1.0, 1.0]], "1,k")
    with pytest.raises(DataError, match="Did you mean '2,k'"):
        icc([[1.0, 2.0], [3.0, 4.0]], "2,K")
    with pytest.raises(DataError, match="expected a 2-d array"):
        icc([1.0, 2.0, 3.0], "1,1")


def test_icc_perfect_agreement_is_one_with_documented_p_and_ci() -> None:
    x = np.array([[1, 1, 1], [2, 2, 2], [5, 5, 5.0]])
    for form in ("1,1", "1,k", "3,1", "3,k", "2,1"):
        res = icc(x, form)
        assert isinstance(res, Estimate)
        assert res.estimate == pytest.approx(1.0, abs=1e-12)
        assert res.p_value == 0.0 and np.isnan(res.ci_low)
    # consistent but offset participants: ICC(3,1) = 1, ICC(2,1) (absolute agreement) below 1
    offset = x + np.array([0.0, 1.0, 2.0])
    assert icc(offset, "3,1").estimate == pytest.approx(1.0)
    assert icc(offset, "2,1").estimate < 1.0


def test_icc_identical_item_means_raise() -> None:
    with pytest.raises(DataError, match=r"same mean score \(2\), so MS_R = 0"):
        icc(np.array([[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]]), "1,k")
