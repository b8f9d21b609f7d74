"""The constrained controller of CASF: one item per bucket, redundancy-aware.

Rules (Ruan et al., 2024, "Constrained Controller"), for the candidates of one bucket:

1. a feasible candidate (no selected item is redundant with it) beats an infeasible one;
2. among infeasible candidates, the smaller violation wins;
3. among feasible candidates, the smaller rank distance to the bucket's initial pick wins.

The violation of a candidate is ``max_s dice(c, s) - threshold`` over the selected items
``s`` whose bigram Dice similarity with ``c`` reaches the threshold (0: feasible). Remaining
ties go to the candidate closer to the initial pick, then to the better-ranked one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["control", "violations"]


def violations(
    graph: sp.csr_matrix, candidates: np.ndarray, selected: np.ndarray, threshold: float,
    picked: np.ndarray | None = None, step: int = 0,
) -> np.ndarray:
    """Violation of each candidate given the boolean mask ``selected`` over all items; with ``picked``
    (per item, the bucket that picked it), an item picked by a bucket before ``step`` counts as selected too."""
    indptr, indices, data = graph.indptr, graph.indices, graph.data
    starts, ends = indptr[candidates], indptr[candidates + 1]
    lengths = ends - starts
    out = np.zeros(len(candidates))
    if lengths.sum() == 0:
        return out
    owner = np.repeat(np.arange(len(candidates)), lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    flat = np.repeat(starts, lengths) + offsets
    neighbours = indices[flat]
    hit = selected[neighbours]
    if picked is not None:
        hit |= picked[neighbours] < step
    if hit.any():
        np.maximum.at(out, owner[hit], data[flat][hit] - threshold + 1e-12)
    return out


def control(
    order: np.ndarray, n: int, width: int, offset: int, graph: sp.csr_matrix, selected: np.ndarray, threshold: float
) -> np.ndarray:
    """Choose one item per bucket of the ranked list ``order``.

    Bucket ``e`` holds ``order[e * width : (e + 1) * width]``; its initial pick is at
    ``offset`` inside the bucket. ``selected`` (boolean over all items, updated in place)
    marks the items chosen before; every pick joins it before the next bucket is decided.

    A bucket none of whose candidates is redundant with any item is feasible throughout and
    keeps its initial pick whatever was picked before it; only the other buckets are decided
    one by one, each seeing the picks of the buckets before it (``picked``: the bucket that
    picked each item).
    """
    buckets = order[: n * width].reshape(n, width)
    picks = buckets[:, offset].copy()  # rule 3 when every candidate is feasible
    linked = (np.diff(graph.indptr)[buckets] > 0).any(axis=1)
    picked = np.full(len(selected), n, dtype=np.int64)
    picked[picks[~linked]] = np.flatnonzero(~linked)
    distance = np.abs(np.arange(width) - offset)
    tie_break = distance * width + np.arange(width)  # rule 3, then rank
    for e in np.flatnonzero(linked).tolist():  # in bucket order: later buckets see earlier picks
        bucket = buckets[e]
        vio = violations(graph, bucket, selected, threshold, picked, e)
        feasible = vio == 0
        if feasible.any():
            best = np.flatnonzero(feasible)[np.argmin(tie_break[feasible])]
        else:
            best = np.lexsort((tie_break, vio))[0]
        picks[e] = bucket[best]
        picked[bucket[best]] = e
    selected[picks] = True
    return picks
