"""Stratified random sampling by item properties or by predicted quality."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from humeval.errors import DataError, did_you_mean
from humeval.rng import as_generator
from humeval.sampling.allocation import ALLOCATIONS, allocate
from humeval.sampling.base import PhaseScores, SamplerBase
from humeval.sampling.features import preliminary_metric, zscore
from humeval.sampling.simple import remaining
from humeval.sampling.systematic import item_key
from humeval.sampling.table import ItemTable

__all__ = ["StratifiedSampler", "strata_of"]


def _bins(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-frequency bins (by rank, ties split by position) of a numeric key."""
    ranks = np.argsort(np.argsort(values, kind="stable"), kind="stable")
    return (ranks * n_bins // len(values)).astype(np.int64)


def strata_of(table: ItemTable, keys: list[str], n_bins: int) -> np.ndarray:
    """Stratum label (0..H-1) per item: the combination of the keys' values.

    A key with more than ``n_bins`` distinct values is cut into ``n_bins`` equal-frequency bins;
    the key ``quality`` is the preliminary metric summed over systems.
    """
    codes = []
    for key in keys:
        values = item_key(table, key)
        if len(np.unique(values)) > n_bins:
            codes.append(_bins(values, n_bins))
        else:
            codes.append(np.unique(values, return_inverse=True)[1])
    combined = pd.MultiIndex.from_arrays(codes) if len(codes) > 1 else pd.Index(codes[0])
    return pd.factorize(combined, sort=True)[0].astype(np.int64)


@dataclass(frozen=True)
class StratifiedSampler(SamplerBase):
    """Split the items into strata and draw at random inside each.

    ``by``: item property columns, ``length`` or ``quality`` (predicted quality: the
    preliminary metric summed over systems), or a metric column; numeric keys are cut into
    ``bins`` equal-frequency bins. ``allocation``: ``proportional`` (to stratum size),
    ``equal`` (same number per stratum, capped by size), or ``neyman`` (size x spread of the
    system differences of the preliminary metric inside the stratum: strata where systems
    disagree more get more items).
    """

    name: str = "stratified"
    by: tuple[str, ...] = ("quality",)
    allocation: Literal["proportional", "equal", "neyman"] = "proportional"
    bins: int = 5

    @property
    def needs_metrics(self) -> bool:  # type: ignore[override]
        return self.allocation == "neyman" or "quality" in self.by

    def __post_init__(self) -> None:
        by = (self.by,) if isinstance(self.by, str) else tuple(self.by)
        if not by:
            raise DataError("sampling.params.by: name at least one key to stratify by")
        object.__setattr__(self, "by", by)
        if self.allocation not in ALLOCATIONS:
            raise DataError(
                f"sampling.params.allocation: unknown allocation '{self.allocation}'. {did_you_mean(self.allocation, ALLOCATIONS)}"
            )
        if isinstance(self.bins, bool) or not isinstance(self.bins, int) or self.bins < 1:
            raise DataError(f"sampling.params.bins: must be a whole number >= 1, got {self.bins!r}")

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        rng = as_generator(seed)
        pool = remaining(table.n_items, chosen)
        strata = strata_of(table, list(self.by), self.bins)[pool]
        sizes = np.bincount(strata)
        weights = None
        if self.allocation == "proportional":
            weights = sizes.astype(float)
        elif self.allocation == "neyman":
            z = zscore(table.metric(preliminary_metric(table)))[pool]
            contrast = z - z.mean(axis=1, keepdims=True)
            spread = np.sqrt(
                np.bincount(strata, weights=(contrast**2).mean(axis=1), minlength=len(sizes)) / np.maximum(sizes, 1)
            )
            weights = sizes * spread
        counts = allocate(sizes, n, weights)
        # random order inside every stratum, then the first `count` of each
        key = rng.random(len(pool))
        order = np.lexsort((key, strata))
        start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        rank_in = np.arange(len(pool)) - start[strata[order]]
        picked = order[rank_in < counts[strata[order]]]
        return pool[picked[rng.permutation(len(picked))]]
