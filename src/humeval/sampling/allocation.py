"""Splitting a sample size over strata: proportional, equal, Neyman; capped by stratum size."""

from __future__ import annotations

import numpy as np

from humeval.errors import DataError

__all__ = ["ALLOCATIONS", "allocate"]

ALLOCATIONS = ("proportional", "equal", "neyman")


def _largest_remainder(quota: np.ndarray, n: int) -> np.ndarray:
    base = np.floor(quota).astype(np.int64)
    short = n - int(base.sum())
    if short > 0:
        order = np.lexsort((np.arange(len(quota)), -(quota - base)))
        base[order[:short]] += 1
    return base


def allocate(sizes: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Items per stratum: ``n`` split in proportion to ``weights`` (default equal), never above ``sizes``.

    Quotas are rounded by the largest-remainder rule; strata that cannot take their quota
    are filled and the rest is re-split over the others (water filling).
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if n > sizes.sum():
        raise DataError(f"stratified sampling: cannot take {n} items from {int(sizes.sum())}")
    w = np.ones(len(sizes)) if weights is None else np.asarray(weights, dtype=float)
    out = np.zeros(len(sizes), dtype=np.int64)
    open_ = sizes > 0
    left = n
    while left > 0:
        ww = np.where(open_, w, 0.0)
        if ww.sum() <= 0:  # weights all zero among open strata: split equally
            ww = open_.astype(float)
        quota = _largest_remainder(left * ww / ww.sum(), left)
        room = sizes - out
        take = np.minimum(quota, room)
        out += take
        left -= int(take.sum())
        open_ = (sizes - out) > 0
        if left > 0 and not (quota > room).any():
            break  # cannot happen: quotas sum to `left`
    return out
