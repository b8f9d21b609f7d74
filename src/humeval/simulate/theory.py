"""Closed-form quantities of the model: expected label share and the Wald effort bound.

Wald's bound: any test that decides between p > 1/2 and p < 1/2 with error <= delta needs
on average at least ln(1/delta) / KL(p || 1/2) outcomes when the truth is p (for small
delta; Wald 1945, Sequential analysis; lower bound of e.g. Kaufmann, Cappé, Garivier 2016
JMLR 17, Lemma 1). KL(p || 1/2) = p ln(2p) + (1 - p) ln(2(1 - p)).
E[clip(X, -1, 1)] for X ~ N(mu, s^2): P(X > 1) - P(X < -1) + mu (Φ(β) - Φ(α)) + s (φ(α) - φ(β)),
α = (-1 - mu)/s, β = (1 - mu)/s; Φ and φ from ``math.erfc`` and ``math.exp`` (the
simulation's bound column does not import SciPy for them).
Checked against: Monte Carlo means in tests/unit/simulate/test_theory.py; the issue's
bounds 271 / 1089 / 4364 at delta = 0.001.
"""

from __future__ import annotations

import math

import numpy as np

from humeval.stopping.exact import kl_half, wald_bound  # the bound lives with the rules it bounds

__all__ = ["expected_difficulty", "kl_half", "one_worker_share", "wald_bound"]


def expected_difficulty(mu: float, var: float) -> float:
    """E[clip(d, -1, 1)] for d ~ N(mu, var)."""
    if var <= 0:
        return float(np.clip(mu, -1.0, 1.0))
    s = float(np.sqrt(var))
    a, b = (-1 - mu) / s, (1 - mu) / s
    inside = mu * (_cdf(b) - _cdf(a)) + s * (_pdf(a) - _pdf(b))
    return float(_cdf(-b) - _cdf(a) + inside)


def _cdf(x: float) -> float:
    """Φ(x), the standard normal CDF, as ``0.5 erfc(-x / sqrt 2)`` (accurate in both tails)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _pdf(x: float) -> float:
    """φ(x), the standard normal density."""
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def one_worker_share(mean_capability: float, mu: float, var: float) -> float:
    """p = (c̄ E[d] + 1) / 2: the share of One-Worker labels for A."""
    return (mean_capability * expected_difficulty(mu, var) + 1.0) / 2.0
