"""Agreement between participants: Fleiss' kappa, Krippendorff's alpha, intraclass correlation."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

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

__all__ = ["ALPHA_LEVELS", "ICC_FORMS", "fleiss_kappa", "icc", "krippendorff_alpha"]

ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")
ICC_FORMS = ("1,1", "2,1", "3,1", "1,k", "2,k", "3,k")


# --------------------------------------------------------------------------- Fleiss' kappa


def fleiss_kappa(
    counts: object, *, n_boot: int = 1000, seed: Seed = 0, confidence_level: float = 0.95
) -> Estimate:
    r"""Fleiss' kappa for a fixed number of participants per item.

    ``counts`` is an items x categories table: ``counts[i, j]`` = how many participants put
    item ``i`` in category ``j``; every row must sum to the same number of participants
    ``m >= 2``.

    .. math::

        P_i = \frac{\sum_j n_{ij}^2 - m}{m(m-1)},\quad \bar P = \frac1N\sum_i P_i,\quad
        p_j = \frac{\sum_i n_{ij}}{Nm},\quad P_e = \sum_j p_j^2,\quad
        \kappa = \frac{\bar P - P_e}{1 - P_e}

    ``p_value`` tests kappa = 0 with the null standard error of Fleiss, Nee & Landis (1979)
    (as R ``irr::kappam.fleiss``):
    :math:`se_0 = \frac{\sqrt2}{\sum_j p_jq_j\sqrt{Nm(m-1)}}\sqrt{(\sum_j p_jq_j)^2 - \sum_j p_jq_j(q_j-p_j)}`,
    two-sided normal p-value of :math:`z = \kappa / se_0` (``extra["z"]``). The CI is a
    percentile bootstrap over items at ``confidence_level`` (``n_boot`` samples, ``seed``;
    ``n_boot=0`` for none).

    Degenerate cases: a table where only one category is ever used has no expected
    disagreement, kappa is undefined and a DataError is raised.

    Reference: Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    Psychological Bulletin 76(5), 378-382.

    Checked against: ``statsmodels.stats.inter_rater.fleiss_kappa`` (random tables, 1e-12),
    the Fleiss (1971) / Wikipedia worked example (kappa = 0.210) and R ``irr::kappam.fleiss``
    on Fleiss' diagnoses data (kappa = 0.430, z = 17.652).

    Examples:
        >>> from humeval.stats import fleiss_kappa
        >>> # 4 items, 3 participants each, 2 categories: two items unanimous, two split 2-1
        >>> # by hand: P_i = 1, 1, 1/3, 1/3 (mean 2/3), p_j = 1/2, P_e = 1/2, kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3
        >>> # (statsmodels.stats.inter_rater.fleiss_kappa(counts); R: irr::kappam.fleiss on the raw labels)
        >>> r = fleiss_kappa([[3, 0], [0, 3], [2, 1], [1, 2]], n_boot=0)
        >>> round(r.estimate, 4)
        0.3333
    """
    confidence_level = check_confidence_level(confidence_level, "fleiss_kappa")
    table = as_float_array(counts, "counts", 2, allow_nan=False)
    n_items, n_cat = table.shape
    if n_items < 1 or n_cat < 2:
        raise DataError(f"counts: need at least 1 item and 2 categories, got shape {table.shape}")
    if (table < 0).any() or (table != np.round(table)).any():
        where = tuple(int(i) for i in np.argwhere((table < 0) | (table != np.round(table)))[0])
        raise DataError(
            f"counts: cell {where} is {float(table[where]):g}; counts must be non-negative integers"
        )
    m_per_item = table.sum(axis=1)
    m = m_per_item[0]
    if (m_per_item != m).any():
        bad = int(np.argmax(m_per_item != m))
        raise DataError(
            f"counts: row {bad} sums to {m_per_item[bad]:g} participants but row 0 sums to {m:g}; "
            "Fleiss' kappa needs the same number of participants per item (use krippendorff_alpha otherwise)"
        )
    if m < 2:
        raise DataError(
            f"counts: each item has {m:g} judgement(s); agreement needs at least 2 per item"
        )
    p_i = ((table**2).sum(axis=1) - m) / (m * (m - 1))
    p_j = table.sum(axis=0) / (n_items * m)
    p_e = float((p_j**2).sum())
    if np.isclose(p_e, 1.0):
        raise DataError(
            f"counts: every judgement is in category {int(np.argmax(p_j))}; kappa is undefined (0/0) "
            "when there is no variation"
        )
    kappa = (p_i.mean() - p_e) / (1.0 - p_e)
    pq = p_j * (1.0 - p_j)
    se0 = (
        np.sqrt(2.0)
        / (pq.sum() * np.sqrt(n_items * m * (m - 1)))
        * np.sqrt(pq.sum() ** 2 - (pq * ((1.0 - p_j) - p_j)).sum())
    )
    z = kappa / se0
    p_value = math.erfc(abs(float(z)) / math.sqrt(2.0))  # 2 P(Z > |z|), standard normal
    lo, hi, valid, reason = _bootstrap_fleiss(table, p_i, m, n_boot, seed, confidence_level, float(kappa))
    return Estimate(
        kappa,
        lo,
        hi,
        p_value,
        n_items,
        "fleiss_kappa",
        {
            "z": float(z),
            "se0": float(se0),
            "raters_per_item": int(m),
            "n_boot": n_boot,
            "n_boot_valid": valid,
            "seed": seed if isinstance(seed, int) else "generator",
            "ci_level": confidence_level,
            **no_interval(reason),
        },
    )


def _bootstrap_fleiss(
    table: np.ndarray,
    p_i: np.ndarray,
    m: float,
    n_boot: int,
    seed: Seed,
    confidence_level: float,
    estimate: float,
) -> tuple[float, float, int, str | None]:
    n_boot = check_n_boot(n_boot)
    if n_boot == 0:
        return float("nan"), float("nan"), 0, None
    rng = as_generator(seed)
    n = table.shape[0]
    out = []
    for w in resample_weights(rng, n, n_boot):
        p_bar = w @ p_i / n
        pj = w @ table / (n * m)
        pe = (pj**2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(np.where(np.isclose(pe, 1.0), np.nan, (p_bar - pe) / (1.0 - pe)))
    return percentile_ci(np.concatenate(out), confidence_level, estimate)


# --------------------------------------------------------------------------- Krippendorff's alpha


def krippendorff_alpha(
    ratings: object,
    level: str = "interval",
    *,
    n_boot: int = 1000,
    seed: Seed = 0,
    confidence_level: float = 0.95,
) -> Estimate:
    r"""Krippendorff's alpha for a participants x items array (``NaN`` = not judged).

    .. math::

        \alpha = 1 - \frac{D_o}{D_e} = 1 - (n-1)\,
        \frac{\sum_u \frac{1}{m_u - 1}\sum_{i \ne j \in u} \delta(x_{iu}, x_{ju})}
             {\sum_{c,k} n_c n_k\, \delta(c, k)}

    over the pairable items (``m_u >= 2`` judgements), ``n = sum_u m_u`` pairable values,
    ``n_c`` the pooled frequency of value ``c``. Difference functions ``delta``:
    nominal ``[c != k]``; interval ``(c-k)^2``; ratio ``((c-k)/(c+k))^2`` (values >= 0);
    ordinal ``(sum_{g=c}^{k} n_g - (n_c+n_k)/2)^2``, which equals the interval difference
    between the values' mid-ranks in the pooled pairable values, so ordinal is computed as
    interval on mid-ranks. Nominal and interval/ordinal use closed forms
    (``sum_{i,j}(x_i-x_j)^2 = 2m sum x^2 - 2(sum x)^2``) and are O(values) (ordinal adds a
    sort); ratio has no closed form and sums over pairs of the V distinct values in
    vectorised blocks (O(V^2) time, O(1024 V) memory; ~5 s for V = 40,000 on 2 cores; its
    bootstrap costs O(n_boot V^2), so it suits data with up to a few thousand distinct
    values). No Python loop runs over pairs.

    ``level`` is the level of measurement (``nominal``, ``ordinal``, ``interval``, ``ratio``);
    ``confidence_level`` (0.95: a 95% interval) is the coverage of the CI, a percentile
    bootstrap over items (``n_boot`` samples drawn with ``seed``; a
    sample with no variation is skipped and counted in ``extra["n_boot_valid"]``). For
    nominal, interval and ratio it re-aggregates per-item sufficient statistics with a weight
    matrix; ordinal re-ranks every sample. ``n`` is the number of pairable items;
    ``extra["n_values"]`` the number of pairable values.

    Degenerate cases (DataError): fewer than 2 participants; no item with two judgements;
    all pairable values equal (alpha is 0/0, undefined); negative values with ``ratio``.

    Reference: Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
    https://repository.upenn.edu/asc_papers/43 ; Hayes & Krippendorff (2007), Communication
    Methods and Measures 1(1), 77-89.

    Checked against: the ``krippendorff`` package (``krippendorff.alpha``, all four levels,
    hand-made and random data with missing values, 1e-9) and Krippendorff's (2011) worked
    example (nominal 0.743, interval 0.849, ordinal 0.815, ratio 0.797).

    Examples:
        >>> import numpy as np
        >>> from humeval.stats import krippendorff_alpha
        >>> # 2 participants x 4 items: they agree on 3 items and differ on the last
        >>> ratings = [[1, 2, 3, 3], [1, 2, 3, 4]]
        >>> round(krippendorff_alpha(ratings, "nominal", n_boot=0).estimate, 4)
        0.6957
        >>> # by hand: 8 pairable values, D_o = 2/8, D_e = (8^2 - (2^2 + 2^2 + 3^2 + 1^2)) / (8 * 7) = 46/56,
        >>> # alpha = 1 - (2/8) / (46/56) = 1 - 14/46
        >>> round(1 - 14 / 46, 4)
        0.6957
        >>> # krippendorff.alpha(reliability_data=ratings, level_of_measurement="nominal"); NaN marks a missing judgement
        >>> round(krippendorff_alpha([[1, 2, np.nan], [1, 2, 3]], "nominal", n_boot=0).estimate, 4)
        1.0
    """
    level = check_choice(level, ALPHA_LEVELS, "krippendorff_alpha: level")
    confidence_level = check_confidence_level(confidence_level, "krippendorff_alpha")
    data = as_float_array(ratings, "ratings (participants x items)", 2, allow_nan=True)
    if data.shape[0] < 2:
        raise DataError(
            f"ratings: {data.shape[0]} participant row(s) (shape {data.shape}); alpha needs at least 2. "
            "Pass a participants x items array (transpose an items x participants one)"
        )
    judged = ~np.isnan(data)
    pairable = judged.sum(axis=0) >= 2
    if not pairable.any():
        raise DataError(
            f"no item was judged by two or more participants ({data.shape[1]} item(s), {data.shape[0]} "
            f"participant(s), {int(judged.sum())} judgements); Krippendorff's alpha needs repeated judgements"
        )
    data = data[:, pairable]
    if level == "ratio" and (data[~np.isnan(data)] < 0).any():
        bad = data[~np.isnan(data)].min()
        raise DataError(
            f"ratings: negative value {bad:g} with level='ratio'; ratio data must be >= 0"
        )
    stats_fn = _ALPHA_STATS[level]
    suff = stats_fn(data)
    alpha = float(_alpha_from_totals(suff.within.sum(), suff.n, suff.expected_total()))
    if np.isnan(alpha):
        value = data[~np.isnan(data)][0]
        raise DataError(
            f"ratings: every pairable value is {value:g}; alpha is undefined (0/0) without variation. "
            "Agreement is perfect but not distinguishable from chance"
        )
    n_boot = check_n_boot(n_boot)
    lo = hi = float("nan")
    valid = 0
    reason = None
    if n_boot:
        rng = as_generator(seed)
        if level == "ordinal":
            samples = _bootstrap_alpha_loop(data, stats_fn, rng, n_boot)
        else:
            samples = np.concatenate(
                [suff.bootstrap(w) for w in resample_weights(rng, data.shape[1], n_boot)]
            )
        lo, hi, valid, reason = percentile_ci(samples, confidence_level, alpha)
    return Estimate(
        alpha,
        lo,
        hi,
        float("nan"),
        int(data.shape[1]),
        f"krippendorff_alpha[{level}]",
        {
            "level": level,
            "n_values": int(suff.n),
            "n_boot": n_boot,
            "n_boot_valid": valid,
            "seed": seed if isinstance(seed, int) else "generator",
            "ci_level": confidence_level,
            **no_interval(reason),
        },
    )


def _alpha_from_totals(
    within: np.ndarray | float, n: np.ndarray | float, expected: np.ndarray | float
) -> np.ndarray:
    """Alpha = 1 - (n - 1) within / expected, element-wise (NaN where nothing is expected); 0-d for scalars."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 - (np.asarray(n) - 1.0) * np.asarray(within) / np.asarray(expected)
    alpha: np.ndarray = np.where(np.asarray(expected) <= 0, np.nan, out)
    return alpha


class _Suff:
    """Per-item sufficient statistics for one alpha computation and its bootstrap."""

    def __init__(
        self,
        within: np.ndarray,
        m: np.ndarray,
        expected_total: Callable[[], float],
        bootstrap: Callable[[np.ndarray], np.ndarray],
    ) -> None:
        self.within = within
        self.m = m
        self.n = float(m.sum())
        self.expected_total = expected_total
        self.bootstrap = bootstrap


def _nominal_stats(data: np.ndarray) -> _Suff:
    judged = ~np.isnan(data)
    m = judged.sum(axis=0).astype(float)
    values, codes = np.unique(data[judged], return_inverse=True)
    item_idx = np.nonzero(judged)[1]
    counts = np.zeros((data.shape[1], values.size))
    np.add.at(counts, (item_idx, codes), 1.0)
    within = (m**2 - (counts**2).sum(axis=1)) / (m - 1.0)

    def expected() -> float:
        nc = counts.sum(axis=0)
        return float(nc.sum() ** 2 - (nc**2).sum())

    def boot(w: np.ndarray) -> np.ndarray:
        nc = w @ counts
        nb = nc.sum(axis=1)
        return _alpha_from_totals(w @ within, nb, nb**2 - (nc**2).sum(axis=1))

    return _Suff(within, m, expected, boot)


def _interval_stats(data: np.ndarray) -> _Suff:
    judged = ~np.isnan(data)
    m = judged.sum(axis=0).astype(float)
    centred = data - np.nanmean(data)  # shift-invariant; reduces cancellation
    s1 = np.nansum(centred, axis=0)
    s2 = np.nansum(centred**2, axis=0)
    within = 2.0 * (m * s2 - s1**2) / (m - 1.0)

    def expected() -> float:
        return float(2.0 * (m.sum() * s2.sum() - s1.sum() ** 2))

    def boot(w: np.ndarray) -> np.ndarray:
        nb = w @ m
        return _alpha_from_totals(w @ within, nb, 2.0 * (nb * (w @ s2) - (w @ s1) ** 2))

    return _Suff(within, m, expected, boot)


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their mean rank (``scipy.stats.rankdata(method="average")``)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    first = np.cumsum(counts) - counts  # ranks below each distinct value
    return (first + (counts + 1) / 2.0)[inverse]


def _ordinal_stats(data: np.ndarray) -> _Suff:
    judged = ~np.isnan(data)
    ranked = np.full_like(data, np.nan)
    ranked[judged] = _average_ranks(data[judged])
    return _interval_stats(ranked)


_BLOCK = 1024


def _ratio_delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(total == 0, 0.0, (a - b) / total)
    return d**2


def _ratio_stats(data: np.ndarray) -> _Suff:
    judged = ~np.isnan(data)
    m = judged.sum(axis=0).astype(float)
    n_items = data.shape[1]
    within = np.empty(n_items)
    block = max(1, _BLOCK * 64 // max(data.shape[0] ** 2, 1))
    for start in range(0, n_items, block):  # blocks of items, bounded memory
        x = data[:, start : start + block]
        d = _ratio_delta(x[:, None, :], x[None, :, :])
        within[start : start + block] = np.nansum(d, axis=(0, 1))
    within /= m - 1.0
    values, codes = np.unique(data[judged], return_inverse=True)
    counts = np.zeros((n_items, values.size))
    np.add.at(counts, (np.nonzero(judged)[1], codes), 1.0)

    def quad(nc: np.ndarray) -> np.ndarray:
        """Rows of nc Delta nc^T, Delta built in blocks over the upper triangle (Delta is symmetric)."""
        total = np.zeros(nc.shape[0])
        for start in range(0, values.size, _BLOCK):
            stop = min(start + _BLOCK, values.size)
            block, rest = values[start:stop, None], values[None, start:]
            num = block - rest
            den = block + rest
            den[den == 0] = 1.0  # both values 0: the difference is 0 as well
            np.divide(num, den, out=num)
            np.multiply(num, num, out=num)
            weighted = nc[:, start:stop] @ num  # (m, V - start)
            width = stop - start
            total += (weighted[:, :width] * nc[:, start:stop]).sum(
                axis=1
            )  # the diagonal block, both orders
            total += 2.0 * (weighted[:, width:] * nc[:, stop:]).sum(
                axis=1
            )  # above it, counted twice
        return total

    def expected() -> float:
        return float(quad(counts.sum(axis=0)[None, :])[0])

    def boot(w: np.ndarray) -> np.ndarray:
        nc = w @ counts
        return _alpha_from_totals(w @ within, nc.sum(axis=1), quad(nc))

    return _Suff(within, m, expected, boot)


_ALPHA_STATS: dict[str, Callable[[np.ndarray], _Suff]] = {
    "nominal": _nominal_stats,
    "ordinal": _ordinal_stats,
    "interval": _interval_stats,
    "ratio": _ratio_stats,
}


def _bootstrap_alpha_loop(
    data: np.ndarray, stats_fn: Callable[[np.ndarray], _Suff], rng: np.random.Generator, n_boot: int
) -> np.ndarray:
    """Ordinal: mid-ranks depend on the sample, so each sample is re-ranked (vectorised inside)."""
    n_items = data.shape[1]
    out = np.empty(n_boot)
    for b in range(n_boot):
        sample = data[:, rng.integers(0, n_items, n_items)]
        suff = stats_fn(sample)
        out[b] = float(_alpha_from_totals(suff.within.sum(), suff.n, suff.expected_total()))
    return out


# --------------------------------------------------------------------------- ICC


def icc(scores: object, form: str = "2,1", *, confidence_level: float = 0.95) -> Estimate:
    r"""Intraclass correlation, one of the six Shrout & Fleiss (1979) / McGraw & Wong (1996) forms.

    ``scores`` is an items x participants array (column ``j`` = the ``j``-th judgement of
    each item; with different participants per item, as on a crowd platform, only the
    one-way forms ``1,1`` and ``1,k`` are appropriate). The two-way forms need complete
    data; the one-way forms accept ``NaN`` for items with fewer judgements (unbalanced
    one-way ANOVA, every item needs >= 2 judgements; ``k`` is then the effective group size
    :math:`k_0 = (N - \sum_i m_i^2/N)/(n-1)` of Searle (1971), equal to ``k`` when balanced,
    and the CI is approximate). From the ANOVA mean squares (rows ``MS_R``, columns
    ``MS_C``, residual ``MS_E``, within-rows ``MS_W``) with ``n`` items and ``k`` judgements
    per item:

    ============  ======================================================  ===================
    form          estimate                                                F test (df)
    ============  ======================================================  ===================
    ``1,1``       (MS_R - MS_W) / (MS_R + (k-1) MS_W)                     MS_R/MS_W (n-1, n(k-1))
    ``2,1``       (MS_R - MS_E) / (MS_R + (k-1) MS_E + k (MS_C-MS_E)/n)   MS_R/MS_E (n-1, (n-1)(k-1))
    ``3,1``       (MS_R - MS_E) / (MS_R + (k-1) MS_E)                     MS_R/MS_E
    ``1,k``       (MS_R - MS_W) / MS_R                                    MS_R/MS_W
    ``2,k``       (MS_R - MS_E) / (MS_R + (MS_C - MS_E)/n)                MS_R/MS_E
    ``3,k``       (MS_R - MS_E) / MS_R                                    MS_R/MS_E
    ============  ======================================================  ===================

    ``p_value`` tests ICC = 0 with that F test; the CI at ``confidence_level`` (0.95: the 95%
    interval) is the exact F-based
    interval of McGraw & Wong (1996, Table 7) for forms 1 and 3 and the Satterthwaite
    approximation for form 2 (ICC(A,1)); the ``k`` forms apply Spearman-Brown to it.

    Documented values: perfect consistency (no within-item / residual variation) gives the
    formula's value (1 for forms 1 and 3), ``p_value`` 0, F = inf and a NaN CI.

    Degenerate cases (DataError): missing values in a two-way form; an item with fewer than
    2 judgements; fewer than 2 items or 2 participants; constant scores; identical item
    means (MS_R = 0) (all scores equal, or every item's scores identical): 0/0.

    References: Shrout, P. E. & Fleiss, J. L. (1979). Intraclass correlations: uses in
    assessing rater reliability. Psychological Bulletin 86(2), 420-428. McGraw, K. O. &
    Wong, S. P. (1996). Forming inferences about some intraclass correlation coefficients.
    Psychological Methods 1(1), 30-46. R: ``irr::icc(model=, type=, unit=)``,
    ``psych::ICC``.

    Checked against: ``pingouin.intraclass_corr`` (estimate, F, df, p-value and CI, all six
    forms, random and hand-made data, 1e-9) and the Shrout & Fleiss (1979) Table 2 example
    (0.17, 0.29, 0.71, 0.44, 0.62, 0.91).

    Examples:
        >>> from humeval.stats import icc
        >>> # 4 items, 2 participants; the second always scores one point higher
        >>> scores = [[1, 2], [2, 3], [3, 4], [4, 5]]
        >>> round(icc(scores, "3,1").estimate, 4)  # consistency: a constant offset does not count
        1.0
        >>> round(icc(scores, "2,1").estimate, 4)  # absolute agreement: it does
        0.7692
        >>> # pingouin.intraclass_corr(data, targets=..., raters=..., ratings=...): ICC3 and ICC2; R: psych::ICC(scores)
    """
    form = check_choice(form, ICC_FORMS, "icc: form")
    confidence_level = check_confidence_level(confidence_level, "icc")
    model = form[0]
    x = as_float_array(scores, "scores (items x participants)", 2, allow_nan=model == "1")
    n, k = x.shape
    if n < 2 or k < 2:
        raise DataError(
            f"ICC needs at least 2 items each judged by at least 2 participants; here {n} item(s) and at most "
            f"{k} judgement(s) per item"
        )
    judged = ~np.isnan(x)
    m = judged.sum(axis=1)
    if (m < 2).any():
        bad = int(np.argmax(m < 2))
        raise DataError(
            f"scores: item (row) {bad} has {int(m[bad])} judgement(s); every item needs at least 2"
        )
    total = int(m.sum())
    grand = np.nanmean(x)
    row_means = np.nansum(x, axis=1) / m
    ss_total = float(np.nansum((x - grand) ** 2))
    ss_rows = float((m * (row_means - grand) ** 2).sum())
    ss_within = ss_total - ss_rows
    msr = ss_rows / (n - 1)
    msw = ss_within / (total - n)
    # k0: the effective number of judgements per item (= k when balanced; Searle 1971)
    k_eff = (total - (m**2).sum() / total) / (n - 1)
    if model == "1":
        msc = mse = float("nan")
        denom_ms = msw
        df2 = total - n
        k = k_eff
    else:
        ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
        ss_err = ss_total - ss_rows - ss_cols
        msc = ss_cols / (k - 1)
        mse = ss_err / ((n - 1) * (k - 1))
        denom_ms = mse
        df2 = (n - 1) * (k - 1)
    if ss_total == 0 or (denom_ms <= 1e-12 * ss_total and ss_rows <= 1e-12 * ss_total):
        what = f"equal {grand:g}" if ss_total == 0 else "differ only between participants"
        raise DataError(f"scores: all {total} scores {what}; ICC({form}) is undefined (0/0)")
    if ss_rows <= 1e-12 * ss_total:
        raise DataError(
            f"scores: every item has the same mean score ({grand:g}), so MS_R = 0: ICC({form}) is at or below "
            "its minimum (-1/(k-1), or -inf for the k forms) and the F-based CI is undefined"
        )
    df1 = n - 1
    if denom_ms <= 1e-12 * ss_total:
        # perfect consistency: the formulas hold with MS = 0, F is infinite, the CI is degenerate
        msw = 0.0 if model == "1" else msw
        mse = 0.0 if model != "1" else mse
        f_stat, p_value = float("inf"), 0.0
        if model == "2":
            est_1 = msr / (msr + k * msc / n)
            est_k = msr / (msr + msc / n)
        else:
            est_1 = est_k = 1.0
        lo_1 = hi_1 = lo_k = hi_k = float("nan")
        reason: str | None = ("no interval: the scores show no within-item variation, so the F statistic is "
                              "infinite and the F-based interval is undefined")
    else:
        reason = None
        from scipy import stats as sps  # only ICC needs SciPy (the F distribution)

        f_stat = msr / denom_ms
        p_value = sps.f.sf(f_stat, df1, df2)
        est_1, est_k, (lo_1, hi_1), (lo_k, hi_k) = _icc_with_ci(
            model, msr, msw, mse, msc, n, k, df1, df2, f_stat, confidence_level
        )
    single = form.endswith(",1")
    return Estimate(
        est_1 if single else est_k,
        lo_1 if single else lo_k,
        hi_1 if single else hi_k,
        p_value,
        n,
        f"icc({form})",
        {
            "form": form,
            "F": float(f_stat),
            "df1": int(df1),
            "df2": int(df2),
            "k": float(k),
            "n_judgements": total,
            "ms_rows": float(msr),
            "ms_cols": float(msc),
            "ms_error": float(mse),
            "ms_within": float(msw),
            "ci_level": confidence_level,
            **no_interval(reason),
        },
    )


def _icc_with_ci(
    model: str,
    msr: float,
    msw: float,
    mse: float,
    msc: float,
    n: int,
    k: float,
    df1: int,
    df2: float,
    f_stat: float,
    confidence_level: float,
) -> tuple[float, float, tuple[float, float], tuple[float, float]]:
    """Single and average ICC of one model with their McGraw & Wong (1996) confidence intervals."""
    from scipy import stats as sps

    upper = 1 - (1 - confidence_level) / 2  # the F quantile of a two-sided interval
    fl = f_stat / sps.f.ppf(upper, df1, df2)
    fu = f_stat * sps.f.ppf(upper, df2, df1)
    if model in ("1", "3"):
        ms = msw if model == "1" else mse
        est_1 = (msr - ms) / (msr + (k - 1) * ms)
        est_k = (msr - ms) / msr
        return (
            est_1,
            est_k,
            ((fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1)),
            (1 - 1 / fl, 1 - 1 / fu),
        )
    est_1 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    est_k = (msr - mse) / (msr + (msc - mse) / n)
    # Satterthwaite degrees of freedom (McGraw & Wong 1996, Table 7, case 2A)
    a = k * est_1 / (n * (1 - est_1))
    b = 1 + k * est_1 * (n - 1) / (n * (1 - est_1))
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
    f_up = sps.f.ppf(upper, n - 1, v)
    f_lo = sps.f.ppf(upper, v, n - 1)
    lo_1 = n * (msr - f_up * mse) / (f_up * (k * msc + (k * n - k - n) * mse) + n * msr)
    hi_1 = n * (f_lo * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_lo * msr)
    return (
        est_1,
        est_k,
        (lo_1, hi_1),
        (lo_1 * k / (1 + lo_1 * (k - 1)), hi_1 * k / (1 + hi_1 * (k - 1))),
    )
