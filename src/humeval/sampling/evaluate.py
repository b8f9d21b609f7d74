"""The evaluation harness: how well does a subset keep the full-set system ranking?

For each data set, human aspect and sampler: select a subset, rank the systems by their
mean human score on it, and compare with the ranking on all items by Kendall tau-b and
top-1 accuracy (:mod:`humeval.sampling.ranking`). Random sampling is a distribution over
many seeds (vectorised: one matrix product per block of seeds). A method's *percentile* is
the share of random runs its mean tau-b beats (ties count half), with a 95 % Wilson interval
for the finite number of random runs; it "beats random" only when the lower end of that
interval is at least 0.95, i.e. when it is above the random distribution's 95 % quantile
beyond the uncertainty of the percentile itself. A subset whose system means are all tied gives tau-b 0 (no information).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from humeval.errors import DataError
from humeval.rng import as_generator, child_seeds
from humeval.sampling.base import check_rate, run_phases, sample_size
from humeval.sampling.ranking import kendall_tau_b, top1_accuracy
from humeval.sampling.table import ItemTable

__all__ = ["BEATS_PERCENTILE", "EvalRow", "Evaluation", "evaluate", "random_runs", "score_rows"]

_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
_BLOCK_CELLS = 8_000_000


@dataclass(frozen=True)
class EvalRow:
    """One (data set, aspect, method, rate): mean tau-b and top-1 over runs, and the comparison with random."""

    dataset: str
    aspect: str
    method: str
    rate: float
    tau_b: float
    top1: float
    tau_b_sd: float
    runs: int
    quantiles: dict[str, float] = field(default_factory=dict)
    percentile: float | None = None
    beats_random: bool | None = None
    percentile_low: float | None = None
    percentile_high: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Evaluation:
    """Rows per (data set, aspect, method, rate) and a summary per (method, rate) over data sets."""

    rows: list[EvalRow]
    summary: list[dict[str, Any]]
    settings: dict[str, Any]
    leave_one_out: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"rows": [r.to_json() for r in self.rows], "summary": self.summary, "settings": self.settings,
                "leave_one_out": self.leave_one_out}


def _means(indicator: np.ndarray, scores: np.ndarray, n: int) -> np.ndarray:
    return indicator @ scores / n


def score_rows(means: np.ndarray, full: np.ndarray, n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """tau-b and top-1 of subset means ``(R, m * K)`` against full means ``(m * K,)`` -> two ``(R, K)`` arrays."""
    r = means.shape[0]
    sub = means.reshape(r, n_systems, -1).transpose(0, 2, 1)  # (R, K, m)
    ref = full.reshape(n_systems, -1).T  # (K, m)
    tau = np.stack([kendall_tau_b(sub[:, k], ref[k]) for k in range(ref.shape[0])], axis=1)
    top = np.stack([top1_accuracy(sub[:, k], ref[k]) for k in range(ref.shape[0])], axis=1)
    return np.nan_to_num(tau, nan=0.0), top


def random_runs(scores: np.ndarray, n: int, runs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """tau-b and top-1 ``(runs, K)`` of ``runs`` simple random subsets of size ``n``.

    ``scores`` is ``(N, m, K)``. Subsets come from the ``n`` smallest of uniform keys per run.
    """
    big, m, k = scores.shape
    flat = scores.reshape(big, m * k)
    full = flat.mean(axis=0)
    rng = as_generator(seed)
    block = max(1, _BLOCK_CELLS // big)
    taus, tops = [], []
    for lo in range(0, runs, block):
        s = min(block, runs - lo)
        keys = rng.random((s, big))
        subsets = np.argpartition(keys, n - 1, axis=1)[:, :n] if n < big else np.tile(np.arange(big), (s, 1))
        indicator = np.zeros((s, big))
        np.put_along_axis(indicator, subsets, 1.0, axis=1)
        tau, top = score_rows(_means(indicator, flat, n), full, m)
        taus.append(tau)
        tops.append(top)
    return np.concatenate(taus), np.concatenate(tops)


def _method_runs(
    sampler: Any, table: ItemTable, scores: np.ndarray, aspects: list[str], n: int, seeds: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    big, m, k = scores.shape
    flat = scores.reshape(big, m * k)
    full = flat.mean(axis=0)
    source = (lambda rows: table.scores(aspects, rows)) if sampler.needs_scores else None
    means = []
    for s in seeds:
        rows, _ = run_phases(sampler, table, n, s, source)
        means.append(flat[rows].mean(axis=0))
    return score_rows(np.asarray(means), full, m)


#: "beats random" when the lower end of the percentile's 95 % interval reaches this
BEATS_PERCENTILE = 0.95
_Z95 = 1.959963984540054


def percentile_interval(share: float, runs: int) -> tuple[float, float]:
    """95 % Wilson score interval of a share estimated from ``runs`` random runs."""
    centre = (share + _Z95**2 / (2 * runs)) / (1 + _Z95**2 / runs)
    half = _Z95 / (1 + _Z95**2 / runs) * np.sqrt(share * (1 - share) / runs + _Z95**2 / (4 * runs**2))
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def _verdict(method: np.ndarray, rand: np.ndarray) -> dict[str, Any]:
    """Percentile of the method's mean within the random runs, its interval, and whether it beats random."""
    mean = method.mean()
    percentile = float(np.mean(rand < mean - 1e-12) + 0.5 * np.mean(np.abs(rand - mean) <= 1e-12))
    low, high = percentile_interval(percentile, len(rand))
    return {"percentile": percentile, "percentile_low": low, "percentile_high": high,
            "beats_random": low >= BEATS_PERCENTILE}


def evaluate(
    tables: Mapping[str, ItemTable],
    samplers: Mapping[str, Any],
    rates: Sequence[float] = (0.5,),
    *,
    random_seeds: int = 1000,
    method_seeds: int = 5,
    seed: int = 0,
    aspects: Mapping[str, Sequence[str]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Evaluation:
    """Evaluate ``samplers`` (name -> sampler) against random on every table and rate.

    ``random_seeds`` random subsets form the random distribution (at least 1 000 for the
    docs); every other method runs with ``method_seeds`` seeds derived from ``seed``.
    """
    for r in rates:
        check_rate(r, where="evaluate: rate")
    if random_seeds < 2:
        raise DataError(f"evaluate: random_seeds must be at least 2, got {random_seeds}")
    if method_seeds < 1:
        raise DataError(f"evaluate: method_seeds must be at least 1, got {method_seeds}")
    seeds = child_seeds(seed, method_seeds)
    rows: list[EvalRow] = []
    per_dataset: dict[tuple[str, float], dict[str, np.ndarray]] = {}
    for d_i, (name, table) in enumerate(tables.items()):
        names = table.aspects(list(aspects.get(name, [])) if aspects else None)
        scores = table.scores(names)
        for rate in rates:
            n = sample_size(table.n_items, rate)
            if progress:
                progress(f"{name} rate {rate}: random x {random_seeds}")
            rand_tau, rand_top = random_runs(scores, n, random_seeds, child_seeds(seed + d_i, 1)[0])
            per_dataset[(name, rate)] = {"random": rand_tau.mean(axis=1)}
            for k, aspect in enumerate(names):
                q = {f"q{int(p * 100):02d}": float(np.quantile(rand_tau[:, k], p)) for p in _QUANTILES}
                rows.append(
                    EvalRow(name, aspect.removeprefix("human."), "random", rate, float(rand_tau[:, k].mean()),
                            float(rand_top[:, k].mean()), float(rand_tau[:, k].std(ddof=1)), random_seeds, q)
                )
            for method, sampler in samplers.items():
                if method == "random":
                    continue
                if progress:
                    progress(f"{name} rate {rate}: {method}")
                tau, top = _method_runs(sampler, table, scores, names, n, seeds)
                per_dataset[(name, rate)][method] = tau.mean(axis=1)
                for k, aspect in enumerate(names):
                    verdict = _verdict(tau[:, k], rand_tau[:, k])
                    rows.append(
                        EvalRow(name, aspect.removeprefix("human."), method, rate, float(tau[:, k].mean()),
                                float(top[:, k].mean()), float(tau[:, k].std(ddof=1)) if len(seeds) > 1 else 0.0,
                                len(seeds), {}, **verdict)
                    )
    methods = ["random", *[m for m in samplers if m != "random"]]
    summary = _summarise(per_dataset, list(tables), rates, methods)
    settings = {"random_seeds": random_seeds, "method_seeds": method_seeds, "seed": seed, "rates": list(rates),
                "datasets": list(tables), "methods": list(samplers)}
    loo = _leave_one_out(per_dataset, list(tables), rates, methods) if len(tables) > 2 else []
    return Evaluation(rows, summary, settings, loo)


def _leave_one_out(
    per_dataset: dict[tuple[str, float], dict[str, np.ndarray]], datasets: list[str], rates: Sequence[float],
    methods: list[str],
) -> list[dict[str, Any]]:
    """Choose a method without the data set it is scored on, for every data set in turn.

    For each held-out data set, the method (random included) with the highest mean tau-b
    over the other data sets is chosen and scored on the held-out set; the mean of those
    held-out scores is compared with the random distribution of the mean over data sets,
    exactly as a fixed method is in the summary. This is how a default should be chosen:
    a method that wins only on the sets it was picked on does not count.
    """
    out = []
    for rate in rates:
        means = {(d, m): float(per_dataset[(d, rate)][m].mean()) for d in datasets for m in methods}
        chosen = {}
        for held in datasets:
            others = [d for d in datasets if d != held]
            held_out = {m: (float(np.mean([means[(d, m)] for d in others])), m == "random") for m in methods}
            chosen[held] = max(methods, key=held_out.__getitem__)
        score = float(np.mean([means[(d, chosen[d])] for d in datasets]))
        rand = np.mean([per_dataset[(d, rate)]["random"] for d in datasets], axis=0)
        out.append({"rate": rate, "chosen": chosen, "mean_tau_b": score} | _verdict(np.array([score]), rand))
    return out


def _summarise(
    per_dataset: dict[tuple[str, float], dict[str, np.ndarray]], datasets: list[str], rates: Sequence[float],
    methods: list[str],
) -> list[dict[str, Any]]:
    """Mean over data sets (each data set = mean over its aspects) per method and rate."""
    out = []
    for rate in rates:
        rand = np.mean([per_dataset[(d, rate)]["random"] for d in datasets], axis=0)
        for method in methods:
            runs = np.mean([per_dataset[(d, rate)][method] for d in datasets], axis=0)
            entry: dict[str, Any] = {"method": method, "rate": rate, "mean_tau_b": float(runs.mean()),
                                     "datasets": len(datasets)}
            if method == "random":
                entry |= {f"q{int(p * 100):02d}": float(np.quantile(rand, p)) for p in _QUANTILES}
            else:
                entry |= _verdict(runs, rand)
            out.append(entry)
    return out
