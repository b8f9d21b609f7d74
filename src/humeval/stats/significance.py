"""Significance tests: normality, omnibus tests, post hoc pairs with correction, paired bootstrap.

Convention for ``estimate``: omnibus tests (ANOVA, Kruskal-Wallis, Friedman, Shapiro-Wilk)
report their test statistic (F, H, chi-square, W); t-tests report the mean difference with
its t-based CI (as R ``t.test``); rank tests report the rank-biserial correlation; the paired
bootstrap reports the difference of means with a percentile CI. The statistic, degrees of
freedom and effect sizes are in ``extra``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
from scipy import stats as sps

from humeval.errors import DataError
from humeval.rng import Seed, as_generator
from humeval.stats._bootstrap import no_interval, percentile_ci, resample_weights
from humeval.stats._checks import (
    as_float_array,
    check_choice,
    check_confidence_level,
    check_n_boot,
)
from humeval.stats._result import Estimate
from humeval.stats.correction import adjust_pvalues
from humeval.stats.effect import cohens_d, rank_biserial

__all__ = [
    "POSTHOC_TESTS",
    "anova_oneway",
    "friedman",
    "kruskal_wallis",
    "mann_whitney",
    "paired_bootstrap",
    "posthoc",
    "rm_anova",
    "shapiro",
    "sign_test",
    "ttest",
    "wilcoxon",
]


def _groups(groups: Sequence[object], minimum: int = 2) -> list[np.ndarray]:
    arrays = [as_float_array(g, f"group {i}", 1, allow_nan=False) for i, g in enumerate(groups)]
    if len(arrays) < 2:
        raise DataError(f"need at least 2 groups, got {len(arrays)}")
    for i, g in enumerate(arrays):
        if g.size < minimum:
            raise DataError(f"group {i} has {g.size} value(s); each group needs at least {minimum}")
    return arrays


def _matrix(scores: object, what: str) -> np.ndarray:
    x = as_float_array(scores, f"{what} (items x conditions)", 2, allow_nan=False)
    if x.shape[0] < 2 or x.shape[1] < 2:
        raise DataError(
            f"{what}: needs at least 2 items judged for every one of at least 2 systems; here {x.shape[0]} item(s) "
            f"and {x.shape[1]} system(s)"
        )
    return x


def shapiro(x: object) -> Estimate:
    """Shapiro-Wilk test of normality; ``estimate`` is W, small ``p_value`` = not normal.

    Computed by ``scipy.stats.shapiro`` (Royston's 1995 algorithm AS R94, valid for
    3 <= n <= 5000, as R ``shapiro.test``). Constant data raise DataError (W undefined).

    Reference: Shapiro, S. S. & Wilk, M. B. (1965). Biometrika 52(3-4), 591-611.

    Checked against: ``pingouin.normality`` and R ``shapiro.test`` (published value for
    ``ToothGrowth$len``: W = 0.96743, p = 0.1091).

    Examples:
        >>> from humeval.stats import shapiro
        >>> r = shapiro([2.1, 3.4, 1.9, 5.6, 4.4, 3.0, 2.8, 3.9])
        >>> # W; scipy.stats.shapiro(x); R: shapiro.test(x)
        >>> round(r.estimate, 4), round(r.p_value, 4)
        (0.9595, 0.8053)
    """
    a = as_float_array(x, "x", 1, allow_nan=False)
    if a.size < 3:
        raise DataError(f"shapiro: {a.size} value(s); the Shapiro-Wilk test needs at least 3")
    if np.ptp(a) == 0:
        raise DataError(
            f"shapiro: all {a.size} values are {a[0]:g}; W is undefined for constant data"
        )
    res = sps.shapiro(a)
    return Estimate(res.statistic, p_value=res.pvalue, n=a.size, method="shapiro_wilk")


def anova_oneway(*groups: object) -> Estimate:
    r"""One-way between-subjects ANOVA; ``estimate`` is F.

    :math:`F = \frac{SS_b/(k-1)}{SS_w/(N-k)}`, p from F(k-1, N-k); ``extra`` holds
    ``df1``, ``df2`` and ``eta_squared`` = SS_b / SS_total.

    Reference: Fisher (1925); any textbook. R: ``summary(aov(y ~ g))``.

    Checked against: ``scipy.stats.f_oneway`` and ``pingouin.anova`` (F, p, np2; 1e-9).

    Examples:
        >>> from humeval.stats import anova_oneway
        >>> # SS_between = 13.5 on 1 df, SS_within = 4 on 4 df: F = 13.5 / (4 / 4)
        >>> r = anova_oneway([1, 2, 3], [4, 5, 6])
        >>> # scipy.stats.f_oneway(a, b); R: oneway.test(..., var.equal=TRUE)
        >>> round(r.estimate, 4), round(r.p_value, 4)
        (13.5, 0.0213)
    """
    arrays = _groups(groups)
    allv = np.concatenate(arrays)
    k, n = len(arrays), allv.size
    if n - k < 1:
        raise DataError(f"anova_oneway: {n} values in {k} groups leave no error degrees of freedom")
    means = np.array([g.mean() for g in arrays])
    sizes = np.array([g.size for g in arrays])
    ss_b = (sizes * (means - allv.mean()) ** 2).sum()
    ss_w = sum(((g - g.mean()) ** 2).sum() for g in arrays)
    if ss_w == 0:
        raise DataError(
            "anova_oneway: no variation within any group (every group constant); F is undefined"
        )
    f_stat = (ss_b / (k - 1)) / (ss_w / (n - k))
    return Estimate(
        f_stat,
        p_value=sps.f.sf(f_stat, k - 1, n - k),
        n=n,
        method="anova_oneway",
        extra={"df1": k - 1, "df2": n - k, "eta_squared": float(ss_b / (ss_b + ss_w))},
    )


def rm_anova(scores: object) -> Estimate:
    r"""One-way repeated-measures ANOVA over an items x conditions array; ``estimate`` is F.

    :math:`F = \frac{SS_c/(k-1)}{SS_e/((n-1)(k-1))}` with :math:`SS_e = SS_{total} - SS_{items} - SS_c`.
    ``extra``: ``df1``, ``df2``, ``partial_eta_squared`` = SS_c/(SS_c+SS_e), the
    Greenhouse-Geisser ``epsilon`` = :math:`\mathrm{tr}(S)^2 / ((k-1)\,\mathrm{tr}(S^2))` of the
    double-centred covariance matrix S, and ``p_gg`` (p with both df multiplied by epsilon).

    Reference: Greenhouse, S. W. & Geisser, S. (1959). Psychometrika 24, 95-112.
    R: ``summary(aov(y ~ cond + Error(item/cond)))``.

    Checked against: ``pingouin.rm_anova`` (F, p-unc, np2, eps, p-GG-corr; 1e-9) and
    ``statsmodels.stats.anova.AnovaRM``.

    Examples:
        >>> from humeval.stats import rm_anova
        >>> r = rm_anova([[1, 2, 4], [2, 3, 4], [1, 3, 6], [2, 2, 5]])
        >>> # F; pingouin.rm_anova; R: aov(score ~ system + Error(item/system))
        >>> round(r.estimate, 4), round(r.p_value, 4)
        (21.0, 0.002)
    """
    x = _matrix(scores, "rm_anova: scores")
    n, k = x.shape
    grand = x.mean()
    ss_c = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_i = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_e = ((x - grand) ** 2).sum() - ss_c - ss_i
    if ss_e <= 1e-12 * max(((x - grand) ** 2).sum(), 1e-300):
        raise DataError(
            "rm_anova: no residual variation (every item's profile is parallel); F is undefined"
        )
    df1, df2 = k - 1, (n - 1) * (k - 1)
    f_stat = (ss_c / df1) / (ss_e / df2)
    cov = np.cov(x, rowvar=False)
    centre = np.eye(k) - 1.0 / k
    s = centre @ cov @ centre
    eps = float(np.trace(s) ** 2 / ((k - 1) * np.trace(s @ s)))
    return Estimate(
        f_stat,
        p_value=sps.f.sf(f_stat, df1, df2),
        n=n,
        method="rm_anova",
        extra={
            "df1": df1,
            "df2": df2,
            "partial_eta_squared": float(ss_c / (ss_c + ss_e)),
            "epsilon_gg": eps,
            "p_gg": float(sps.f.sf(f_stat, df1 * eps, df2 * eps)),
        },
    )


def kruskal_wallis(*groups: object) -> Estimate:
    r"""Kruskal-Wallis H test; ``estimate`` is H (tie-corrected).

    :math:`H = \frac{12}{N(N+1)}\sum_j \frac{R_j^2}{n_j} - 3(N+1)`, divided by
    :math:`1 - \sum_t (t^3 - t)/(N^3 - N)`; p from chi-square(k-1). ``extra``:
    ``epsilon_squared`` = H (N+1) / (N^2 - 1) (Tomczak & Tomczak 2014).

    Reference: Kruskal, W. H. & Wallis, W. A. (1952). JASA 47(260), 583-621.
    R: ``kruskal.test``.

    Checked against: ``scipy.stats.kruskal`` (1e-12).

    Examples:
        >>> from humeval.stats import kruskal_wallis
        >>> # rank sums 6 and 15: H = 12 / (6 x 7) x (6^2 / 3 + 15^2 / 3) - 3 x 7 = 27/7
        >>> r = kruskal_wallis([1, 2, 3], [4, 5, 6])
        >>> # scipy.stats.kruskal(a, b); R: kruskal.test(list(a, b))
        >>> round(r.estimate, 4), round(r.p_value, 4)
        (3.8571, 0.0495)
    """
    arrays = _groups(groups, minimum=1)
    allv = np.concatenate(arrays)
    n = allv.size
    ranks = sps.rankdata(allv)
    bounds = np.cumsum([0] + [g.size for g in arrays])
    sums = np.add.reduceat(ranks, bounds[:-1])
    sizes = np.diff(bounds)
    h = 12.0 / (n * (n + 1)) * (sums**2 / sizes).sum() - 3.0 * (n + 1)
    _, tie_counts = np.unique(allv, return_counts=True)
    correction = 1.0 - (tie_counts**3 - tie_counts).sum() / (n**3 - n)
    if correction == 0:
        raise DataError(f"kruskal_wallis: all {n} values are {allv[0]:g}; H is undefined")
    h /= correction
    k = len(arrays)
    return Estimate(
        h,
        p_value=sps.chi2.sf(h, k - 1),
        n=n,
        method="kruskal_wallis",
        extra={"df": k - 1, "epsilon_squared": float(h * (n + 1) / (n**2 - 1))},
    )


def friedman(scores: object) -> Estimate:
    r"""Friedman test over an items x conditions array; ``estimate`` is the chi-square statistic.

    Ranks within each item; :math:`Q = \frac{12}{nk(k+1)}\sum_j R_j^2 - 3n(k+1)`, divided by
    :math:`1 - \sum (t^3-t) / (n(k^3-k))` for ties; p from chi-square(k-1). ``extra``:
    Kendall's ``W`` = Q / (n(k-1)).

    Reference: Friedman, M. (1937). JASA 32(200), 675-701. R: ``friedman.test``.

    Checked against: ``scipy.stats.friedmanchisquare`` and ``pingouin.friedman`` (W) (1e-12).

    Examples:
        >>> from humeval.stats import friedman
        >>> # 4 items x 3 systems, the systems in the same order on every item: rank sums 4, 8, 12,
        >>> # chi^2 = 12 / (4 x 3 x 4) x (4^2 + 8^2 + 12^2) - 3 x 4 x 4 = 8
        >>> r = friedman([[1, 2, 3], [2, 3, 4], [1, 5, 6], [0, 1, 9]])
        >>> # scipy.stats.friedmanchisquare; R: friedman.test(scores)
        >>> round(r.estimate, 4), round(r.p_value, 4)
        (8.0, 0.0183)
    """
    x = _matrix(scores, "friedman: scores")
    n, k = x.shape
    ranks = sps.rankdata(x, axis=1)
    q = 12.0 / (n * k * (k + 1)) * (ranks.sum(axis=0) ** 2).sum() - 3.0 * n * (k + 1)
    srt = np.sort(x, axis=1)
    # tie groups per row: (t^3 - t) summed via run lengths of equal sorted values
    new_run = np.concatenate([np.ones((n, 1), bool), srt[:, 1:] != srt[:, :-1]], axis=1)
    run_id = np.cumsum(new_run.ravel()) - 1
    t = np.bincount(run_id).astype(float)
    ties = (t**3 - t).sum()
    correction = 1.0 - ties / (n * (k**3 - k))
    if correction == 0:
        raise DataError(
            "friedman: every item gives all conditions the same score; the statistic is undefined"
        )
    q /= correction
    return Estimate(
        q,
        p_value=sps.chi2.sf(q, k - 1),
        n=n,
        method="friedman",
        extra={"df": k - 1, "kendall_w": float(q / (n * (k - 1)))},
    )


def ttest(
    x: object,
    y: object,
    *,
    paired: bool = False,
    equal_var: bool = False,
    confidence_level: float = 0.95,
) -> Estimate:
    r"""Two-sample t-test (Welch by default, Student with ``equal_var=True``, or paired).

    ``estimate`` = mean(x) - mean(y) (paired: mean of x - y) with its t CI at
    ``confidence_level`` (0.95: the 95% interval).
    Paired: :math:`t = \bar d / (s_d/\sqrt n)`, df = n-1. Student: pooled variance,
    df = n_x+n_y-2. Welch: :math:`se = \sqrt{s_x^2/n_x + s_y^2/n_y}`, Welch-Satterthwaite df.
    ``extra``: ``t``, ``df``, ``cohens_d`` (see :func:`cohens_d`).

    Reference: Welch, B. L. (1947). Biometrika 34, 28-35. R: ``t.test``.

    Checked against: ``scipy.stats.ttest_rel`` / ``ttest_ind`` (t, p, CI; 1e-10).

    Examples:
        >>> from humeval.stats import ttest
        >>> # means 2 and 5, both variances 1: t = -3 / sqrt(1/3 + 1/3)
        >>> r = ttest([1, 2, 3], [4, 5, 6])
        >>> # scipy.stats.ttest_ind(x, y, equal_var=False); R: t.test(x, y)
        >>> r.estimate, round(r.extra["t"], 4), round(r.p_value, 4)
        (-3.0, -3.6742, 0.0213)
        >>> r = ttest([1, 2, 3], [2, 4, 5], paired=True)  # differences -1, -2, -2
        >>> # scipy.stats.ttest_rel(x, y); R: t.test(x, y, paired=TRUE)
        >>> round(r.estimate, 4), round(r.p_value, 4)
        (-1.6667, 0.0377)
    """
    confidence_level = check_confidence_level(confidence_level, "ttest")
    a = as_float_array(x, "x", 1, allow_nan=False)
    b = as_float_array(y, "y", 1, allow_nan=False)
    if paired:
        if a.size != b.size:
            raise DataError(f"paired t-test: x has {a.size} values but y has {b.size}")
        d = a - b
        if d.size < 2:
            raise DataError(f"paired t-test: {d.size} pair(s); need at least 2")
        diff, se, df = d.mean(), d.std(ddof=1) / np.sqrt(d.size), d.size - 1.0
        method, n = "ttest_paired", d.size
    else:
        if a.size < 2 or b.size < 2:
            raise DataError(f"t-test: x has {a.size} and y {b.size} values; each needs at least 2")
        va, vb = a.var(ddof=1), b.var(ddof=1)
        diff = a.mean() - b.mean()
        if equal_var:
            df = a.size + b.size - 2.0
            sp2 = ((a.size - 1) * va + (b.size - 1) * vb) / df
            se = np.sqrt(sp2 * (1 / a.size + 1 / b.size))
            method = "ttest_student"
        else:
            se = np.sqrt(va / a.size + vb / b.size)
            df = (
                se**4 / ((va / a.size) ** 2 / (a.size - 1) + (vb / b.size) ** 2 / (b.size - 1))
                if se > 0
                else 1.0
            )
            method = "ttest_welch"
        n = a.size + b.size
    if se == 0:
        raise DataError(f"{method}: zero variance (constant scores); t is undefined")
    t = diff / se
    q = sps.t.ppf(1 - (1 - confidence_level) / 2, df)
    try:
        d_eff = cohens_d(a, b, paired=paired).estimate
    except DataError:
        d_eff = float("nan")
    return Estimate(
        diff,
        diff - q * se,
        diff + q * se,
        2 * sps.t.sf(abs(t), df),
        n,
        method,
        {"t": float(t), "df": float(df), "cohens_d": d_eff},
    )


def wilcoxon(x: object, y: object) -> Estimate:
    """Wilcoxon signed-rank test of paired samples; ``estimate`` is the matched-pairs rank-biserial r.

    Zero differences are dropped (Wilcoxon's method); the p-value is exact for small samples
    without ties and normal-approximated (tie-corrected) otherwise, as chosen by
    ``scipy.stats.wilcoxon(method="auto")``. ``extra["W"]`` = min(R+, R-) as in scipy,
    ``extra["n_nonzero"]`` the pairs used.

    Reference: Wilcoxon, F. (1945). Biometrics Bulletin 1(6), 80-83. R: ``wilcox.test(paired=TRUE)``.

    Checked against: ``pingouin.wilcoxon`` (W-val, p-val, RBC; 1e-12).

    Examples:
        >>> from humeval.stats import wilcoxon
        >>> # differences y - x are all positive: W = 0, exact p = 2 / 2^5
        >>> r = wilcoxon([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
        >>> round(r.p_value, 4)  # scipy.stats.wilcoxon(x, y); R: wilcox.test(x, y, paired=TRUE)
        0.0625
    """
    a = as_float_array(x, "x", 1, allow_nan=False)
    b = as_float_array(y, "y", 1, allow_nan=False)
    if a.size != b.size:
        raise DataError(
            f"wilcoxon: x has {a.size} values but y has {b.size}; paired samples need equal lengths"
        )
    r = rank_biserial(a, b, paired=True)  # raises on all-zero differences
    res = sps.wilcoxon(a, b)
    return Estimate(
        r.estimate,
        p_value=res.pvalue,
        n=a.size,
        method="wilcoxon_signed_rank",
        extra={"W": float(res.statistic), "n_nonzero": r.extra["n_nonzero"]},
    )


def sign_test(wins_a: int, wins_b: int, *, confidence_level: float = 0.95) -> Estimate:
    """Two-sided exact sign (binomial) test of H0: P(A preferred over B) = 1/2.

    ``estimate`` = wins_a / (wins_a + wins_b), the share of decisive judgements won by A
    (ties are left out by the caller), with the Clopper-Pearson exact interval at
    ``confidence_level`` (0.95: the 95% interval);
    ``p_value`` sums the probabilities of outcomes no more likely than the observed one.

    Reference: Clopper, C. J. & Pearson, E. S. (1934). Biometrika 26(4), 404-413.
    R: ``binom.test(wins_a, wins_a + wins_b)``.

    Checked against: R ``binom.test(7, 10)`` (p = 0.34375, CI 0.3475471-0.9332605) and
    ``statsmodels.stats.proportion.proportion_confint(method="beta")``.

    Examples:
        >>> from humeval.stats import sign_test
        >>> r = sign_test(7, 3)
        >>> r.estimate, round(r.p_value, 5)  # R: binom.test(7, 10): p-value = 0.34375
        (0.7, 0.34375)
        >>> round(r.ci_low, 4), round(r.ci_high, 4)  # R: 0.3475471 0.9332605 (Clopper-Pearson)
        (0.3475, 0.9333)
    """
    confidence_level = check_confidence_level(confidence_level, "sign_test")
    for name, value in (("wins_a", wins_a), ("wins_b", wins_b)):
        if isinstance(value, bool) or int(value) != value or value < 0:
            raise DataError(f"sign_test: {name} must be a non-negative integer, got {value!r}")
    a, n = int(wins_a), int(wins_a) + int(wins_b)
    if n == 0:
        raise DataError("sign_test: no decisive judgements (wins_a + wins_b = 0); the share is undefined")
    res = sps.binomtest(a, n, 0.5)
    ci = res.proportion_ci(confidence_level=confidence_level, method="exact")
    return Estimate(a / n, ci.low, ci.high, res.pvalue, n, "sign_test", {"wins_a": a, "wins_b": n - a})


def mann_whitney(x: object, y: object) -> Estimate:
    """Mann-Whitney U test (two-sided); ``estimate`` is the rank-biserial r (positive: x larger).

    p-value as ``scipy.stats.mannwhitneyu(method="auto")`` (exact for small samples without
    ties, otherwise normal approximation with tie and continuity correction, as R
    ``wilcox.test``). ``extra["U"]`` is U of x.

    Reference: Mann, H. B. & Whitney, D. R. (1947). Ann. Math. Stat. 18(1), 50-60.

    Checked against: ``pingouin.mwu`` (U-val, p-val, RBC; 1e-12).

    Examples:
        >>> from humeval.stats import mann_whitney
        >>> # every x is below every y: U = 0, and that is 1 of the C(6, 3) = 20 equally likely orderings on each side
        >>> r = mann_whitney([1, 2, 3], [4, 5, 6])
        >>> # scipy.stats.mannwhitneyu(x, y); R: wilcox.test(x, y)
        >>> r.extra["U"], round(r.p_value, 4)
        (0.0, 0.1)
    """
    a = as_float_array(x, "x", 1, allow_nan=False)
    b = as_float_array(y, "y", 1, allow_nan=False)
    if a.size < 1 or b.size < 1:
        raise DataError(f"mann_whitney: x has {a.size} and y {b.size} values; both need at least 1")
    if np.ptp(np.concatenate([a, b])) == 0:
        raise DataError(
            f"mann_whitney: all values are {a[0]:g}; the test is undefined without variation"
        )
    res = sps.mannwhitneyu(a, b, alternative="two-sided")
    r = 1.0 - 2.0 * (a.size * b.size - res.statistic) / (a.size * b.size)
    return Estimate(
        r,
        p_value=res.pvalue,
        n=a.size + b.size,
        method="mann_whitney",
        extra={"U": float(res.statistic)},
    )


POSTHOC_TESTS = ("ttest_paired", "ttest_welch", "ttest_student", "wilcoxon", "mann_whitney")


def posthoc(
    groups: Mapping[str, object],
    test: str = "ttest_paired",
    correction: str = "holm",
    *,
    confidence_level: float = 0.95,
) -> dict[tuple[str, str], Estimate]:
    """All pairwise tests between named groups with multiple-comparison correction.

    ``groups`` maps a condition (e.g. system) name to its scores (paired tests need aligned
    arrays: the same items in the same order). ``test`` is one of ``POSTHOC_TESTS``;
    ``correction`` one of ``holm``, ``fdr_bh``, ``bonferroni``, ``none``. Each result's
    ``p_value`` is the adjusted one; ``extra["p_unadjusted"]`` keeps the raw p-value.
    Pairs follow the order of ``groups``: ``(a, b)`` with ``a`` before ``b``. The t-tests'
    intervals are at ``confidence_level`` (unadjusted for multiplicity); the rank tests
    have none.

    Checked against: ``pingouin.pairwise_tests`` (padjust="holm" / "fdr_bh") on random data
    and scipy + ``statsmodels.stats.multitest.multipletests`` per pair (1e-10).

    Examples:
        >>> from humeval.stats import posthoc
        >>> groups = {"A": [1, 2, 3, 4], "B": [2, 4, 5, 5], "C": [5, 6, 8, 9]}
        >>> tests = posthoc(groups, "ttest_paired", "holm")
        >>> list(tests)
        [('A', 'B'), ('A', 'C'), ('B', 'C')]
        >>> # pingouin.pairwise_tests(..., padjust="holm")
        >>> {pair: round(r.p_value, 4) for pair, r in tests.items()}
        {('A', 'B'): 0.0138, ('A', 'C'): 0.0017, ('B', 'C'): 0.0104}
        >>> # scipy.stats.ttest_rel per pair
        >>> {pair: round(r.extra["p_unadjusted"], 4) for pair, r in tests.items()}
        {('A', 'B'): 0.0138, ('A', 'C'): 0.0006, ('B', 'C'): 0.0052}
    """
    test = check_choice(test, POSTHOC_TESTS, "posthoc: test")
    confidence_level = check_confidence_level(confidence_level, "posthoc")
    names = list(groups)
    if len(names) < 2:
        raise DataError(f"posthoc: need at least 2 groups, got {names}")
    results: dict[tuple[str, str], Estimate] = {}
    for a, b in combinations(names, 2):  # a loop over pairs of *groups*, not of observations
        if test == "ttest_paired":
            results[(a, b)] = ttest(
                groups[a], groups[b], paired=True, confidence_level=confidence_level
            )
        elif test == "ttest_welch":
            results[(a, b)] = ttest(groups[a], groups[b], confidence_level=confidence_level)
        elif test == "ttest_student":
            results[(a, b)] = ttest(
                groups[a], groups[b], equal_var=True, confidence_level=confidence_level
            )
        elif test == "wilcoxon":
            results[(a, b)] = wilcoxon(groups[a], groups[b])
        else:
            results[(a, b)] = mann_whitney(groups[a], groups[b])
    raw = np.array([r.p_value for r in results.values()])
    adjusted = adjust_pvalues(raw, correction)
    out = {}
    for (key, r), p_adj in zip(results.items(), adjusted, strict=True):
        out[key] = Estimate(
            r.estimate,
            r.ci_low,
            r.ci_high,
            p_adj,
            r.n,
            r.method,
            {
                **r.extra,
                "p_unadjusted": r.p_value,
                "correction": correction,
                "a": key[0],
                "b": key[1],
            },
        )
    return out


def paired_bootstrap(
    a: object,
    b: object,
    *,
    n_boot: int = 1000,
    seed: Seed = 0,
    confidence_level: float = 0.95,
) -> Estimate:
    r"""Paired bootstrap test of two systems' mean scores on the same items (Koehn 2004).

    ``a[i]`` and ``b[i]`` are the two systems' scores on item ``i`` (e.g. the mean of its
    judgements). Draw items with replacement ``n_boot`` times (seeded); ``estimate`` =
    :math:`\bar a - \bar b`, the CI is the percentile interval of the resampled differences
    at ``confidence_level``,
    and ``p_value`` is the share of samples in which the observed winner does *not* win
    (difference <= 0 when ``a`` is ahead, >= 0 when ``b`` is), so "a better than b at 95%"
    is ``p_value <= 0.05`` as in Koehn's "wins in 95% of samples". Observed difference 0
    gives ``p_value`` 1. Vectorised: one weight matrix times the per-item differences.

    Reference: Koehn, P. (2004). Statistical significance tests for machine translation
    evaluation. EMNLP 2004, 388-395.

    Checked against: the exact bootstrap distribution enumerated over all n^n resamples of
    small samples (within Monte-Carlo error), and an independent index-resampling loop.

    Examples:
        >>> from humeval.stats import paired_bootstrap
        >>> a = [0.8, 0.6, 0.9, 0.7, 0.5, 0.8]
        >>> b = [0.6, 0.6, 0.7, 0.5, 0.5, 0.7]
        >>> r = paired_bootstrap(a, b, n_boot=1000, seed=0)
        >>> round(r.estimate, 4)  # the mean difference: 0.7167 - 0.6
        0.1167
        >>> r.p_value < 0.05  # a beats b in more than 95% of the resamples
        True
    """
    x = as_float_array(a, "a", 1, allow_nan=False)
    y = as_float_array(b, "b", 1, allow_nan=False)
    if x.size != y.size:
        raise DataError(
            f"paired_bootstrap: a has {x.size} items but b has {y.size}; scores must be paired"
        )
    if x.size < 2:
        raise DataError(f"paired_bootstrap: {x.size} item(s); need at least 2")
    n_boot = check_n_boot(n_boot)
    if n_boot < 1:
        raise DataError("paired_bootstrap: n_boot must be at least 1 (Koehn uses 1000)")
    confidence_level = check_confidence_level(confidence_level, "paired_bootstrap")
    d = x - y
    observed = d.mean()
    rng = as_generator(seed)
    samples = np.concatenate([w @ d / d.size for w in resample_weights(rng, d.size, n_boot)])
    if observed > 0:
        p = float((samples <= 0).mean())
    elif observed < 0:
        p = float((samples >= 0).mean())
    else:
        p = 1.0
    lo, hi, _, reason = percentile_ci(samples, confidence_level, float(observed))
    return Estimate(
        observed,
        lo,
        hi,
        p,
        d.size,
        "paired_bootstrap",
        {
            "n_boot": n_boot,
            "seed": seed if isinstance(seed, int) else "generator",
            "wins_a": float((samples > 0).mean()),
            "ci_level": confidence_level,
            **no_interval(reason),
        },
    )
