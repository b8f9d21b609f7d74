"""Redundancy between items: bigram Dice similarity, found with sparse matrices.

Each item is the set of word bigrams of all its outputs (lower-cased, ``\\w+`` tokens,
bigrams never cross two outputs). The similarity of two items is the Dice coefficient
``2 |A & B| / (|A| + |B|)`` (Kondrak 2005's bigram similarity on sets). Only pairs at or
above a threshold matter to the constrained controller, so they are found with the
prefix filter of set-similarity joins (Bayardo, Ma & Srikant 2007, "All-Pairs"): sort each
set's bigrams from rarest to most common; two sets with Dice >= t share at least
``ceil(t |A| / (2 - t))`` bigrams, so their prefixes of length ``|A| - ceil(t |A| / (2 - t)) + 1``
must intersect. Candidate pairs come from one sparse product of the prefix matrix with
itself and are verified exactly; no Python loop runs over pairs.

Bigrams that occur in more than ``max(min_df_cap, max_df * n_items)`` items ("of the",
"i am") are dropped first, like stop words in near-duplicate detection: they say nothing
about redundancy and would make every pair a candidate.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import scipy.sparse as sp

from humeval.errors import DataError

__all__ = ["DEFAULT_THRESHOLD", "bigram_matrix", "similar_pairs"]

#: Dice similarity at or above which two items count as redundant (see docs/sampling.md)
DEFAULT_THRESHOLD = 0.5
#: bigrams in more than max(MIN_DF_CAP, MAX_DF * n_items) items are ignored
MAX_DF = 0.01
MIN_DF_CAP = 100
_SEP = "\x01"  # separates outputs in the joined text (never part of a \w token)
_TOKEN = re.compile(r"\w+|\x01")
_PAIR_CHUNK = 200_000


def bigram_matrix(outputs: np.ndarray) -> sp.csr_matrix:
    """Binary ``(n_items, n_bigrams)`` matrix of the word bigrams of each item's outputs (common bigrams dropped).

    Vectorised: all outputs are lower-cased and tokenised in one regular-expression pass over
    their concatenation (a control character separates outputs), tokens become integer ids, and
    a bigram is a pair of consecutive ids inside one output.
    """
    n, m = outputs.shape
    texts = outputs.ravel().tolist()
    text = _SEP.join(texts).lower()
    if text.count(_SEP) != len(texts) - 1:  # an output contains the separator itself: blank it out
        text = _SEP.join(t.replace(_SEP, " ") for t in texts).lower()
    found = _TOKEN.findall(text)
    tokens = np.asarray(found, dtype=object)
    is_sep = tokens == _SEP
    owner = np.cumsum(is_sep)[~is_sep]  # index of the output each word belongs to
    ids = pd.factorize(tokens[~is_sep])[0].astype(np.int64)
    same = owner[1:] == owner[:-1]
    pair = ids[:-1][same] * (int(ids.max(initial=0)) + 1) + ids[1:][same]
    item = owner[1:][same] // m
    codes, _ = pd.factorize(pair)
    items = sp.csr_matrix(
        (np.ones(len(codes), dtype=np.float32), (item, codes)), shape=(n, int(codes.max(initial=-1)) + 1)
    )
    items.sum_duplicates()
    items.data[:] = 1.0
    df = np.diff(items.tocsc().indptr)
    common = df > max(MIN_DF_CAP, MAX_DF * n)
    if common.any():
        items.data[common[items.indices]] = 0.0
    items.eliminate_zeros()
    items.sort_indices()
    return items


def similar_pairs(bigrams: sp.csr_matrix, threshold: float = DEFAULT_THRESHOLD) -> sp.csr_matrix:
    """Symmetric ``(n, n)`` matrix holding the Dice similarity of every pair with Dice >= ``threshold``.

    Diagonal and pairs below the threshold are absent (0). Items without bigrams are
    never redundant.
    """
    if not 0 < threshold <= 1:
        raise DataError(f"sampling.params.redundancy_threshold: must be in (0, 1], got {threshold!r}")
    x = bigrams.tocsr()
    n = x.shape[0]
    sizes = np.diff(x.indptr)
    df = np.bincount(x.indices, minlength=x.shape[1])
    rows = np.repeat(np.arange(n), sizes)
    # within each row, order the bigrams from rarest to most common (ties by hash id)
    order = np.lexsort((x.indices, df[x.indices], rows))
    position = np.arange(len(order)) - x.indptr[rows]
    min_overlap = np.ceil(threshold * sizes / (2 - threshold) - 1e-9).astype(np.int64)
    prefix_len = np.where(sizes > 0, sizes - min_overlap + 1, 0)
    keep = position < prefix_len[rows]
    prefix = sp.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.float32), (rows[keep], x.indices[order][keep])), shape=x.shape
    )
    candidates = sp.triu(prefix @ prefix.T, k=1).tocoo()
    left, right = candidates.row.astype(np.int64), candidates.col.astype(np.int64)
    dice = np.empty(len(left))
    for lo in range(0, len(left), _PAIR_CHUNK):
        a, b = left[lo : lo + _PAIR_CHUNK], right[lo : lo + _PAIR_CHUNK]
        overlap = np.asarray(x[a].multiply(x[b]).sum(axis=1)).ravel()
        dice[lo : lo + _PAIR_CHUNK] = 2 * overlap / (sizes[a] + sizes[b])
    hit = dice >= threshold - 1e-12
    a, b, d = left[hit], right[hit], dice[hit]
    graph = sp.csr_matrix((np.concatenate([d, d]), (np.concatenate([a, b]), np.concatenate([b, a]))), shape=(n, n))
    graph.sort_indices()
    return graph
