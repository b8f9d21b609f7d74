"""Percentile bootstrap CI of a mean (vectorised resampling)."""

from __future__ import annotations

import numpy as np

__all__ = ["bootstrap_mean_ci"]


def bootstrap_mean_ci(
    x: np.ndarray, rng: np.random.Generator, level: float = 0.99, resamples: int = 2000
) -> tuple[float, float]:
    """Percentile bootstrap interval for mean(x): quantiles (1 -+ level)/2 of resampled means.

    Reference: Efron & Tibshirani (1993), ch. 13. Empty input gives (nan, nan).
    Checked against: scipy.stats.bootstrap(method="percentile") in tests/unit/simulate/test_bootstrap.py.
    """
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return float("nan"), float("nan")
    idx = rng.integers(0, x.size, (resamples, x.size))
    means = x[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)
