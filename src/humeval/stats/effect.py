"""Effect sizes: Cohen's d, rank-biserial correlation, eta squared."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from humeval.errors import DataError
from humeval.stats._checks import as_float_array, check_confidence_level
from humeval.stats._result import Estimate

__all__ = ["cohens_d", "eta_squared", "rank_biserial"]


def _pair(x: object, y: object, paired: bool) -> tuple[np.ndarray, np.ndarray]:
    a = as_float_array(x, "x", 1, allow_nan=False)
    b = as_float_array(y, "y", 1, allow_nan=False)
    if paired and a.size != b.size:
        raise DataError(
            f"paired data: x has {a.size} values but y has {b.size}; pairs need equal lengths"
        )
    if a.size < 2 or b.size < 2:
        raise DataError(f"x and y need at least 2 values each, got {a.size} and {b.size}")
    return a, b


def cohens_d(
    x: object, y: object, *, paired: bool = False, confidence_level: float = 0.95
) -> Estimate:
    r"""Cohen's d: mean difference over a standard deviation.

    Unpaired: :math:`d = (\bar x - \bar y) / s_p`,
    :math:`s_p = \sqrt{((n_x-1)s_x^2 + (n_y-1)s_y^2)/(n_x+n_y-2)}`.
    Paired (``d_av``, Cumming 2012): :math:`d = \overline{x-y} / \sqrt{(s_x^2+s_y^2)/2}`.
    CI: :math:`d \pm t_{1-\alpha/2, n_x+n_y-2}\, se` with
    :math:`se = \sqrt{(n_x+n_y)/(n_x n_y) + d^2/(2(n_x+n_y))}` (Hedges & Olkin 1985); for
    paired data with ``n`` pairs, :math:`se = \sqrt{1/n + d^2/(2n)}` and n-1 df;
    :math:`1 - \alpha` = ``confidence_level`` (0.95: the 95% interval).

    Degenerate case: zero standard deviation (constant scores) raises DataError.

    Reference: Cohen, J. (1988). Statistical power analysis for the behavioral sciences.
    Lakens, D. (2013). Frontiers in Psychology 4, 863.

    Checked against: ``pingouin.compute_effsize(eftype="cohen")`` (paired and unpaired, 1e-9)
    and ``pingouin.compute_esci`` for the unpaired CI.

    Examples:
        >>> from humeval.stats import cohens_d
        >>> # means 4 and 3, both standard deviations 2: d = (4 - 3) / 2
        >>> # pingouin.compute_effsize(x, y, eftype="cohen")
        >>> round(cohens_d([2, 4, 6], [1, 3, 5]).estimate, 4)
        0.5
    """
    confidence_level = check_confidence_level(confidence_level, "cohens_d")
    a, b = _pair(x, y, paired)
    if paired:
        sd = np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2.0)
    else:
        sd = np.sqrt(
            ((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / (a.size + b.size - 2)
        )
    if sd == 0:
        raise DataError(
            f"cohens_d: both samples are constant ({a[0]:g}, {b[0]:g}); d is undefined (0 SD)"
        )
    d = (a.mean() - b.mean()) / sd
    if paired:
        se = np.sqrt(1.0 / a.size + d**2 / (2.0 * a.size))
    else:
        se = np.sqrt((a.size + b.size) / (a.size * b.size) + d**2 / (2.0 * (a.size + b.size)))
    df = a.size - 1 if paired else a.size + b.size - 2
    q = sps.t.ppf(1 - (1 - confidence_level) / 2, df)
    return Estimate(
        d,
        d - q * se,
        d + q * se,
        float("nan"),
        a.size if paired else a.size + b.size,
        "cohens_d_av" if paired else "cohens_d",
        {"se": float(se), "paired": paired},
    )


def rank_biserial(x: object, y: object, *, paired: bool = False) -> Estimate:
    r"""Rank-biserial correlation, the effect size of Mann-Whitney and Wilcoxon signed-rank tests.

    Unpaired (Wendt 1972): :math:`r = 1 - 2U_y/(n_x n_y) = P(X>Y) - P(X<Y)`, ties counted as
    half. Paired (matched pairs, Kerby 2014): :math:`r = (R^+ - R^-)/(R^+ + R^-)` over the
    ranks of the non-zero absolute differences. Range [-1, 1]; positive when ``x`` tends
    to be larger.

    Degenerate case: all paired differences zero raises DataError (r is 0/0).

    Reference: Kerby, D. S. (2014). The simple difference formula. Comprehensive Psychology 3.

    Checked against: the ``RBC`` column of ``pingouin.mwu`` and ``pingouin.wilcoxon`` (1e-12).

    Examples:
        >>> from humeval.stats import rank_biserial
        >>> # of the 9 pairs (x, y), x is larger in 6 and smaller in 3: (6 - 3) / 9
        >>> round(rank_biserial([3, 4, 5], [1, 2, 6]).estimate, 4)  # pingouin.mwu(x, y)["RBC"]
        0.3333
    """
    a, b = _pair(x, y, paired)
    if not paired:
        diff = a[:, None] - b[None, :]
        r = float((np.sign(diff)).mean())
        return Estimate(r, n=a.size + b.size, method="rank_biserial")
    d = a - b
    d = d[d != 0]
    if d.size == 0:
        raise DataError(f"rank_biserial: all {a.size} paired differences are zero; r is undefined")
    ranks = sps.rankdata(np.abs(d))
    r = float((ranks[d > 0].sum() - ranks[d < 0].sum()) / ranks.sum())
    return Estimate(r, n=a.size, method="rank_biserial_paired", extra={"n_nonzero": int(d.size)})


def eta_squared(groups: Sequence[object]) -> Estimate:
    r"""Eta squared of a one-way design: :math:`\eta^2 = SS_{between} / SS_{total}`.

    Reference: Cohen (1973); Lakens (2013).

    Checked against: ``pingouin.anova(..., effsize="np2")`` (one-way: eta^2 = partial eta^2, 1e-12).

    Examples:
        >>> from humeval.stats import eta_squared
        >>> # grand mean 3.5: SS_between = 3 x 1.5^2 x 2 = 13.5, SS_total = 17.5, eta^2 = 13.5 / 17.5
        >>> round(eta_squared([[1, 2, 3], [4, 5, 6]]).estimate, 4)
        0.7714
    """
    arrays = [as_float_array(g, f"group {i}", 1, allow_nan=False) for i, g in enumerate(groups)]
    if len(arrays) < 2:
        raise DataError(f"eta_squared: need at least 2 groups, got {len(arrays)}")
    allv = np.concatenate(arrays)
    ss_total = ((allv - allv.mean()) ** 2).sum()
    if ss_total == 0:
        raise DataError(
            f"eta_squared: every value is {allv[0]:g}; eta squared is undefined (0 variance)"
        )
    ss_between = sum(g.size * (g.mean() - allv.mean()) ** 2 for g in arrays)
    return Estimate(ss_between / ss_total, n=allv.size, method="eta_squared")
