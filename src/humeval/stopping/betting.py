"""A betting test of p = 1/2 (Waudby-Smith & Ramdas 2024, JRSS-B 86(1)): a reference, not a live rule.

Two gamblers bet on the outcomes ``X_i`` in {0, 1}: one that p > 1/2 with wealth
``K+_n = prod (1 + l_i (X_i - 1/2))``, one that p < 1/2 with ``K-_n = prod (1 - l_i (X_i - 1/2))``.
The bet is the paper's adaptive GRAPA (aGRAPA, their section 5.2), the growth-rate-optimal bet
under the current estimates, which suits a test better than the predictable plug-in tuned for
interval width (measured: PrPl needs 3.7x Wald's bound at mu = 0.1, aGRAPA about half that):

    l*_i = (mu_{i-1} - 1/2) / (sigma2_{i-1} + (mu_{i-1} - 1/2)^2),
    K+ bets min(max(l*_i, 0), 1), K- bets min(max(-l*_i, 0), 1)  (truncation c / m with c = 1/2),
    mu_i = (1/2 + sum_{j<=i} X_j) / (i + 1),  sigma2_i = (1/4 + sum_{j<=i} (X_j - mu_j)^2) / (i + 1).

The rule decides A when the hedged wealth ``(K+ + K-)/2 >= 1/delta`` and ``K+ > K-`` (B when
``K- > K+``). ``K+`` is a nonnegative supermartingale whenever p <= 1/2, so Ville's inequality
bounds a wrong A by delta, and likewise B. The bet depends on the whole path, not only on the
counts, so this rule has no boundary on counts: :func:`betting_paths` runs it on simulated
paths, vectorised over paths, for the comparison in ``benchmarks/bench_rules.py``.
"""

from __future__ import annotations

import numpy as np

from humeval.stopping.decision import PathDecisions

__all__ = ["betting_paths"]


def betting_paths(outcomes: np.ndarray, delta: float) -> PathDecisions:
    """Decisions on paths ``outcomes`` (runs x horizon, 0/1): the first n where the hedged wealth reaches 1/delta."""
    x = np.asarray(outcomes, dtype=float)
    runs, horizon = x.shape
    log_up = np.zeros(runs)
    log_down = np.zeros(runs)
    mean_sum = np.full(runs, 0.5)  # 1/2 + sum X_j
    var_sum = np.full(runs, 0.25)  # 1/4 + sum (X_j - mu_j)^2
    stop = np.zeros(runs, dtype=np.int64)
    outcome = np.zeros(runs, dtype=np.int8)
    live = np.ones(runs, dtype=bool)
    threshold = np.log(1.0 / delta) + np.log(2.0)  # (K+ + K-)/2 >= 1/delta
    for i in range(1, horizon + 1):
        sigma2 = var_sum / i  # sigma2_{i-1} = (1/4 + sum_{j<i} ...) / i
        gap = mean_sum / i - 0.5  # mu_{i-1} - 1/2
        bet = gap / (sigma2 + gap * gap)
        xi = x[:, i - 1] - 0.5
        log_up += np.log1p(np.clip(bet, 0.0, 1.0) * xi)
        log_down += np.log1p(-np.clip(-bet, 0.0, 1.0) * xi)
        mean_sum += x[:, i - 1]
        mu = mean_sum / (i + 1)
        var_sum += (x[:, i - 1] - mu) ** 2
        hedged = np.logaddexp(log_up, log_down)
        hit = live & (hedged >= threshold)
        if hit.any():
            stop[hit] = i
            outcome[hit] = np.where(log_up[hit] > log_down[hit], 1, -1)
            live &= ~hit
            if not live.any():
                break
    return PathDecisions(n=stop, outcome=outcome)
