"""Vote counts of an arena: the votes of every pair of models as (wins of i, wins of j, ties, both bad).

:func:`read_arena_counts` opens the counts layout of Chatbot Arena's public votes as the ``leaderbot`` package
ships them (``{"models": [...], "X": [[i, j], ...], "Y": [[wins i, wins j, ties, both bad], ...]}``);
:meth:`ArenaCounts.top` keeps the models ranked highest by Davidson's model fitted to every vote, and
:meth:`ArenaCounts.matrices` gives the K x K wins and ties the statistics read. :func:`read_arena_votes` also reads
vote logs one vote per row and counts them (:func:`counts_from_battles`): FastChat battle logs (JSON array, JSON lines,
Parquet; :func:`humeval.data.battles.read_battle_table`) and tables of ``left``, ``right`` and ``winner`` (``left``,
``right``, ``tie``) as LLMFAO's crowd comparisons ship.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from humeval.errors import DataError
from humeval.stats.davidson import DavidsonFit, davidson_fit

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ArenaCounts", "counts_from_battles", "pair_matrices", "read_arena_counts", "read_arena_votes"]


def pair_matrices(pairs: np.ndarray, k: int, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(wins[..., i, j], ties[..., i, j]) of K systems from per-pair counts ``counts[..., p, 4]`` of ``pairs[p]``."""
    c = np.asarray(counts)
    lead = c.shape[:-2]
    wins = np.zeros((*lead, k, k), dtype=np.int64)
    ties = np.zeros((*lead, k, k), dtype=np.int64)
    i, j = pairs[:, 0], pairs[:, 1]
    wins[..., i, j] = c[..., 0]
    wins[..., j, i] = c[..., 1]
    ties[..., i, j] = ties[..., j, i] = c[..., 2] + c[..., 3]
    return wins, ties


@dataclass(frozen=True)
class ArenaCounts:
    """``models``; ``pairs[p] = (i, j)`` indices into models; ``counts[p] = (wins i, wins j, ties, both bad)``."""

    models: tuple[str, ...]
    pairs: np.ndarray
    counts: np.ndarray

    @property
    def votes(self) -> int:
        return int(self.counts.sum())

    def matrices(self, counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(wins[..., i, j], ties[..., i, j]) from per-pair counts (``counts[..., p, 4]``; default the data's)."""
        return pair_matrices(self.pairs, len(self.models), self.counts if counts is None else counts)

    def fit(self) -> DavidsonFit:
        """Davidson's model fitted to every vote (ties and both-bad votes as ties)."""
        return davidson_fit(*self.matrices())

    def top(self, n: int) -> ArenaCounts:
        """The ``n`` models ranked highest by :meth:`fit` (in that order) and the votes among them.

        A model that met none of the others kept (retired before they came) is replaced by the next one by rank:
        a replay could say nothing about it.
        """
        k = len(self.models)
        if isinstance(n, bool) or int(n) != n or not 2 <= n <= k:
            raise DataError(f"arena counts: --models must be an integer in 2..{k}, got {n!r}")
        fit = self.fit()
        if not bool(fit.converged):
            raise DataError("arena counts: the Davidson fit of all votes did not converge (a model that never won or "
                            "never lost); the counts cannot rank the models")
        met = np.zeros((k, k), dtype=bool)
        met[self.pairs[:, 0], self.pairs[:, 1]] = met[self.pairs[:, 1], self.pairs[:, 0]] = self.counts.sum(axis=1) > 0
        ranked = [int(x) for x in fit.order()]
        keep, nxt = ranked[: int(n)], int(n)
        while True:  # drop a model that met none of the others kept, and take the next one by rank
            alone = [m for m in keep if not met[m, [x for x in keep if x != m]].any()]
            if not alone or nxt >= k:
                break
            keep = [m for m in keep if m not in alone]
            keep, nxt = keep + ranked[nxt: nxt + len(alone)], nxt + len(alone)
        keep = [m for m in ranked if m in keep]
        alone = [m for m in keep if not met[m, [x for x in keep if x != m]].any()]
        keep = [m for m in keep if m not in alone]
        if len(keep) < n:
            raise DataError(f"arena counts: only {len(keep)} models are connected by votes, --models asked for {n}")
        where = {m: new for new, m in enumerate(keep)}
        rows, pairs = [], []
        for (i, j), c in zip(self.pairs, self.counts, strict=True):
            if int(i) in where and int(j) in where:
                a, b = where[int(i)], where[int(j)]
                pairs.append((a, b) if a < b else (b, a))
                rows.append(c if a < b else c[[1, 0, 2, 3]])
        return ArenaCounts(tuple(self.models[i] for i in keep), np.asarray(pairs, dtype=np.int64).reshape(-1, 2),
                           np.asarray(rows, dtype=np.int64).reshape(-1, 4))


def read_arena_counts(path: str | Path) -> ArenaCounts:
    """Read a counts file (``models``, ``X`` pairs, ``Y`` rows of four counts); DataError names what is wrong."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{p}: no such arena counts file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{p}: not a readable JSON file of arena counts ({exc})") from None
    if not isinstance(raw, dict) or not {"models", "X", "Y"} <= set(raw):
        got = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
        raise DataError(f"{p}: an arena counts file is an object with 'models', 'X' and 'Y'; got {got}")
    models = tuple(str(m) for m in raw["models"])
    try:
        pairs = np.asarray(raw["X"], dtype=np.int64).reshape(-1, 2)
        counts = np.asarray(raw["Y"], dtype=np.int64).reshape(-1, 4)
    except (TypeError, ValueError):
        raise DataError(f"{p}: 'X' must hold [i, j] index pairs and 'Y' rows of four counts "
                        "[wins of i, wins of j, ties, both bad]") from None
    if len(pairs) != len(counts):
        raise DataError(f"{p}: 'X' has {len(pairs)} pairs but 'Y' {len(counts)} rows of counts")
    if len(pairs) and (pairs.min() < 0 or pairs.max() >= len(models) or (pairs[:, 0] == pairs[:, 1]).any()):
        raise DataError(f"{p}: 'X' must name two different models by index in 0..{len(models) - 1}")
    if (counts < 0).any():
        raise DataError(f"{p}: 'Y' holds a negative count (row {int(np.flatnonzero((counts < 0).any(axis=1))[0])})")
    swap = pairs[:, 0] > pairs[:, 1]
    counts = np.where(swap[:, None], counts[:, [1, 0, 2, 3]], counts)
    pairs = np.sort(pairs, axis=1)
    uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)  # a pair listed twice: its counts add up
    total = np.zeros((len(uniq), 4), dtype=np.int64)
    np.add.at(total, inverse.reshape(-1), counts)
    return ArenaCounts(models, uniq.reshape(-1, 2), total)


_WINNER_COLUMN = {"model_a": 0, "model_b": 1, "tie": 2, "tie (bothbad)": 3}


def counts_from_battles(battles: pd.DataFrame) -> ArenaCounts:
    """Count a battles table (``model_a``, ``model_b``, ``winner`` in model_a / model_b / tie / tie (bothbad)) per
    pair; models in sorted order."""
    import pandas as pd

    missing = [c for c in ("model_a", "model_b", "winner") if c not in battles.columns]
    if missing:
        raise DataError(f"arena votes: the battles lack the columns {missing}")
    winner = battles["winner"].astype(str).map(_WINNER_COLUMN)
    if winner.isna().any():
        bad = battles["winner"][winner.isna()].iloc[0]
        raise DataError(f"arena votes: winner {bad!r} is not one of {', '.join(_WINNER_COLUMN)}")
    a, b = battles["model_a"].astype(str), battles["model_b"].astype(str)
    models = tuple(sorted(set(a) | set(b)))
    index = {m: i for i, m in enumerate(models)}
    ia, ib = a.map(index).to_numpy(), b.map(index).to_numpy()
    col = winner.to_numpy(dtype=np.int64)
    swap = ia > ib  # orient every battle as (lower index, higher index)
    col = np.where(swap & (col < 2), 1 - col, col)
    lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
    keep = lo != hi
    frame = pd.DataFrame({"i": lo[keep], "j": hi[keep], "c": col[keep]})
    table = frame.groupby(["i", "j", "c"]).size().unstack("c", fill_value=0).reindex(columns=range(4), fill_value=0)
    pairs = np.asarray(table.index.to_list(), dtype=np.int64).reshape(-1, 2)
    return ArenaCounts(models, pairs, table.to_numpy(dtype=np.int64).reshape(-1, 4))


def read_arena_votes(path: str | Path) -> ArenaCounts:
    """Counts from a counts file (``{"models", "X", "Y"}``), a FastChat battle log, or a CSV of ``left``, ``right``,
    ``winner`` votes (LLMFAO's crowd comparisons: ``left`` / ``right`` / ``tie``)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: no such arena votes file")
    if p.suffix.lower() == ".json":
        with p.open("rb") as fh:
            head = fh.read(64).lstrip()
        if head.startswith(b"{"):
            return read_arena_counts(p)
    if p.suffix.lower() == ".csv":
        import pandas as pd

        try:
            table = pd.read_csv(p, dtype=str, keep_default_na=False)
        except (OSError, ValueError) as exc:
            raise DataError(f"{p}: not a readable CSV of votes ({exc})") from None
        missing = [c for c in ("left", "right", "winner") if c not in table.columns]
        if missing:
            raise DataError(f"{p}: a CSV of votes needs the columns left, right and winner (left, right, tie); "
                            f"missing {missing}")
        winner = table["winner"].map({"left": "model_a", "right": "model_b", "tie": "tie"})
        if winner.isna().any():
            row = int(np.flatnonzero(winner.isna().to_numpy())[0])
            raise DataError(f"{p}: row {row + 2}: winner {table['winner'].iloc[row]!r} is not left, right or tie")
        return counts_from_battles(pd.DataFrame({"model_a": table["left"], "model_b": table["right"],
                                                 "winner": winner}))
    from humeval.data.battles import read_battle_table

    return counts_from_battles(read_battle_table(p, columns=("model_a", "model_b", "winner")))
