"""Samplers that need nothing but the item ids: everything, and simple random sampling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from humeval.sampling.base import PhaseScores, SamplerBase

if TYPE_CHECKING:  # NumPy and pandas: imported where items are chosen, not where a sampler is named
    import numpy as np
    import pandas as pd

    from humeval.sampling.table import ItemTable

__all__ = ["AllItems", "RandomSampler", "item_ids", "remaining"]


def item_ids(outputs: pd.DataFrame) -> np.ndarray:
    """Distinct item ids in first-appearance order."""
    import pandas as pd

    return pd.unique(outputs["item_id"].astype(str))


def remaining(n_items: int, chosen: np.ndarray) -> np.ndarray:
    """Row positions not yet chosen, in data order."""
    import numpy as np

    mask = np.ones(n_items, dtype=bool)
    mask[chosen] = False
    return np.flatnonzero(mask)


@dataclass(frozen=True)
class AllItems(SamplerBase):
    """Every item, in data order (no subset selection)."""

    name: str = "all"

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        return remaining(table.n_items, chosen)[:n]


@dataclass(frozen=True)
class RandomSampler(SamplerBase):
    """Simple random sampling without replacement (uniform over items)."""

    name: str = "random"

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        from humeval.rng import as_generator

        pool = remaining(table.n_items, chosen)
        return pool[as_generator(seed).choice(len(pool), size=n, replace=False)]
