"""Validation of the votes handed to a strategy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from humeval.errors import HumevalError

__all__ = ["check_votes"]


def check_votes(votes: Sequence[int], *, exactly: int | None = None, who: str = "strategy") -> np.ndarray:
    """Votes as an int array of 0/1; raise if a vote is not 0/1 or the count is wrong."""
    v = np.asarray(list(votes))
    if v.size and not np.isin(v, (0, 1)).all():
        bad = [x for x in v.tolist() if x not in (0, 1)]
        raise HumevalError(f"{who}: a vote is 1 (A preferred) or 0 (B preferred), got {bad[0]!r}")
    if exactly is not None and v.size != exactly:
        raise HumevalError(f"{who}: needs exactly {exactly} vote(s) to label a request, got {v.size}")
    return v.astype(np.int8)
