"""Exact operating characteristics of a two-sided boundary rule on counts: no simulation.

A rule that decides A when the successes ``S_n >= a_min(n)`` and B when ``n - S_n >= a_min(n)``
(every :class:`~humeval.stopping.base.BoundaryRule`) is a pair of absorbing barriers for the
random walk ``S_n`` with success probability ``p``. :func:`operating_characteristics` carries
the probability mass of the paths not yet stopped forward one judgement at a time (only the
band between the barriers, a few thousand cells, so every step is one vectorised update) and
returns, up to ``horizon``, the probability of deciding A, of deciding B, of not deciding, and
the expected number of judgements ``E[min(tau, horizon)]``: exact up to floating point, with no
Monte Carlo error, where a simulation of 4,000 runs has a standard error of 1-2 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["OperatingCharacteristics", "kl_half", "operating_characteristics", "wald_bound"]


@dataclass(frozen=True)
class OperatingCharacteristics:
    """What a rule does at success probability ``p`` within ``horizon`` judgements."""

    p: float
    horizon: int
    decide_a: float
    decide_b: float
    undecided: float
    expected_n: float

    @property
    def wrong(self) -> float:
        """The probability of a wrong decision (B when p > 1/2, A when p < 1/2; any decision at p = 1/2)."""
        if self.p > 0.5:
            return self.decide_b
        if self.p < 0.5:
            return self.decide_a
        return self.decide_a + self.decide_b


def kl_half(p: float) -> float:
    """KL(Bernoulli(p) || Bernoulli(1/2)) in nats."""
    p = float(p)
    if p in (0.0, 1.0):
        return math.log(2.0)
    return p * math.log(2 * p) + (1 - p) * math.log(2 * (1 - p))


def wald_bound(delta: float, p: float) -> float:
    """Wald's lower bound on the expected judgements of any test with error ``delta`` when the truth is ``p``.

    ln(1/delta) / KL(p || 1/2) (inf when p = 1/2; Wald 1945; Kaufmann, Cappé & Garivier 2016, JMLR 17, Lemma 1).
    """
    k = kl_half(p)
    return math.inf if k == 0.0 else math.log(1.0 / delta) / k


def operating_characteristics(a_min: np.ndarray, p: float, *, tol: float = 1e-10) -> OperatingCharacteristics:
    """Decision probabilities and ``E[min(tau, horizon)]`` of the boundary ``a_min`` (``a_min[n-1]`` for n = 1..horizon).

    ``a_min[n-1] > n`` means no decision is possible at n. The walk stops early when the mass
    still undecided falls below ``tol`` (its contribution to the expectation is then below
    ``tol * horizon``).
    """
    a_min = np.asarray(a_min, dtype=np.int64)
    horizon = int(a_min.size)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    mass = np.zeros(horizon + 2)
    mass[0] = 1.0  # S_0 = 0 with probability 1
    lo = hi = 0  # live band of S: [lo, hi]
    decide_a = decide_b = 0.0
    expected = 0.0
    alive = 1.0
    for n in range(1, horizon + 1):
        expected += alive  # P(tau >= n) = P(tau > n - 1)
        band = mass[lo:hi + 1]
        new = np.empty(hi - lo + 2)
        new[0] = (1 - p) * band[0]
        new[1:-1] = (1 - p) * band[1:] + p * band[:-1]
        new[-1] = p * band[-1]
        lo_n, hi_n = lo, hi + 1
        mass[lo_n:hi_n + 1] = new
        a = int(a_min[n - 1])
        if a <= n:
            up = max(a, lo_n)
            if up <= hi_n:
                decide_a += float(mass[up:hi_n + 1].sum())
                mass[up:hi_n + 1] = 0.0
                hi_n = up - 1
            down = min(n - a, hi_n)  # S <= n - a: B has at least a wins
            if down >= lo_n:
                decide_b += float(mass[lo_n:down + 1].sum())
                mass[lo_n:down + 1] = 0.0
                lo_n = down + 1
        lo, hi = lo_n, hi_n
        alive = float(mass[lo:hi + 1].sum()) if hi >= lo else 0.0
        if alive < tol:
            break
    return OperatingCharacteristics(p, horizon, decide_a, decide_b, max(alive, 0.0), expected)
