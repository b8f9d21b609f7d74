"""Significance tests, corrections and effect sizes against scipy, statsmodels and pingouin."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pingouin as pg  # GPL: test oracle only
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from humeval.errors import DataError
from humeval.stats import (
    adjust_pvalues,
    anova_oneway,
    benjamini_hochberg,
    cohens_d,
    eta_squared,
    friedman,
    holm,
    kruskal_wallis,
    mann_whitney,
    paired_bootstrap,
    posthoc,
    rank_biserial,
    rm_anova,
    shapiro,
    ttest,
    wilcoxon,
)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():  # oracles' own deprecation warnings
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _groups(seed: int, k: int = 3, n: int = 20, ties: bool = False) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = [rng.normal(loc=i * 0.3, size=n + i) for i in range(k)]
    return [np.round(g * 2) for g in out] if ties else out


@pytest.mark.parametrize("seed", range(3))
def test_anova_and_eta_match_scipy_and_pingouin(seed: int) -> None:
    groups = _groups(seed)
    res = anova_oneway(*groups)
    ref = sps.f_oneway(*groups)
    assert res.estimate == pytest.approx(ref.statistic, rel=1e-10)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    long = pd.DataFrame(
        {"y": np.concatenate(groups), "g": np.repeat(range(3), [g.size for g in groups])}
    )
    aov = _quiet(pg.anova, data=long, dv="y", between="g", detailed=True)
    assert res.extra["eta_squared"] == pytest.approx(aov["np2"].iloc[0], abs=1e-9)
    assert eta_squared(groups).estimate == pytest.approx(res.extra["eta_squared"], abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_rm_anova_matches_pingouin(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = (
        rng.normal(size=(15, 1))
        + rng.normal(size=(15, 4)) * rng.uniform(0.5, 2, size=4)
        + [0, 0.2, 0.5, 0.1]
    )
    res = rm_anova(x)
    long = pd.DataFrame(
        {"y": x.ravel(), "item": np.repeat(range(15), 4), "cond": np.tile(range(4), 15)}
    )
    ref = _quiet(
        pg.rm_anova,
        data=long,
        dv="y",
        within="cond",
        subject="item",
        correction=True,
        effsize="np2",
    )
    row = ref.iloc[0]
    assert res.estimate == pytest.approx(row["F"], rel=1e-9)
    assert res.p_value == pytest.approx(row["p_unc"] if "p_unc" in row else row["p-unc"], rel=1e-9)
    assert res.extra["partial_eta_squared"] == pytest.approx(row["np2"], abs=1e-9)
    assert res.extra["epsilon_gg"] == pytest.approx(row["eps"], abs=1e-9)
    p_gg = row["p_GG_corr"] if "p_GG_corr" in row else row["p-GG-corr"]
    assert res.extra["p_gg"] == pytest.approx(p_gg, rel=1e-9)


@pytest.mark.parametrize("ties", [False, True])
def test_kruskal_and_friedman_match_scipy(ties: bool) -> None:
    groups = _groups(4, ties=ties)
    res = kruskal_wallis(*groups)
    ref = sps.kruskal(*groups)
    assert res.estimate == pytest.approx(ref.statistic, rel=1e-12)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(12, 4)) + [0, 0.4, 0.8, 0.2]
    if ties:
        x = np.round(x)
    fr = friedman(x)
    ref = sps.friedmanchisquare(*x.T)
    assert fr.estimate == pytest.approx(ref.statistic, rel=1e-12)
    assert fr.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    long = pd.DataFrame(
        {"y": x.ravel(), "item": np.repeat(range(12), 4), "cond": np.tile(range(4), 12)}
    )
    w = _quiet(pg.friedman, data=long, dv="y", within="cond", subject="item")["W"].iloc[0]
    assert fr.extra["kendall_w"] == pytest.approx(w, abs=1e-12)


def test_shapiro_matches_scipy_and_rejects_constant() -> None:
    x = np.random.default_rng(0).exponential(size=50)
    ref = sps.shapiro(x)
    res = shapiro(x)
    assert (res.estimate, res.p_value) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-12)
    assert res.p_value < 0.01  # exponential data are not normal
    with pytest.raises(DataError, match="all 5 values are 2"):
        shapiro([2, 2, 2, 2, 2])
    with pytest.raises(DataError, match="at least 3"):
        shapiro([1, 2])


@pytest.mark.parametrize("paired,equal_var", [(True, False), (False, False), (False, True)])
def test_ttest_matches_scipy_including_ci(paired: bool, equal_var: bool) -> None:
    rng = np.random.default_rng(2)
    a, b = rng.normal(0.3, 1, 25), rng.normal(0, 1.5, 25 if paired else 31)
    res = ttest(a, b, paired=paired, equal_var=equal_var)
    ref = sps.ttest_rel(a, b) if paired else sps.ttest_ind(a, b, equal_var=equal_var)
    assert res.extra["t"] == pytest.approx(ref.statistic, rel=1e-10)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    ci = ref.confidence_interval(0.95)
    assert res.ci == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_wilcoxon_and_mann_whitney_match_pingouin() -> None:
    rng = np.random.default_rng(6)
    a, b = rng.normal(0.4, 1, 30), rng.normal(0, 1, 30)
    w = wilcoxon(a, b)
    ref = _quiet(pg.wilcoxon, a, b).iloc[0]
    assert w.extra["W"] == pytest.approx(ref["W_val"] if "W_val" in ref else ref["W-val"])
    assert w.p_value == pytest.approx(ref["p_val"] if "p_val" in ref else ref["p-val"], rel=1e-10)
    assert w.estimate == pytest.approx(ref["RBC"], abs=1e-12)
    m = mann_whitney(a, b[:24])
    ref = _quiet(pg.mwu, a, b[:24]).iloc[0]
    assert m.extra["U"] == pytest.approx(ref["U_val"] if "U_val" in ref else ref["U-val"])
    assert m.p_value == pytest.approx(ref["p_val"] if "p_val" in ref else ref["p-val"], rel=1e-10)
    assert m.estimate == pytest.approx(ref["RBC"], abs=1e-12)
    assert rank_biserial(a, b[:24]).estimate == pytest.approx(ref["RBC"], abs=1e-12)


def test_cohens_d_matches_pingouin() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.normal(0.5, 1, 20), rng.normal(0, 1.2, 26)
    d = cohens_d(a, b)
    assert d.estimate == pytest.approx(pg.compute_effsize(a, b, eftype="cohen"), abs=1e-12)
    lo, hi = pg.compute_esci(stat=d.estimate, nx=a.size, ny=b.size, eftype="cohen", decimals=12)
    assert d.ci == pytest.approx((lo, hi), abs=1e-9)
    dp = cohens_d(a, b[:20], paired=True)
    assert dp.estimate == pytest.approx(
        pg.compute_effsize(a, b[:20], paired=True, eftype="cohen"), abs=1e-12
    )
    with pytest.raises(DataError, match="both samples are constant"):
        cohens_d([1, 1, 1], [2, 2, 2])


@pytest.mark.parametrize("seed", range(4))
def test_corrections_match_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    arr = np.concatenate(
        [rng.uniform(0, 0.05, 4), rng.uniform(0, 1, 8), [0.02, 0.02]]
    )  # ties included
    assert holm(arr) == pytest.approx(multipletests(arr, method="holm")[1], abs=1e-12)
    assert benjamini_hochberg(arr) == pytest.approx(
        multipletests(arr, method="fdr_bh")[1], abs=1e-12
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30))
def test_corrections_keep_order_and_bounds(p: list[float]) -> None:
    arr = np.array(p)
    for adjusted in (holm(arr), benjamini_hochberg(arr)):
        assert (adjusted >= arr - 1e-15).all() and (adjusted <= 1).all()
        order = np.argsort(arr, kind="stable")
        assert (np.diff(adjusted[order]) >= -1e-15).all()  # monotone in the raw p-values
    assert (benjamini_hochberg(arr) <= holm(arr) + 1e-15).all()  # FDR control is never stricter


def test_adjust_rejects_bad_p_and_method() -> None:
    with pytest.raises(DataError, match="entry 1 is 1.5;"):
        holm([0.1, 1.5])
    with pytest.raises(DataError, match="Did you mean 'holm'"):
        adjust_pvalues([0.1], "hollm")


@pytest.mark.parametrize(
    "test,correction",
    [
        ("ttest_paired", "holm"),
        ("ttest_welch", "fdr_bh"),
        ("wilcoxon", "holm"),
        ("mann_whitney", "fdr_bh"),
    ],
)
def test_posthoc_equals_pairwise_tests_plus_correction(test: str, correction: str) -> None:
    rng = np.random.default_rng(3)
    groups = {
        name: rng.normal(shift, 1, 20)
        for name, shift in zip("abcd", [0, 0.2, 0.8, 1.0], strict=True)
    }
    res = posthoc(groups, test=test, correction=correction)
    pairs = list(itertools.combinations("abcd", 2))
    assert list(res) == pairs
    raw = []
    for a, b in pairs:
        x, y = groups[a], groups[b]
        if test == "ttest_paired":
            raw.append(sps.ttest_rel(x, y).pvalue)
        elif test == "ttest_welch":
            raw.append(sps.ttest_ind(x, y, equal_var=False).pvalue)
        elif test == "wilcoxon":
            raw.append(sps.wilcoxon(x, y).pvalue)
        else:
            raw.append(sps.mannwhitneyu(x, y).pvalue)
    expected = multipletests(raw, method=correction)[1]
    assert [r.p_value for r in res.values()] == pytest.approx(expected, rel=1e-10)
    assert [r.extra["p_unadjusted"] for r in res.values()] == pytest.approx(raw, rel=1e-10)


def test_posthoc_matches_pingouin_pairwise_tests() -> None:
    rng = np.random.default_rng(11)
    x = rng.normal(size=(18, 1)) + rng.normal(size=(18, 3)) + [0, 0.5, 1.0]
    long = pd.DataFrame(
        {"y": x.ravel(), "item": np.repeat(range(18), 3), "cond": np.tile(["a", "b", "c"], 18)}
    )
    ref = _quiet(
        pg.pairwise_tests, data=long, dv="y", within="cond", subject="item", padjust="holm"
    )
    res = posthoc({c: x[:, i] for i, c in enumerate("abc")}, "ttest_paired", "holm")
    p_ref = ref["p_corr"] if "p_corr" in ref else ref["p-corr"]
    assert [r.p_value for r in res.values()] == pytest.approx(p_ref.to_list(), rel=1e-9)


def test_paired_bootstrap_matches_exact_enumeration() -> None:
    """All 4^4 = 256 resamples of 4 items are equally likely: the exact p is a count."""
    a = np.array([3.0, 1.0, 4.0, 1.5])
    b = np.array([2.0, 1.2, 2.5, 2.0])
    d = a - b
    means = np.array([d[list(idx)].mean() for idx in itertools.product(range(4), repeat=4)])
    exact_p = (means <= 0).mean()
    res = paired_bootstrap(a, b, n_boot=40_000, seed=5)
    se = np.sqrt(exact_p * (1 - exact_p) / 40_000)
    assert abs(res.p_value - exact_p) < 4 * se
    assert res.estimate == pytest.approx(d.mean())
    lo, hi = np.percentile(means, [2.5, 97.5])
    assert res.ci_low == pytest.approx(lo, abs=0.05) and res.ci_high == pytest.approx(hi, abs=0.05)


def test_paired_bootstrap_is_seeded_and_symmetric() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.2, 1, 50), rng.normal(0, 1, 50)
    r1 = paired_bootstrap(a, b, n_boot=500, seed=3)
    assert r1 == paired_bootstrap(a, b, n_boot=500, seed=3)
    r2 = paired_bootstrap(b, a, n_boot=500, seed=3)
    assert r2.estimate == pytest.approx(-r1.estimate)
    assert r2.p_value == pytest.approx(r1.p_value)
    with pytest.raises(DataError, match="a has 50 items but b has 3"):
        paired_bootstrap(a, b[:3])


def test_degenerate_tests_raise_clear_errors() -> None:
    with pytest.raises(DataError, match="need at least 2 groups"):
        anova_oneway([1, 2, 3])
    with pytest.raises(DataError, match="every group constant"):
        anova_oneway([1, 1], [2, 2])
    with pytest.raises(DataError, match="all 4 values are 3"):
        kruskal_wallis([3, 3], [3, 3])
    with pytest.raises(DataError, match="paired differences are zero"):
        wilcoxon([1, 2, 3], [1, 2, 3])
    with pytest.raises(DataError, match="group 1 has 1 value"):
        anova_oneway([1, 2], [3])
    with pytest.raises(DataError, match=r"1 missing value\(s\) \(NaN\)"):
        ttest([1, np.nan, 3], [1, 2, 3])
    with pytest.raises(DataError, match="Did you mean 'wilcoxon'"):
        posthoc({"a": [1, 2], "b": [2, 3]}, test="wilcoxn")
