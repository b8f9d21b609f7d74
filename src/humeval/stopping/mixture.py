"""The recommended anytime-valid rule: a beta-binomial mixture likelihood ratio (``anytime``).

Formula. With S = S_n successes out of n and a symmetric Beta(a, a) prior on p,

    M_n = ∫ prod_i (p / (1/2))^{X_i} ((1 - p) / (1/2))^{1 - X_i} Beta(p; a, a) dp
        = 2^n B(a + S, a + n - S) / B(a, a),

the Bayes factor of the mixture against p = 1/2. Decide A when M_n >= 1/delta and
S > n/2, B when M_n >= 1/delta and S < n/2.

Guarantee. Under p = 1/2, M is a nonnegative martingale with M_0 = 1, so by Ville's
inequality P(sup_n M_n >= 1/delta) <= delta: the chance of ever deciding is <= delta.
Write M = (M+ + M-)/2 with M+ (M-) the mixture over the half prior p > 1/2 (< 1/2). When
S > n/2, M+ >= M- and so M+ >= M >= 1/delta; M+ is a nonnegative supermartingale whenever
p <= 1/2 (each factor has mean 1 + (2q - 1)(2p - 1) <= 1), so P(decide A | p <= 1/2)
<= delta, and symmetrically for B. Hence the probability of ever deciding wrongly is at
most delta for every p, under continuous monitoring, with no horizon.

Efficiency. The prior strength ``a`` sets the effect sizes the rule is tuned for (prior
s.d. of p is 1 / (2 sqrt(2a + 1))); the default a = 14 (s.d. 0.093) minimises, over delta
0.05 / 0.01 / 0.001 and effects mu = 0.03 ... 0.4 (p = (1 + mu)/2), the worst ratio of its
expected judgements to the best of four anytime-valid rules (this rule at a = 20, a beta and a
normal mixture tuned for 1,000 judgements, and a betting test): 1.134 against 1.208 for a = 20
(``benchmarks/bench_rules.py``; docs/stopping.md has the table). A study that expects a
particular effect declares ``stopping.tuned_for`` (``humeval plan`` recommends one).

References: Robbins (1970), "Statistical methods related to the law of the iterated
logarithm", Ann. Math. Statist. 41(5); Ville (1939); Howard, Ramdas, McAuliffe, Sekhon
(2021), "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist.
49(2) (conjugate mixtures); Waudby-Smith & Ramdas (2023), JRSS-B 86(1).
Checked against: direct numerical integration of the mixture (scipy.integrate.quad) in
tests/unit/stopping/test_mixture.py, and measured null error rates <= delta.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from humeval.errors import HumevalError
from humeval.stopping.base import BoundaryRule

__all__ = ["DEFAULT_PRIOR_STRENGTH", "BetaMixtureRule", "log_mixture_ratio", "prior_strength_for"]

#: Beta(a, a) prior strength of the recommended rule (see the module docstring)
DEFAULT_PRIOR_STRENGTH = 14.0


_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _lgamma(x: np.ndarray) -> np.ndarray:
    """ln Γ(x) for x > 0, elementwise: Stirling's series for x >= 10 (absolute error below 1e-14),
    :func:`math.lgamma` below. NumPy has no lgamma, and the live server must not need SciPy."""
    x = np.asarray(x, dtype=float)
    big = x >= 10.0
    xb = np.where(big, x, 10.0)
    inv, inv2 = 1.0 / xb, 1.0 / (xb * xb)
    series = inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (1 / 1680 - inv2 / 1188))))
    out: np.ndarray = (xb - 0.5) * np.log(xb) - xb + _HALF_LOG_2PI + series
    if not big.all():
        out = np.where(big, out, np.asarray(_LGAMMA(np.where(big, 1.0, x)), dtype=float))
    return out


def _betaln(x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
    """ln B(x, y) = ln Γ(x) + ln Γ(y) - ln Γ(x + y), elementwise (``scipy.special.betaln``)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    betaln: np.ndarray = _lgamma(x) + _lgamma(y) - _lgamma(x + y)
    return betaln


def log_mixture_ratio(n: np.ndarray | int, s: np.ndarray | float, a: float) -> np.ndarray:
    """ln M_n = n ln 2 + ln B(a + S, a + n - S) - ln B(a, a)."""
    n = np.asarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    ratio: np.ndarray = n * np.log(2.0) + _betaln(a + s, a + n - s) - _betaln(a, a)
    return ratio


@lru_cache(maxsize=256)
def prior_strength_for(n: int, delta: float) -> float:
    """The prior strength ``a`` whose boundary is tightest at ``n`` judgements.

    Minimises over ``a`` the real-valued success count ``s > n/2`` at which ln M_n = ln(1/delta).
    """
    from scipy.optimize import brentq, minimize_scalar

    threshold = math.log(1.0 / delta)

    def crossing(log_a: float) -> float:
        a = float(np.exp(log_a))
        def f(s: float) -> float:
            return float(log_mixture_ratio(n, s, a)) - threshold

        return n + 1.0 if f(float(n)) < 0 else float(brentq(f, n / 2.0, float(n), xtol=1e-9))

    res = minimize_scalar(crossing, bounds=(np.log(0.05), np.log(1e6)), method="bounded", options={"xatol": 1e-5})
    return float(np.exp(res.x))


class BetaMixtureRule(BoundaryRule):
    """``mixture`` (alias ``anytime``): two-sided beta-binomial mixture test martingale."""

    name = "mixture"

    def __init__(self, delta: float, prior_strength: float = DEFAULT_PRIOR_STRENGTH, *, name: str = "mixture") -> None:
        a = float(prior_strength)
        if not (a > 0.0) or not np.isfinite(a):
            raise HumevalError(f"prior_strength must be a positive number (Beta(a, a) prior), got {prior_strength!r}")
        self.prior_strength = a
        self.name = name
        super().__init__(delta)

    def a_min(self, n: np.ndarray) -> np.ndarray:
        return _a_min(np.atleast_1d(np.asarray(n, dtype=np.int64)), self.delta, self.prior_strength)

    def boundary(self, horizon: int) -> np.ndarray:
        return _cached_boundary(int(horizon), self.delta, self.prior_strength)

    def statistic(self, n: int, s: int) -> float:
        """ln M_n, the log evidence against p = 1/2 (decide at ln(1/delta))."""
        return float(log_mixture_ratio(n, s, self.prior_strength))

    def describe(self) -> str:
        return f"the Beta({self.prior_strength:g}, {self.prior_strength:g}) mixture martingale (anytime-valid)"

    def __repr__(self) -> str:
        return f"BetaMixtureRule(delta={self.delta:g}, prior_strength={self.prior_strength:g})"


@lru_cache(maxsize=64)
def _cached_boundary(horizon: int, delta: float, a: float) -> np.ndarray:
    out = _a_min(np.arange(1, horizon + 1, dtype=np.int64), delta, a)
    out.flags.writeable = False
    return out


def _a_min(n: np.ndarray, delta: float, a: float) -> np.ndarray:
    """Smallest S > n/2 with ln M_n(S) >= ln(1/delta), by bisection for all n at once."""
    threshold = np.log(1.0 / delta)
    lo = n // 2 + 1  # smallest S with S > n/2
    hi = n.copy()
    possible = log_mixture_ratio(n, hi, a) >= threshold
    # ln M is increasing in S for S > n/2: bisection on [lo, hi] for all n at once
    lo_b, hi_b = lo.copy(), np.maximum(hi, lo)
    for _ in range(int(np.ceil(np.log2(max(int(n.max()), 2)))) + 2):
        mid = (lo_b + hi_b) // 2
        ok = log_mixture_ratio(n, mid, a) >= threshold
        hi_b = np.where(ok, mid, hi_b)
        lo_b = np.where(ok, lo_b, mid + 1)
    return np.where(possible, hi_b, n + 1)
