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
_PAIR_CHUNK = 200_000
#: outputs tokenised per block (bounds the memory of the code-point arrays)
_BLOCK_OUTPUTS = 20_000
#: the bigram occurrences are counted in 2^_PART_BITS partitions (by the top bits of their key)
_PART_BITS = 4
_PARTS = 1 << _PART_BITS
#: whether each ASCII code point is a ``\w`` character (Python's definition, looked up once)
_ASCII_WORD = np.array([re.fullmatch(r"\w", chr(c)) is not None for c in range(128)])
# two independent 64-bit polynomial hashes of a token, and mixers that turn two token hashes into a bigram key
_BASES = (np.uint64(0x100000001B3), np.uint64(0x9E3779B97F4A7C15))
#: tokens longer than this send the whole computation to the exact path
_LONGEST = 1024
_SEEDS = (0xCBF29CE484222325, 0x84222325CBF29CE4)
_MIXERS = (np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


def _is_word(codes: np.ndarray) -> np.ndarray:
    """``\\w`` membership of each code point (non-ASCII ones asked of ``re`` once per distinct code point)."""
    word = np.zeros(len(codes), dtype=bool)
    low = codes < 128
    word[low] = _ASCII_WORD[codes[low]]
    if not low.all():
        high, inverse = np.unique(codes[~low], return_inverse=True)
        table = np.array([re.fullmatch(r"\w", chr(c)) is not None for c in high.tolist()], dtype=bool)
        word[~low] = table[inverse]
    return word


def _block_bigrams(texts: list[str], first: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(output index, key, check key) of every bigram of ``texts`` (outputs ``first``, ``first + 1``, ...).

    The block is lower-cased as one string and read as UTF-32 code points; a token is a maximal
    run of ``\\w`` code points (exactly what ``re.findall(r"\\w+")`` finds). Each token gets two
    independent 64-bit polynomial hashes (one ``reduceat`` over the characters each); consecutive
    tokens of one output form a bigram whose two keys mix them. Returns None when a token is longer
    than :data:`_LONGEST` characters (polynomial hashes modulo 2^64 can be made to collide for every
    base only by strings of 2 048 characters or more, e.g. Thue-Morse words).
    """
    text = _SEP.join(texts).lower()
    if text.count(_SEP) != len(texts) - 1:  # an output contains the separator itself: blank it out
        text = _SEP.join(t.replace(_SEP, " ") for t in texts).lower()
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    word = _is_word(codes)
    edges = np.diff(word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    lengths = np.flatnonzero(edges == -1) - starts
    del edges
    owner = np.searchsorted(np.flatnonzero(codes == ord(_SEP)), starts) + first
    if len(lengths) and int(lengths.max()) > _LONGEST:
        return None
    chars = codes[word].astype(np.uint64)  # the word characters, token after token
    del word
    offsets = np.cumsum(lengths) - lengths  # where each token starts in ``chars``
    position = np.arange(len(chars)) - np.repeat(offsets, lengths)  # of each character inside its token
    keys = []
    with np.errstate(over="ignore"):
        for base, seed in zip(_BASES, _SEEDS, strict=True):
            powers = np.cumprod(np.full(int(lengths.max(initial=0)) + 1, base, dtype=np.uint64))  # base^(k+1)
            # sum_k c_k * base^(k+1) + seed (mod 2^64): a polynomial hash (the order of powers is immaterial)
            token = np.add.reduceat(chars * powers[position], offsets) + np.uint64(seed) if len(chars) else chars
            keys.append(token)
    same = owner[1:] == owner[:-1]
    with np.errstate(over="ignore"):
        pairs = [t[:-1][same] * mix + (t[1:][same] ^ mix) for t, mix in zip(keys, _MIXERS, strict=True)]
    return owner[1:][same], pairs[0], pairs[1]


def _exact_bigram_ids(outputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(output index, bigram id) with exact string identity (regular expression and pandas; the slow path)."""
    texts = outputs.ravel().tolist()
    text = _SEP.join(texts).lower()
    if text.count(_SEP) != len(texts) - 1:
        text = _SEP.join(t.replace(_SEP, " ") for t in texts).lower()
    tokens = np.asarray(re.findall(r"\w+|\x01", text), dtype=object)
    is_sep = tokens == _SEP
    owner = np.cumsum(is_sep)[~is_sep]
    ids = pd.factorize(tokens[~is_sep])[0].astype(np.int64)
    same = owner[1:] == owner[:-1]
    pair = ids[:-1][same] * (int(ids.max(initial=0)) + 1) + ids[1:][same]
    return owner[1:][same], pd.factorize(pair)[0]


def _partitions(outputs: np.ndarray, n_systems: int) -> list[list[tuple[np.ndarray, ...]]] | None:
    """The bigrams of ``outputs`` as pieces of (item, key, check key), split by the top bits of the
    key into :data:`_PARTS` partitions, each in item order; None when a block refuses to hash.

    A bigram's occurrences all fall in one partition, so each partition is counted on its own
    with arrays a sixteenth of the whole: sorts that stay in cache, and temporary arrays small
    enough to be reused rather than mapped afresh (page faults cost as much as the sort)."""
    flat = outputs.ravel()
    pieces: list[list[tuple[np.ndarray, ...]]] = [[] for _ in range(_PARTS)]
    for lo in range(0, len(flat), _BLOCK_OUTPUTS):
        found = _block_bigrams(flat[lo : lo + _BLOCK_OUTPUTS].tolist(), lo)
        if found is None:
            return None
        owner, key, check = found
        part = (key >> np.uint64(64 - _PART_BITS)).astype(np.uint8)
        order = np.argsort(part, kind="stable")  # a radix sort: each partition keeps the output order
        bounds = np.searchsorted(part[order], np.arange(_PARTS + 1))
        columns = ((owner // n_systems).astype(np.int32), key, check)
        for p in range(_PARTS):  # copies: the block's arrays are freed (and their memory reused) at once
            rows = order[bounds[p] : bounds[p + 1]]
            pieces[p].append(tuple(c[rows] for c in columns))
    return pieces


def _runs(values: np.ndarray) -> np.ndarray:
    """Whether each element of a sorted array starts a new run of equal values."""
    new = np.empty(len(values), dtype=bool)
    new[:1] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return new


def _distinct(item: np.ndarray, key: np.ndarray, check: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(item, column) of each distinct (item, bigram) pair and the number of bigrams, from the
    occurrences (``item`` non-decreasing, ``key`` identifying the bigram); None when two
    occurrences with one key differ in ``check`` (a hash collision)."""
    order = np.argsort(key, kind="stable")  # equal keys keep their item order
    new = _runs(key[order])
    if check is not None and (check[order][1:] != check[order][:-1])[~new[1:]].any():
        return None
    item = item[order]
    del order
    column = np.cumsum(new, dtype=np.int64) - 1
    keep = new
    keep[1:] |= item[1:] != item[:-1]  # the first occurrence of a bigram in an item
    return item[keep], column[keep], int(column[-1]) + 1 if len(column) else 0


def _counted(outputs: np.ndarray, n_systems: int) -> list[tuple[np.ndarray, np.ndarray, int]] | None:
    """:func:`_distinct` of each partition of :func:`_partitions` (each partition's pieces freed once
    it is counted); None when a block refuses to hash or a partition holds a collision."""
    pieces = _partitions(outputs, n_systems)
    if pieces is None:
        return None
    out = []
    while pieces:
        part = pieces.pop(0)
        counted = _distinct(*(np.concatenate([q[i] for q in part]) for i in range(3))) if part else \
            (np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int64), 0)
        if counted is None:
            return None
        out.append(counted)
    return out


def bigram_matrix(outputs: np.ndarray) -> sp.csr_matrix:
    """Binary ``(n_items, n_bigrams)`` matrix of the word bigrams of each item's outputs (common bigrams dropped).

    Vectorised (see :func:`_block_bigrams`): no Python string is made per token. A bigram is
    identified by a 64-bit key; the top bits of the key split the occurrences into partitions
    (:func:`_partitions`), and one stable sort of each partition's keys groups each bigram's
    occurrences in item order, which gives the distinct (item, bigram) pairs and each bigram's
    document frequency. A second, independent 64-bit key checks the first: if two bigrams with
    one key differ in the other (a hash collision, odds about 1e-6 at 10^7 distinct bigrams),
    the exact path (regular expression and pandas, slower) gives the ids instead. Column order
    is arbitrary (hash order); the redundancy graph does not depend on it.
    """
    n, m = outputs.shape
    parts = _counted(outputs, m)
    if parts is None:  # a token too long to hash, or a hash collision: exact string identity
        owner, ids = _exact_bigram_ids(outputs)
        parts = [_distinct((owner // m).astype(np.int32), ids, None)]  # type: ignore[list-item]
    items, columns, offset = [], [], 0
    limit = max(MIN_DF_CAP, MAX_DF * n)
    for item, column, width in parts:
        df = np.bincount(column, minlength=width)
        keep = ~(df > limit)[column]  # common bigrams say nothing about redundancy
        items.append(item[keep])
        columns.append(column[keep] + offset)
        offset += width
    item, column = np.concatenate(items), np.concatenate(columns)  # column after column, in item order
    indptr = np.zeros(offset + 1, dtype=np.int64)
    np.cumsum(np.bincount(column, minlength=offset), out=indptr[1:])
    x = sp.csc_matrix((np.ones(len(item), dtype=np.float32), item, indptr), shape=(n, offset)).tocsr()
    x.sort_indices()
    return x


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
    # one global order of the bigrams, rarest first (ties by column): each bigram's rank in it;
    # any global order gives the same pairs, rarest first gives the fewest candidates
    rank = np.empty(len(df), dtype=np.int64)
    rank[np.argsort(df.astype(np.uint32), kind="stable")] = np.arange(len(df))
    ranked = sp.csr_matrix((x.data, rank[x.indices], x.indptr), shape=x.shape)
    ranked.sort_indices()  # within each row, rarest first
    position = np.arange(len(ranked.indices)) - ranked.indptr[rows]
    min_overlap = np.ceil(threshold * sizes / (2 - threshold) - 1e-9).astype(np.int64)
    prefix_len = np.where(sizes > 0, sizes - min_overlap + 1, 0)
    keep = position < prefix_len[rows]
    prefix = sp.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.float32), (rows[keep], ranked.indices[keep])), shape=x.shape
    )
    del ranked
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
