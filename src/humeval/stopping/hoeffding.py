"""The paper's rule: a fixed-delta Hoeffding bound re-checked after every request.

Formula (Thorleiksdottir et al. 2022, eqs. 1-4): with t_n = sqrt(ln(1/delta) / (2 n)),
decide A when  X̄_n - t_n > 1/2  and B when  X̄_n + t_n < 1/2  (first passage, two-sided
as in the paper's footnote 2). The bound is valid for one n fixed in advance; checked after
every request it is *not* (optional stopping): under the null the chance of ever deciding
exceeds delta, e.g. 0.7% instead of 0.1% at delta = 0.001 and about 27% instead of 5% at
delta = 0.05 for horizons of 5,000 requests (measured, see docs/stopping.md).

Reference: Hoeffding (1963), JASA 58(301); Thorleiksdottir, Renggli, Hollenstein, Zhang,
"Dynamic Human Evaluation for Relative Model Comparisons", LREC 2022, section 3.2.
Checked against: a per-step Python loop of the paper's inequality
(tests/unit/stopping/test_hoeffding.py) and the null error rates quoted in issue 3.
"""

from __future__ import annotations

import numpy as np

from humeval.stopping.base import BoundaryRule

__all__ = ["HoeffdingRule", "hoeffding_radius"]


def hoeffding_radius(n: np.ndarray | int, delta: float) -> np.ndarray:
    """t_n = sqrt(ln(1/delta) / (2 n)) (one-sided Hoeffding radius for a fixed n)."""
    radius: np.ndarray = np.sqrt(np.log(1.0 / delta) / (2.0 * np.asarray(n, dtype=float)))
    return radius


class HoeffdingRule(BoundaryRule):
    """``hoeffding``: the rule as the paper describes it (not anytime-valid)."""

    name = "hoeffding"

    def a_min(self, n: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=np.int64)
        # S/n - t > 1/2  <=>  S > n (1/2 + t)
        return np.floor(n * (0.5 + hoeffding_radius(n, self.delta)) + 1e-9).astype(np.int64) + 1

    def statistic(self, n: int, s: int) -> float:
        """The lower Hoeffding bound X̄ - t_n."""
        return float(s / n - hoeffding_radius(n, self.delta))

    def describe(self) -> str:
        return "the fixed-n Hoeffding bound (paper; not valid under continuous monitoring)"
