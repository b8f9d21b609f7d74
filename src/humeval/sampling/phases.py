"""Running the phases of a sampler with real people: as far as the imported human scores allow.

Phase ``t`` of a score-driven sampler (CASF) needs the human scores of every item chosen
in phases ``0..t-1``. :func:`advance` replays the phases from the start (selection is
deterministic for a seed and the same scores) and stops before the first phase whose
inputs are not scored yet, so calling it again after importing scores runs the next phase.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from humeval.errors import DataError, did_you_mean
from humeval.sampling.base import Sampler, phase_loop
from humeval.sampling.table import HUMAN, ItemTable, require_complete_scores

__all__ = ["PhaseRun", "advance", "merge_scores", "require_complete_scores"]


@dataclass(frozen=True)
class PhaseRun:
    """The items selected so far and where the phases stand."""

    rows: np.ndarray
    phases: np.ndarray
    plan: list[int]
    waiting: bool

    @property
    def phases_done(self) -> int:
        return int(self.phases.max()) + 1 if len(self.phases) else 0

    @property
    def complete(self) -> bool:
        return self.phases_done == len(self.plan)


def _scored(table: ItemTable, aspects: Sequence[str], rows: np.ndarray) -> bool:
    return all(not np.isnan(table.human[a][rows]).any() for a in aspects)


def advance(
    sampler: Sampler, table: ItemTable, size: int, seed: int, aspects: Sequence[str] | None = None
) -> PhaseRun:
    """Run every phase whose needed human scores are in ``table.human`` (NaN = not scored yet)."""
    plan = sampler.plan(size, table.n_items)
    names: list[str] = []
    if sampler.needs_scores and len(plan) > 1 and table.human:
        names = table.aspects(list(aspects) if aspects else None)

    def collected(rows: np.ndarray) -> np.ndarray | None:
        return table.scores(names, rows) if names and _scored(table, names, rows) else None

    chosen, phase_of, waiting = phase_loop(sampler, table, size, seed, collected)
    return PhaseRun(chosen, phase_of, plan, waiting=waiting)


def merge_scores(outputs: pd.DataFrame, scores: pd.DataFrame, *, source: str = "human scores") -> pd.DataFrame:
    """``outputs`` with the ``human.*`` columns replaced by those of ``scores`` (item_id, system, human.*).

    Rows of ``scores`` must name known (item, system) pairs and carry at least one ``human.*`` column.
    """
    for col in ("item_id", "system"):
        if col not in scores.columns:
            raise DataError(f"{source}: missing column '{col}'. {did_you_mean(col, [str(c) for c in scores.columns])}")
    aspects = [c for c in scores.columns if str(c).startswith(HUMAN)]
    if not aspects:
        raise DataError(f"{source}: no human score columns; name them human.<aspect> (e.g. human.fluency)")
    scores = scores.assign(item_id=scores["item_id"].astype(str), system=scores["system"].astype(str))
    if scores.duplicated(["item_id", "system"]).any():
        dup = scores[scores.duplicated(["item_id", "system"])].iloc[0]
        raise DataError(f"{source}: (item {dup['item_id']}, system {dup['system']}) appears more than once")
    known = pd.MultiIndex.from_frame(outputs[["item_id", "system"]].astype(str))
    given = pd.MultiIndex.from_frame(scores[["item_id", "system"]])
    unknown = given.difference(known)
    if len(unknown):
        raise DataError(f"{source}: {len(unknown)} row(s) name an (item, system) pair not in the data, e.g. {unknown[0]}")
    base = outputs.drop(columns=[c for c in outputs.columns if str(c).startswith(HUMAN)])
    values = scores[["item_id", "system", *aspects]].copy()
    for a in aspects:
        values[a] = pd.to_numeric(values[a], errors="coerce")
    return base.merge(values, on=["item_id", "system"], how="left")


