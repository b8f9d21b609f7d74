"""Robbins' normal mixture for a two-sided test of p = 1/2 (``normal-mixture``).

Formula. With ``Z_n = S_n - n/2`` (each outcome minus 1/2 is 1/2-sub-Gaussian, so the
intrinsic time is ``v = n/4``) and a N(0, 1/rho) mixture over the exponent lambda of the
supermartingales ``exp(lambda Z_n - lambda^2 v / 2)``,

    M_n = sqrt(rho / (v + rho)) exp(Z_n^2 / (2 (v + rho))),

and the rule decides A when ``M_n >= 1/delta`` and ``Z_n > 0`` (B when ``Z_n < 0``), i.e. when
``|Z_n| >= sqrt((v + rho) (2 ln(1/delta) + ln((v + rho) / rho)))``.

Guarantee. As for the beta mixture (:mod:`humeval.stopping.mixture`): M is the average of the
half mixtures over lambda > 0 and lambda < 0; when Z_n > 0 the first is at least M, and it is
a nonnegative supermartingale whenever p <= 1/2 (Hoeffding's lemma), so Ville's inequality
bounds the probability of ever deciding A wrongly by delta, and likewise for B, under
continuous monitoring and with no horizon.

Tuning. ``rho`` sets where the boundary is tightest: :func:`rho_for` gives the rho that
minimises it at a chosen number of judgements (Howard, Ramdas, McAuliffe & Sekhon 2021,
section 3.5, by direct minimisation). Reference: Robbins (1970), Ann. Math. Statist. 41(5).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from humeval.errors import HumevalError
from humeval.stopping.base import BoundaryRule

__all__ = ["DEFAULT_TUNED_FOR", "NormalMixtureRule", "normal_mixture_radius", "rho_for"]

#: the number of judgements the default rho is tuned for
DEFAULT_TUNED_FOR = 1000


def normal_mixture_radius(n: np.ndarray | int, delta: float, rho: float) -> np.ndarray:
    """The smallest |S_n - n/2| that decides: sqrt((n/4 + rho) (2 ln(1/delta) + ln((n/4 + rho) / rho)))."""
    v = np.asarray(n, dtype=float) / 4.0
    radius: np.ndarray = np.sqrt((v + rho) * (2.0 * np.log(1.0 / delta) + np.log((v + rho) / rho)))
    return radius


@lru_cache(maxsize=256)
def rho_for(n: int, delta: float) -> float:
    """The rho whose boundary is tightest at ``n`` judgements."""
    from scipy.optimize import (
        minimize_scalar,  # scipy: only when a rule is tuned (not on a light server)
    )

    res = minimize_scalar(lambda r: float(normal_mixture_radius(n, delta, np.exp(r))), bounds=(-10.0, 15.0),
                          method="bounded", options={"xatol": 1e-6})
    return float(np.exp(res.x))


class NormalMixtureRule(BoundaryRule):
    """``normal-mixture``: Robbins' two-sided normal mixture (anytime-valid), tuned by ``rho``."""

    name = "normal-mixture"

    def __init__(self, delta: float, rho: float | None = None) -> None:
        super().__init__(delta)
        self.rho = rho_for(DEFAULT_TUNED_FOR, self.delta) if rho is None else float(rho)
        if not (self.rho > 0.0) or not np.isfinite(self.rho):
            raise HumevalError(f"rho must be a positive number (the mixture's precision), got {rho!r}")

    def a_min(self, n: np.ndarray) -> np.ndarray:
        n = np.atleast_1d(np.asarray(n, dtype=np.int64))
        a = np.ceil(n / 2.0 + normal_mixture_radius(n, self.delta, self.rho) - 1e-9).astype(np.int64)
        a = np.maximum(a, n // 2 + 1)
        return np.where(a <= n, a, n + 1)

    def statistic(self, n: int, s: int) -> float:
        """ln M_n."""
        v, z = n / 4.0, s - n / 2.0
        return float(0.5 * np.log(self.rho / (v + self.rho)) + z * z / (2.0 * (v + self.rho)))

    def describe(self) -> str:
        return f"the normal mixture (rho {self.rho:.3g}, anytime-valid)"

    def __repr__(self) -> str:
        return f"NormalMixtureRule(delta={self.delta:g}, rho={self.rho:g})"
