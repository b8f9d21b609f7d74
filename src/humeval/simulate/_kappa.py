"""Fleiss' kappa (private helper; to be unified with humeval.stats when that lands).

Formula: for N items each rated by n raters into k categories with counts n_ij,
P_i = (sum_j n_ij^2 - n) / (n (n - 1)), P̄ = mean_i P_i, p_j = sum_i n_ij / (N n),
P_e = sum_j p_j^2, kappa = (P̄ - P_e) / (1 - P_e).
Reference: Fleiss (1971), "Measuring nominal scale agreement among many raters",
Psychological Bulletin 76(5). Checked against: statsmodels.stats.inter_rater.fleiss_kappa
(tests/unit/simulate/test_kappa.py) and the data card's 0.686 / 0.273 / 0.385.
"""

from __future__ import annotations

import numpy as np

from humeval.errors import HumevalError

__all__ = ["fleiss_kappa", "fleiss_kappa_binary"]


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa from an (items, categories) count table with equal raters per item."""
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2 or c.shape[0] < 1 or c.shape[1] < 2:
        raise HumevalError(f"fleiss_kappa needs an (items, categories>=2) count table, got shape {c.shape}")
    n = c.sum(axis=1)
    if not np.all(n == n[0]) or n[0] < 2:
        raise HumevalError("fleiss_kappa needs the same number (>= 2) of ratings for every item")
    raters = n[0]
    p_i = ((c**2).sum(axis=1) - raters) / (raters * (raters - 1))
    p_j = c.sum(axis=0) / c.sum()
    p_e = float((p_j**2).sum())
    if p_e == 1.0:
        return float("nan")
    return float((p_i.mean() - p_e) / (1.0 - p_e))


def fleiss_kappa_binary(votes: np.ndarray) -> float:
    """Fleiss' kappa of an (items, raters) 0/1 matrix."""
    v = np.asarray(votes)
    ones = v.sum(axis=1)
    return fleiss_kappa(np.column_stack([ones, v.shape[1] - ones]))
