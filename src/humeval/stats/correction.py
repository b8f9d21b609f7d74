"""Multiple-comparison correction of p-values: Holm and Benjamini-Hochberg."""

from __future__ import annotations

import numpy as np

from humeval.errors import DataError
from humeval.stats._checks import as_float_array, check_choice

__all__ = ["CORRECTIONS", "adjust_pvalues", "benjamini_hochberg", "holm"]

CORRECTIONS = ("holm", "fdr_bh", "bonferroni", "none")


def _pvalues(p: object) -> np.ndarray:
    arr = as_float_array(p, "p-values", 1, allow_nan=False)
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"p-values: entry {i} is {float(arr[i]):g}; p-values must lie in [0, 1]")
    return arr


def holm(p: object) -> np.ndarray:
    r"""Holm (1979) step-down adjusted p-values (family-wise error rate).

    With sorted :math:`p_{(1)} \le \dots \le p_{(m)}`:
    :math:`\tilde p_{(i)} = \min(1, \max_{j \le i} (m - j + 1) p_{(j)})`, returned in input order.

    Reference: Holm, S. (1979). A simple sequentially rejective multiple test procedure.
    Scandinavian Journal of Statistics 6(2), 65-70. R: ``p.adjust(p, "holm")``.

    Checked against: ``statsmodels.stats.multitest.multipletests(method="holm")`` (1e-12).

    Examples:
        >>> from humeval.stats import holm
        >>> # by hand: sorted 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> 0.06 (kept monotone)
        >>> holm([0.01, 0.04, 0.03]).round(4).tolist()  # R: p.adjust(p, "holm")
        [0.03, 0.06, 0.06]
    """
    arr = _pvalues(p)
    m = arr.size
    order = np.argsort(arr, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * arr[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def benjamini_hochberg(p: object) -> np.ndarray:
    r"""Benjamini-Hochberg (1995) step-up adjusted p-values (false discovery rate).

    :math:`\tilde p_{(i)} = \min(1, \min_{j \ge i} \frac{m}{j} p_{(j)})`, returned in input order.

    Reference: Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate.
    JRSS B 57(1), 289-300. R: ``p.adjust(p, "BH")``.

    Checked against: ``statsmodels.stats.multitest.multipletests(method="fdr_bh")`` (1e-12).

    Examples:
        >>> from humeval.stats import benjamini_hochberg
        >>> # by hand: sorted 0.01 x 3/1 = 0.03, 0.03 x 3/2 = 0.045, 0.04 x 3/3 = 0.04; the running minimum from the top
        >>> benjamini_hochberg([0.01, 0.04, 0.03]).round(4).tolist()  # R: p.adjust(p, "BH")
        [0.03, 0.04, 0.04]
    """
    arr = _pvalues(p)
    m = arr.size
    order = np.argsort(arr, kind="stable")
    scaled = arr[order] * m / np.arange(1, m + 1)
    adj = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out = np.empty(m)
    out[order] = adj
    return out


def adjust_pvalues(p: object, method: str = "holm") -> np.ndarray:
    """Adjusted p-values by ``method``: ``holm``, ``fdr_bh`` (Benjamini-Hochberg), ``bonferroni`` or ``none``.

    Examples:
        >>> from humeval.stats import adjust_pvalues
        >>> # Holm by hand: sorted 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> 0.06 (kept monotone)
        >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(4).tolist()  # R: p.adjust(p, "holm")
        [0.03, 0.06, 0.06]
        >>> # R: p.adjust(p, "bonferroni")
        >>> adjust_pvalues([0.01, 0.04, 0.03], "bonferroni").round(4).tolist()
        [0.03, 0.12, 0.09]
    """
    method = check_choice(method, CORRECTIONS, "correction")
    if method == "holm":
        return holm(p)
    if method == "fdr_bh":
        return benjamini_hochberg(p)
    arr = _pvalues(p)
    return np.minimum(1.0, arr * arr.size) if method == "bonferroni" else arr.copy()
