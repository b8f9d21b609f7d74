"""``simulate``: mean labelling effort of strategies under stopping rules, with 99% CIs."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from humeval.errors import HumevalError, did_you_mean
from humeval.policies.registry import get_strategy
from humeval.simulate._bootstrap import bootstrap_mean_ci
from humeval.simulate._executor import map_tasks
from humeval.simulate.config import SimulationConfig
from humeval.simulate.engine import PathResult, block_sizes, pool_and_list, run_block
from humeval.simulate.results import SimulationReport, StrategyResult
from humeval.simulate.theory import expected_difficulty, one_worker_share, wald_bound
from humeval.stopping.registry import RULES

__all__ = ["DEFAULT_RULES", "DEFAULT_STRATEGIES", "simulate", "simulate_many", "summarise"]

DEFAULT_STRATEGIES = ("majority7", "majority5", "max3", "fixed", "one")
DEFAULT_RULES = ("anytime",)


def _check_rules(rules: Sequence[str]) -> tuple[str, ...]:
    out = []
    for r in rules:
        if r not in RULES:
            raise HumevalError(f"unknown stopping rule '{r}'. {did_you_mean(r, RULES)}")
        if r not in out:
            out.append(r)
    if not out:
        raise HumevalError(f"no stopping rule given. Available: {', '.join(sorted(RULES))}")
    return tuple(out)


def _tasks(config: SimulationConfig, strategies: Sequence[str], rules: tuple[str, ...], seed: int,
           key: tuple[int, ...]) -> list[tuple]:
    tasks = []
    for s in strategies:
        st = get_strategy(s)
        for b, size in enumerate(block_sizes(config.iterations, config.n_requests, st.max_workers)):
            tasks.append((config, st.name, rules, b, size, seed, key))
    return tasks


def summarise(config: SimulationConfig, strategy: str, rules: Sequence[str], parts: Sequence[PathResult],
              seed: int, key: tuple[int, ...] = (), mean_capability: float | None = None,
              mean_difficulty: float | None = None) -> list[StrategyResult]:
    """Combine the blocks of one strategy into one :class:`StrategyResult` per rule."""
    truth = int(np.sign(config.mu))
    label_share = sum(p.label_sum for p in parts) / max(1, sum(p.label_count for p in parts))
    out = []
    for rule in rules:
        effort = np.concatenate([p.effort[rule] for p in parts])
        req = np.concatenate([p.requests[rule] for p in parts])
        outcome = np.concatenate([p.outcome[rule] for p in parts])
        decided = outcome != 0
        wrong = (outcome != 0) if truth == 0 else (outcome == -truth)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(*key, 2, zlib.crc32(f"{strategy}|{rule}".encode()))))
        lo, hi = bootstrap_mean_ci(effort, rng)
        wb = None
        if strategy in ("one", "fixed") and mean_capability is not None and mean_difficulty is not None:
            wb = wald_bound(config.delta, (mean_capability * mean_difficulty + 1) / 2)
            wb = None if not np.isfinite(wb) else wb
        out.append(StrategyResult(
            strategy=strategy, rule=rule, delta=config.delta, mu=config.mu, iterations=int(effort.size),
            mean_effort=float(effort.mean()), ci_low=lo, ci_high=hi,
            decided_share=float(decided.mean()), wrong_share=float(wrong.mean()),
            mean_requests=float(req.mean()),
            mean_effort_decided=float(effort[decided].mean()) if decided.any() else float("nan"),
            label_share=float(label_share), wald_bound=wb,
        ))
    return out


def simulate_many(configs: Sequence[SimulationConfig], strategies: Sequence[str] = DEFAULT_STRATEGIES,
                  rules: Sequence[str] = DEFAULT_RULES, seed: int = 21, processes: int = 1,
                  address: str | None = None) -> list[SimulationReport]:
    """A sweep: several configurations, all (strategy, block) tasks run in parallel.

    Configuration i uses seed key (i,) so that a cell's numbers do not depend on the rest
    of the grid's order... only on its position; run one config with :func:`simulate` for key ().
    """
    rules_t = _check_rules(rules)
    names = [get_strategy(s).name for s in strategies]
    if not names:
        raise HumevalError("no labelling strategy given")
    names = list(dict.fromkeys(names))
    keys = [() if len(configs) == 1 else (i,) for i in range(len(configs))]
    all_tasks = []
    index = []
    for ci, cfg in enumerate(configs):
        for t in _tasks(cfg, names, rules_t, seed, keys[ci]):
            all_tasks.append(t)
            index.append((ci, t[1]))
    parts = map_tasks(run_block, all_tasks, processes, address)
    reports = []
    for ci, cfg in enumerate(configs):
        caps, shared = pool_and_list(cfg, seed, keys[ci])
        mean_c = float(np.mean(caps))
        mean_d = float(np.mean(shared)) if shared is not None else expected_difficulty(cfg.mu, cfg.difficulty_var)
        results: list[StrategyResult] = []
        for name in names:
            mine = [p for p, (i, s) in zip(parts, index, strict=True) if i == ci and s == name]
            results += summarise(cfg, name, rules_t, mine, seed, keys[ci], mean_c, mean_d)
        sig = cfg.signature(seed, ",".join(rules_t), ",".join(names))
        reports.append(SimulationReport(cfg, seed, results, sig, {
            "mean_capability": mean_c, "mean_difficulty": mean_d,
            "one_worker_share": one_worker_share(mean_c, cfg.mu, cfg.difficulty_var) if shared is None else (mean_c * mean_d + 1) / 2,
        }))
    return reports


def simulate(config: SimulationConfig, strategies: Sequence[str] = DEFAULT_STRATEGIES,
             rules: Sequence[str] = DEFAULT_RULES, seed: int = 21, processes: int = 1,
             address: str | None = None) -> SimulationReport:
    """Simulate ``config`` for each strategy and rule; returns effort with 99% bootstrap CIs.

    The numbers depend only on (config, strategy, rule, seed), never on ``processes``.
    """
    return simulate_many([config], strategies, rules, seed, processes, address)[0]
