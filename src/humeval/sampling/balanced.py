"""Balanced random sampling: the random subset whose per-system metric profile matches the full set's.

A system ranking on a subset is wrong when the subset happens to favour some systems.
Automatic metrics, although noisy, show such imbalance before any human score exists.
This sampler draws ``candidates`` random subsets (rerandomisation, Morgan & Rubin 2012;
the idea of balanced sampling on auxiliary variables, Deville & Tillé 2004) and keeps the
one whose mean *system contrasts* of the metrics (each metric z-scored, minus the item
mean, so only differences between systems count) are closest to the full-set means,
in squared standardised distance. Everything is matrix algebra over all candidates at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from humeval.errors import DataError
from humeval.rng import as_generator
from humeval.sampling.base import PhaseScores, SamplerBase
from humeval.sampling.features import resolve_features, zscore
from humeval.sampling.simple import remaining
from humeval.sampling.table import ItemTable

__all__ = ["BalancedSampler", "contrasts", "imbalance"]

_CHUNK_CELLS = 4_000_000


def contrasts(table: ItemTable, metrics: list[str], combine: str = "all") -> np.ndarray:
    """System contrasts of the metrics: z-scored metric minus the item's mean over systems.

    ``combine="mean"``: the mean over metrics, ``(n_items, n_systems)``; ``"all"``: every
    metric, ``(n_items, n_systems * n_metrics)``.
    """
    parts = []
    for m in metrics:
        z = zscore(table.metric(m))
        parts.append(z - z.mean(axis=1, keepdims=True))
    if combine == "mean":
        return np.mean(parts, axis=0)
    if combine == "all":
        return np.concatenate(parts, axis=1)
    raise DataError(f"sampling.params.combine: must be 'mean' or 'all', got {combine!r}")


def imbalance(indicator: np.ndarray, features: np.ndarray, n: int) -> np.ndarray:
    """Squared standardised distance between each subset's mean features and the pool mean.

    ``indicator`` is ``(k, N)`` with ``n`` ones per row; ``features`` is ``(N, F)``.
    """
    sd = features.std(axis=0)
    scale = np.where(sd > 0, sd, 1.0)
    centred = (features - features.mean(axis=0)) / scale
    # the variance of a subset mean under simple random sampling is the same for every feature
    # after standardising, so the plain squared distance ranks subsets fairly
    means = indicator @ centred / n
    return (means**2).sum(axis=1)


@dataclass(frozen=True)
class BalancedSampler(SamplerBase):
    """Best of ``candidates`` random subsets by balance of the metric system contrasts.

    ``features``: metric columns (default: the CASF 8 when stored, else every ``auto.*``);
    ``combine``: balance every metric's system contrasts separately (``all``, the default:
    better in our evaluation) or only their mean (``mean``, one value per system).
    """

    name: str = "balanced"
    needs_metrics: ClassVar[bool] = True
    candidates: int = 1000
    features: tuple[str, ...] = ()
    combine: str = "all"

    def __post_init__(self) -> None:
        if isinstance(self.candidates, bool) or not isinstance(self.candidates, int) or self.candidates < 1:
            raise DataError(f"sampling.params.candidates: must be a whole number >= 1, got {self.candidates!r}")
        object.__setattr__(self, "features", tuple(self.features))

    def choose(
        self, table: ItemTable, phase: int, n: int, chosen: np.ndarray, scores: PhaseScores | None, seed: int
    ) -> np.ndarray:
        rng = as_generator(seed)
        pool = remaining(table.n_items, chosen)
        feats = contrasts(table, resolve_features(table, self.features or None), self.combine)[pool].astype(np.float32)
        big = len(pool)
        chunk = max(1, _CHUNK_CELLS // big)
        best_score, best_subset = np.inf, None
        for lo in range(0, self.candidates, chunk):
            k = min(chunk, self.candidates - lo)
            keys = rng.random((k, big), dtype=np.float32)
            subsets = np.argpartition(keys, n - 1, axis=1)[:, :n] if n < big else np.tile(np.arange(big), (k, 1))
            indicator = np.zeros((k, big), dtype=np.float32)
            np.put_along_axis(indicator, subsets, 1.0, axis=1)
            score = imbalance(indicator, feats, n)
            i = int(np.argmin(score))
            if score[i] < best_score:
                best_score, best_subset = float(score[i]), subsets[i]
        picked = pool[best_subset]
        return picked[rng.permutation(len(picked))]
