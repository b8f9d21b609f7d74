"""A simulated arena crowd with planted bad voters (Min et al. 2025), for the per-participant outlier test.

:func:`planted_crowd`: ``k`` models with Bradley-Terry strengths evenly spaced in [-1.2, 1.2], ``honest`` honest
voters and ``bad`` of each bad kind: ``random`` (a coin flip), ``always-a`` (the output shown first), ``rigger``
(votes for the model ``rigged`` whenever it is shown, brings it into half of its battles, honest otherwise). Pairs
are drawn uniformly, sides at random; every voter casts ``votes`` votes. Vectorised: one draw per array.
"""

from __future__ import annotations

import numpy as np

__all__ = ["VOTER_KINDS", "planted_crowd"]

#: the voter kinds, in the order of :func:`planted_crowd`'s ``kind`` codes
VOTER_KINDS = ("honest", "random", "always-a", "rigger")


def planted_crowd(rng: np.random.Generator, votes: int, *, honest: int = 60, bad: int = 5, k: int = 8,
                  rigged: int = 6) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(participant, model_a, model_b, a_won, kind)``, one entry per vote (module docstring); ``kind`` indexes
    :data:`VOTER_KINDS`, models are named ``m0`` (strongest) .. ``m{k-1}``."""
    theta = np.linspace(1.2, -1.2, k)
    kinds = np.repeat(np.arange(4), [honest, bad, bad, bad])
    n = kinds.size * votes
    kind = np.repeat(kinds, votes)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    seek = (kind == 3) & (rng.random(n) < 0.5) & (a != rigged) & (b != rigged)  # a rigger brings its model in
    a_side = rng.random(n) < 0.5
    a = np.where(seek & a_side, rigged, a)
    b = np.where(seek & ~a_side, rigged, b)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    won = (rng.random(n) < p).astype(float)
    won = np.where(kind == 1, (rng.random(n) < 0.5).astype(float), won)
    won = np.where(kind == 2, 1.0, won)
    won = np.where((kind == 3) & (a == rigged), 1.0, np.where((kind == 3) & (b == rigged), 0.0, won))
    who = np.repeat(np.array([f"v{i:03d}" for i in range(kinds.size)]), votes)
    names = np.array([f"m{i}" for i in range(k)])
    return who, names[a], names[b], won, kind
