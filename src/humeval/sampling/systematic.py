"""Systematic sampling over a sort key (Yates 1948): every k-th item of the sorted list."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from humeval.errors import DataError, did_you_mean
from humeval.rng import as_generator
from humeval.sampling.base import PhaseScores, SamplerBase
from humeval.sampling.features import item_quality, mean_length, preliminary_metric
from humeval.sampling.simple import remaining
from humeval.sampling.table import AUTO, ItemTable

__all__ = ["START_RULES", "SystematicSampler", "item_key", "systematic_positions"]

START_RULES = ("random", "middle", "first")


def systematic_positions(n_pool: int, n: int, start: float) -> np.ndarray:
    """Positions ``floor(start + i * N / n)`` for ``i < n``: one per interval of width ``N / n``.

    ``start`` is the offset inside the first interval, in [0, N / n). The positions are
    distinct because the interval width is at least 1.
    """
    if not 1 <= n <= n_pool:
        raise DataError(f"systematic sampling: cannot take {n} of {n_pool} items")
    step = n_pool / n
    return np.minimum(np.floor(start + step * np.arange(n)).astype(np.int64), n_pool - 1)


def item_key(table: ItemTable, key: str) -> np.ndarray:
    """One float per item: ``length`` (mean output length), ``quality`` (the preliminary metric summed
    over systems), an item property, or a metric column summed over systems."""
    if key == "length":
        return mean_length(table)
    if key == "quality":
        return item_quality(table, preliminary_metric(table))
    if key in table.properties.columns:
        values = table.properties[key]
        numeric = np.asarray(np.asarray(values, dtype=object), dtype=str)
        try:
            return np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            return np.unique(numeric, return_inverse=True)[1].astype(float)  # categorical: group by value
    if key in table.metrics or AUTO + key in table.metrics:
        return item_quality(table, key if key.startswith(AUTO) else AUTO + key)
    options = ["length", "quality", *map(str, table.properties.columns), *table.metrics]
    raise DataError(f"sampling.params.key: unknown sort key '{key}'. {did_you_mean(key, options)}")


def start_offset(rule: str, step: float, seed: int) -> float:
    """Offset of the first pick inside the first interval for a start rule."""
    if rule == "random":
        return float(as_generator(seed).uniform(0, step))
    if rule == "middle":
        return step / 2
    if rule == "first":
        return 0.0
    raise DataError(f"sampling.params.start: unknown start rule '{rule}'. {did_you_mean(rule, START_RULES)}")


@dataclass(frozen=True)
class SystematicSampler(SamplerBase):
    """Sort the items by ``key`` (descending) and take every (N/n)-th one.

    ``key``: ``None`` keeps data order; ``length``; an item property; or a metric column
    (summed over systems). ``start``: ``random`` (offset drawn from the seed), ``middle``
    (centred in each interval) or ``first``.
    """

    name: str = "systematic"
    key: str | None = None
    start: Literal["random", "middle", "first"] = "random"

    @property
    def needs_metrics(self) -> bool:  # type: ignore[override]
        return self.key is not None and self.key not in ("length",)

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        pool = remaining(table.n_items, chosen)
        if self.key is not None:
            values = item_key(table, self.key)[pool]
            pool = pool[np.argsort(-values, kind="stable")]
        return pool[systematic_positions(len(pool), n, start_offset(self.start, len(pool) / n, seed))]
