"""The simulation engine: labels of one strategy on a block of iterations, judged by rules.

For each (strategy, block of iterations) task: draw the labels and costs of every
request (``votes.strategy_labels``), accumulate S_n and the cumulative cost, and let each
rule decide on the same paths (common random numbers across rules). Seeds: every task
gets ``SeedSequence(seed, spawn_key=(*key, crc32(strategy), block))`` so results do not
depend on the number of processes, on the order of tasks, or on which other strategies
are simulated. The pool of workers uses ``spawn_key=(*key, 0)``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from humeval.policies.max_three import MaxThree
from humeval.policies.registry import get_strategy
from humeval.simulate.config import SimulationConfig
from humeval.simulate.population import draw_difficulties, legacy_parity_inputs, make_pool
from humeval.simulate.votes import strategy_labels
from humeval.stopping.registry import get_rule

__all__ = ["BLOCK_ELEMENTS", "PathResult", "block_sizes", "pool_and_list", "run_block"]

#: iterations x requests x votes per block (memory ~ 10 bytes each)
BLOCK_ELEMENTS = 2_000_000


@dataclass(frozen=True)
class PathResult:
    """Per-iteration results of one strategy on one block, for every rule."""

    effort: dict[str, np.ndarray]
    requests: dict[str, np.ndarray]
    outcome: dict[str, np.ndarray]
    label_sum: int
    label_count: int


def block_sizes(iterations: int, horizon: int, max_workers: int) -> list[int]:
    """Split iterations into blocks of at most BLOCK_ELEMENTS draws (fixed, worker-count free)."""
    per = max(1, BLOCK_ELEMENTS // (horizon * max(1, max_workers)))
    full, rest = divmod(iterations, per)
    return [per] * full + ([rest] if rest else [])


def pool_and_list(config: SimulationConfig, seed: int, key: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray | None]:
    """Effective capabilities of the pool and, in parity mode, the shared request list."""
    if config.parity:
        cap, d = legacy_parity_inputs(seed, config.mu, config.difficulty_var, config.workers, *config.capability)
        return cap, d[: config.n_requests]
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(*key, 0)))
    pool = make_pool(rng, config.workers, *config.capability, config.spammer_share, config.adversarial_share)
    return pool.effective, None


def _strategy(name: str, parity: bool):
    st = get_strategy(name)
    if parity and isinstance(st, MaxThree):
        return MaxThree(distinct_workers=False)  # the authors drew Max-3 workers with replacement
    return st


def run_block(
    config: SimulationConfig,
    strategy: str,
    rules: tuple[str, ...],
    block: int,
    size: int,
    seed: int,
    key: tuple[int, ...] = (),
) -> PathResult:
    """Simulate ``size`` iterations (block number ``block``) of ``strategy`` and judge them."""
    st = _strategy(strategy, config.parity)
    caps, shared = pool_and_list(config, seed, key)
    ss = np.random.SeedSequence(seed, spawn_key=(*key, 1, zlib.crc32(st.name.encode()), block))
    rng = np.random.default_rng(ss)
    h = config.n_requests
    if shared is None:
        difficulty = draw_difficulties(rng, config.mu, config.difficulty_var, (size, h))
    else:
        difficulty = shared.astype(np.float32)
    labels, cost = strategy_labels(st, caps, difficulty, rng, size, config.position_bias)
    s = np.cumsum(labels, axis=1, dtype=np.int32)
    c = np.cumsum(cost, axis=1, dtype=np.int32)
    effort: dict[str, np.ndarray] = {}
    requests: dict[str, np.ndarray] = {}
    outcome: dict[str, np.ndarray] = {}
    rows = np.arange(size)
    for name in rules:
        rule = get_rule(name, config.delta, horizon=h, prior_strength=config.prior_strength)
        dec = rule.decide_paths(s)
        stop = np.where(dec.n > 0, dec.n, h)
        effort[name] = c[rows, stop - 1].astype(np.int64)
        requests[name] = stop.astype(np.int64)
        outcome[name] = dec.outcome
    return PathResult(effort, requests, outcome, int(s[:, -1].sum()), int(size * h))
