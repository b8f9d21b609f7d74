"""Vectorised votes and labels of a labelling strategy on many iterations at once.

For a block of B iterations x H requests the simulator draws, per potential vote k <
max_workers, a worker index (the same worker for a whole iteration under Fixed Worker;
distinct workers within a request when the strategy asks for them, drawn without
replacement by the shift-and-insert method), and a uniform u: vote = u < P(worker,
request). No Python loop runs over requests, labels or iterations; the only loop is over
the k <= N votes of a request. When workers are drawn independently with replacement
(One Worker, Max-3 in parity mode) and there is no position bias, the worker draw is
integrated out exactly: P(vote = 1 | d) = (c̄ d + 1) / 2 because P is linear in c.
Checked against: tests/unit/simulate/test_votes.py (vote shares match (c̄ d + 1)/2,
distinctness of workers, a per-label loop on a small case).
"""

from __future__ import annotations

import numpy as np

from humeval.policies.base import LabellingStrategy

__all__ = ["draw_distinct", "strategy_labels"]


def draw_distinct(rng: np.random.Generator, pool_size: int, k: int, shape: tuple[int, ...]) -> np.ndarray:
    """``k`` distinct worker indices in [0, pool_size) per element of ``shape`` -> (k, *shape).

    Step j draws r uniform on the pool_size - j unused indices and shifts it past the j
    already chosen ones (kept sorted), which gives a uniform sample without replacement.
    """
    dtype = np.int16 if pool_size < 2**15 else np.int32
    chosen: list[np.ndarray] = []  # in draw order
    ordered: list[np.ndarray] = []  # sorted ascending, element-wise
    for j in range(k):
        r = rng.integers(0, pool_size - j, shape, dtype=dtype)
        for s in ordered:
            r = r + (r >= s).astype(dtype)
        chosen.append(r)
        if j + 1 < k:
            if not ordered:
                ordered = [r]
            else:
                new = [np.minimum(ordered[0], r)]
                for i in range(1, len(ordered)):
                    new.append(np.maximum(ordered[i - 1], np.minimum(ordered[i], r)))
                new.append(np.maximum(ordered[-1], r))
                ordered = new
    return np.stack(chosen)


def strategy_labels(
    strategy: LabellingStrategy,
    effective: np.ndarray,
    difficulty: np.ndarray,
    rng: np.random.Generator,
    iterations: int,
    position_bias: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Final labels (int8, 1 = A) and costs of ``strategy`` on a (iterations, H) block.

    ``effective``: effective capability per worker; ``difficulty``: (H,) shared list or
    (iterations, H) per-iteration lists.
    """
    d = np.asarray(difficulty, dtype=np.float32)
    h = d.shape[-1]
    shape = (iterations, h)
    caps = np.asarray(effective, dtype=np.float32)
    w = caps.size
    k = strategy.max_workers
    if not strategy.same_worker and not (strategy.distinct_workers and k > 1) and not position_bias:
        # workers drawn independently with replacement: P(vote = 1 | d) = (mean(c) d + 1) / 2
        # exactly (P is linear in c), so the worker draw can be integrated out
        u = rng.random((k, *shape), dtype=np.float32)
        votes = (2 * u - 1) < np.float32(caps.mean(dtype=np.float64)) * d
        return strategy.aggregate(votes)
    if strategy.same_worker:
        workers = np.broadcast_to(rng.integers(0, w, (1, iterations, 1)), (k, iterations, h))
    elif strategy.distinct_workers and k > 1:
        workers = draw_distinct(rng, w, k, shape)
    else:
        workers = rng.integers(0, w, (k, *shape), dtype=np.int16 if w < 2**15 else np.int32)
    u = rng.random((k, *shape), dtype=np.float32)
    # vote = 1 with P = (c d + 1)/2 (+ b s / 2)  <=>  2u - 1 < c d (+ b s)
    signal = caps[workers] * d
    if position_bias:
        side = np.where(rng.random(shape, dtype=np.float32) < 0.5, np.float32(1), np.float32(-1))
        signal = np.clip(signal + np.float32(position_bias) * side, -1.0, 1.0)
    votes = (2 * u - 1) < signal
    return strategy.aggregate(votes)
