"""One selection run: the shared core of the ``sample`` stage and ``humeval sample --data``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from humeval.sampling.base import Sampler, sample_size
from humeval.sampling.phases import PhaseRun, advance, merge_scores, require_complete_scores
from humeval.sampling.prepare import prepare_table
from humeval.sampling.table import HUMAN, ItemTable

__all__ = ["select_items"]


def select_items(
    outputs: pd.DataFrame,
    sampler: Sampler,
    rate: float,
    seed: int,
    *,
    simulate_scores: bool = False,
    scores: pd.DataFrame | None = None,
    scores_source: str = "scores",
    metrics: str = "auto",
    cache_dir: str | Path | None = None,
) -> tuple[ItemTable, PhaseRun]:
    """Select ``rate`` of the items of ``outputs`` (long table) as far as the human scores allow.

    A score-driven sampler sees only the human scores collected so far (``scores``: item_id,
    system, human.*), or, with ``simulate_scores``, the data's own ``human.*`` columns (which
    must then be complete). Metric columns come from ``metrics`` (``auto``: stored ``auto.*``
    columns, else computed and cached in ``cache_dir``). The systems are ordered as the sampler
    asks (``sampler.system_order``: by name, or as they first appear in ``outputs``).
    """
    frame = outputs
    if sampler.needs_scores and not simulate_scores:
        frame = frame.drop(columns=[c for c in frame.columns if str(c).startswith(HUMAN)])
        if scores is not None:
            frame = merge_scores(frame, scores, source=scores_source)
    table = prepare_table(frame, metrics if sampler.needs_metrics else "none", cache_dir=cache_dir,
                          system_order=getattr(sampler, "system_order", "sorted"))
    if sampler.needs_scores and simulate_scores:
        require_complete_scores(table)
    return table, advance(sampler, table, sample_size(table.n_items, rate), seed)

