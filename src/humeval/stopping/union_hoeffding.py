"""Anytime-valid baseline: Hoeffding with a union bound over all n.

Formula: spend delta_n = delta / (n (n + 1)) at step n (sum over n >= 1 is delta) and
split it over the two sides: t_n = sqrt(ln(2 n (n + 1) / delta) / (2 n)). Decide A when
X̄_n - t_n > 1/2, B when X̄_n + t_n < 1/2. Then for every p,
P(exists n: |X̄_n - p| >= t_n) <= sum_n 2 exp(-2 n t_n^2) = delta, so the probability of
ever deciding wrongly is at most delta under continuous monitoring. Simple and valid, but
about twice as expensive as the mixture rule (the ln n(n+1) term grows with n).

Reference: Hoeffding (1963); union-bound ("naive") confidence sequences, e.g. Howard,
Ramdas, McAuliffe, Sekhon (2021), Ann. Statist. 49(2), section 1.
Checked against: the null error rate in tests/unit/stopping/test_validity.py (<= delta).
"""

from __future__ import annotations

import numpy as np

from humeval.stopping.base import BoundaryRule

__all__ = ["UnionHoeffdingRule", "union_radius"]


def union_radius(n: np.ndarray | int, delta: float) -> np.ndarray:
    """t_n = sqrt(ln(2 n (n+1) / delta) / (2 n))."""
    n = np.asarray(n, dtype=float)
    return np.sqrt(np.log(2.0 * n * (n + 1.0) / delta) / (2.0 * n))


class UnionHoeffdingRule(BoundaryRule):
    """``hoeffding-union``: the simple anytime-valid baseline."""

    name = "hoeffding-union"

    def a_min(self, n: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=np.int64)
        return np.floor(n * (0.5 + union_radius(n, self.delta)) + 1e-9).astype(np.int64) + 1

    def statistic(self, n: int, s: int) -> float:
        """The lower anytime bound X̄ - t_n."""
        return float(s / n - union_radius(n, self.delta))

    def describe(self) -> str:
        return "the union-bound Hoeffding sequence (anytime-valid)"
