"""The length heuristic of NLG practice: a few extreme-length items, mostly typical ones."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from humeval.errors import DataError
from humeval.rng import as_generator
from humeval.sampling.base import PhaseScores, SamplerBase
from humeval.sampling.features import mean_length
from humeval.sampling.simple import remaining
from humeval.sampling.table import ItemTable

__all__ = ["HeuristicSampler"]


@dataclass(frozen=True)
class HeuristicSampler(SamplerBase):
    """Sort items by mean output length; draw ``extreme_share`` of the subset at random from the
    extremes (the shortest and the longest ``extreme_quantile`` of the items, pooled) and the rest
    at random from the typical middle.

    This is the "Heuristic (H)" baseline of the CASF paper (Ruan et al., 2024), whose exact
    shares are not published; the defaults (10 % extremes, tails = 10 % at each end) are ours.
    """

    name: str = "heuristic"
    extreme_share: float = 0.1
    extreme_quantile: float = 0.1

    def __post_init__(self) -> None:
        for field, value, high in (("extreme_share", self.extreme_share, 1.0), ("extreme_quantile", self.extreme_quantile, 0.5)):
            if not 0 <= value <= high:
                raise DataError(f"sampling.params.{field}: must be in [0, {high}], got {value!r}")

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        pool = remaining(table.n_items, chosen)
        rng = as_generator(seed)
        order = pool[np.argsort(mean_length(table)[pool] + rng.uniform(0, 1e-9, len(pool)), kind="stable")]
        tail = int(np.floor(self.extreme_quantile * len(order)))
        extremes = np.concatenate([order[:tail], order[len(order) - tail:]]) if tail else order[:0]
        middle = order[tail: len(order) - tail]
        n_ext = min(len(extremes), round(self.extreme_share * n))
        n_ext = max(n_ext, n - len(middle))  # too few typical items: take the rest from the tails
        picks = [rng.choice(extremes, size=n_ext, replace=False), rng.choice(middle, size=n - n_ext, replace=False)]
        out = np.concatenate(picks)
        return out[rng.permutation(len(out))]
