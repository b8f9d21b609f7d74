"""Simulating best-of-K identification (BestArmRule + the leader-vs-challenger policy).

Systems have qualities theta_k; a One-Worker judgement of (i, j) prefers i with
P_ij = (c̄ clip(theta_i - theta_j, -1, 1) + 1) / 2 (the pairwise model with difficulty
mean theta_i - theta_j and mean pool capability c̄). All iterations run at once; the
policy and the rule act at check points: each round gives the chosen pair of every
undecided iteration a batch of judgements (binomial), batches grow by 5% per round, so
the rule is checked at a subset of times (which keeps its guarantee) and the Python loop
runs over rounds only (about a hundred), never over judgements or iterations.
Checked against: misidentification rate <= delta in tests/unit/stopping/test_best_arm.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from humeval.errors import HumevalError
from humeval.rng import as_generator
from humeval.simulate._bootstrap import bootstrap_mean_ci
from humeval.stopping.best_arm import BestArmRule

__all__ = ["BestArmResult", "simulate_best_arm"]


@dataclass(frozen=True)
class BestArmResult:
    k: int
    delta: float
    iterations: int
    mean_effort: float
    ci_low: float
    ci_high: float
    decided_share: float
    wrong_share: float
    method: str = "leader vs least-compared challenger; pairwise mixture tests at delta/(K(K-1)/2)"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def simulate_best_arm(quality: Sequence[float], delta: float, *, iterations: int = 200,
                      max_judgements: int = 50000, mean_capability: float = 0.9, seed: int = 21,
                      first_batch: int = 10, growth: float = 1.05) -> BestArmResult:
    """Judgements needed to identify the best of K systems (the one with the highest quality)."""
    q = np.asarray(quality, dtype=float)
    if q.ndim != 1 or q.size < 2:
        raise HumevalError(f"quality needs one value per system (at least 2), got {quality!r}")
    best = int(np.argmax(q))
    if np.sum(q == q[best]) > 1:
        raise HumevalError(f"quality has a tie for the best system: {quality!r}")
    rule = BestArmRule(q.size, delta)
    bound = rule.boundary(max_judgements + 1)
    rng = as_generator(seed)
    k, it = q.size, int(iterations)
    p = (mean_capability * np.clip(q[:, None] - q[None, :], -1, 1) + 1) / 2
    wins = np.zeros((it, k, k), dtype=np.int64)
    active = np.ones((it, k), dtype=bool)
    used = np.zeros(it, dtype=np.int64)
    rows = np.arange(it)
    batch = float(first_batch)
    while True:
        running = (active.sum(axis=1) > 1) & (used < max_judgements)
        if not running.any():
            break
        played = wins + np.transpose(wins, (0, 2, 1))
        won = wins.sum(axis=2)
        share = np.where(played.sum(axis=2) > 0, won / np.maximum(played.sum(axis=2), 1), 0.5)
        leader = np.argmax(np.where(active, share, -1.0), axis=1)
        cnt = played[rows, leader].astype(float)
        cnt[~active] = np.inf
        cnt[rows, leader] = np.inf
        challenger = np.argmin(cnt, axis=1)
        b = np.minimum(int(batch), max_judgements - used) * running
        w = rng.binomial(b, p[leader, challenger])
        wins[rows, leader, challenger] += w
        wins[rows, challenger, leader] += b - w
        used += b
        n = wins[rows, leader, challenger] + wins[rows, challenger, leader]
        a = bound[np.maximum(n, 1) - 1]
        lead_wins = (wins[rows, leader, challenger] >= a) & (n > 0)
        chal_wins = (wins[rows, challenger, leader] >= a) & (n > 0)
        active[rows[lead_wins], challenger[lead_wins]] = False
        active[rows[chal_wins], leader[chal_wins]] = False
        batch *= growth
    decided = active.sum(axis=1) == 1
    winner = np.argmax(active, axis=1)
    wrong = decided & (winner != best)
    lo, hi = bootstrap_mean_ci(used.astype(float), np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(5,))))
    return BestArmResult(k, float(delta), it, float(used.mean()), lo, hi, float(decided.mean()), float(wrong.mean()))
