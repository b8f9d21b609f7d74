"""Pair construction for 2AFC when the outputs of two systems are not aligned by input.

The Dynamic Human Evaluation study (Thorleiksdottir et al., section 5.2) generated sentences
from each model for combinations of attributes, then "pair[ed] sentences from each model on
matching attributes and similar sentence length", removed duplicate sentences, and
randomised the order of the pairs. :func:`pair_outputs` does this for the protocol's
``sampling.pairing``:

1. keep the outputs of the two systems; with ``drop_duplicates`` drop repeated texts of a
   system (first occurrence kept);
2. within each group of equal ``match`` values, sort each system's outputs by length in
   whitespace tokens (ties in a seeded random order) and pair them greedily from the
   shortest: pair the two heads when their lengths differ by at most
   ``max_length_difference``, else drop the shorter head. For a length tolerance this
   greedy scan yields the largest number of pairs;
3. shuffle the pairs (seeded) and number them ``pair-00001``, ...: each pair is an item
   with one output per system, so sampling, design, collection and analysis treat it
   like any aligned item. The source ids are kept in ``source_item``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from humeval.errors import DataError, did_you_mean
from humeval.protocol.models import Pairing
from humeval.rng import as_generator

__all__ = ["pair_outputs", "token_length"]


def token_length(texts: pd.Series) -> np.ndarray:
    """Length in whitespace-separated tokens."""
    return texts.fillna("").astype(str).str.split().str.len().to_numpy(dtype=np.int64)


def _greedy(len_a: np.ndarray, len_b: np.ndarray, tol: int) -> list[tuple[int, int]]:
    """Positions (in the sorted arrays) of the pairs of the two-pointer scan."""
    i = j = 0
    out = []
    while i < len(len_a) and j < len(len_b):
        if abs(int(len_a[i]) - int(len_b[j])) <= tol:
            out.append((i, j))
            i += 1
            j += 1
        elif len_a[i] < len_b[j]:
            i += 1
        else:
            j += 1
    return out


def pair_outputs(frame: pd.DataFrame, pairing: Pairing, seed: int) -> pd.DataFrame:
    """The long outputs table of the pairs (two rows per pair: one per system); see the module docstring."""
    a, b = pairing.systems
    present = sorted(frame["system"].astype(str).unique())
    for i, name in enumerate((a, b)):
        if name not in present:
            raise DataError(f"sampling.pairing.systems[{i}]: system '{name}' is not in the data. {did_you_mean(name, present)}")
    for i, col in enumerate(pairing.match):
        if col not in frame.columns:
            raise DataError(f"sampling.pairing.match[{i}]: no column '{col}' in the data. "
                            f"{did_you_mean(col, [str(c) for c in frame.columns])}")
    rng = as_generator(seed)
    f = frame[frame["system"].isin([a, b])].reset_index(drop=True)
    if pairing.drop_duplicates:
        f = f.drop_duplicates(["system", "output"], keep="first").reset_index(drop=True)
    f = f.assign(_len=token_length(f["output"]), _key=rng.random(len(f)))
    f = f.sort_values(["_len", "_key"], kind="stable")
    keys = list(pairing.match)
    pairs: list[tuple[int, int]] = []
    groups = f.groupby(keys, sort=True) if keys else [((), f)]
    for _, g in groups:
        ga, gb = g[g["system"] == a], g[g["system"] == b]
        for i, j in _greedy(ga["_len"].to_numpy(), gb["_len"].to_numpy(), pairing.max_length_difference):
            pairs.append((int(ga.index[i]), int(gb.index[j])))
    if not pairs:
        raise DataError(f"sampling.pairing: no output of {a} has an output of {b} with equal "
                        f"{', '.join(keys) or 'properties'} within {pairing.max_length_difference} tokens")
    order = rng.permutation(len(pairs))
    rows_a = [pairs[k][0] for k in order]
    rows_b = [pairs[k][1] for k in order]
    ids = [f"pair-{n + 1:05d}" for n in range(len(pairs))]
    out = []
    for rows in (rows_a, rows_b):
        part = f.loc[rows].drop(columns=["_len", "_key"]).copy()
        part["source_item"] = part["item_id"].astype(str).to_numpy()
        part["item_id"] = ids
        out.append(part)
    both = pd.concat(out, ignore_index=True)
    both["_pos"] = np.tile(np.arange(len(ids)), 2)
    return both.sort_values(["_pos", "system"], kind="stable").drop(columns="_pos").reset_index(drop=True)
