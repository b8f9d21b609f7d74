"""Samplers that need nothing but the item ids: everything, and simple random sampling."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from humeval.rng import as_generator
from humeval.sampling.base import Selection

__all__ = ["AllItems", "RandomSampler", "item_ids"]


def item_ids(outputs: pd.DataFrame) -> np.ndarray:
    """Distinct item ids in first-appearance order."""
    return pd.unique(outputs["item_id"].astype(str))


@dataclass(frozen=True)
class AllItems:
    """Every item, in data order (no subset selection)."""

    name: str = "all"

    def select(self, outputs: pd.DataFrame, size: int, seed: int) -> Selection:
        ids = item_ids(outputs)[:size]
        return Selection([str(i) for i in ids], [0] * len(ids))


@dataclass(frozen=True)
class RandomSampler:
    """Simple random sampling without replacement (uniform over items)."""

    name: str = "random"

    def select(self, outputs: pd.DataFrame, size: int, seed: int) -> Selection:
        ids = item_ids(outputs)
        chosen = as_generator(seed).choice(len(ids), size=size, replace=False)
        return Selection([str(ids[i]) for i in chosen], [0] * size)
