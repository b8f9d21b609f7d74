"""From a long table to an :class:`ItemTable` with metric columns ready for the samplers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from humeval.errors import DataError, did_you_mean
from humeval.sampling.table import AUTO, ItemTable, SystemOrder

__all__ = ["ITEM_COLUMNS", "METRIC_MODES", "normalise_long", "prepare_table"]

#: item id columns tried in order in a standalone long file
ITEM_COLUMNS = ("item_id", "sample_id")
METRIC_MODES = ("auto", "stored", "compute", "none")


def normalise_long(frame: pd.DataFrame) -> pd.DataFrame:
    """Rename the item id column (``item_id`` or ``sample_id``) and the input column (``source``) to humeval's names."""
    item = next((c for c in ITEM_COLUMNS if c in frame.columns), None)
    if item is None:
        raise DataError(
            f"data: no item id column; expected one of {', '.join(ITEM_COLUMNS)}. "
            f"{did_you_mean('item_id', [str(c) for c in frame.columns])}"
        )
    renamed = frame.rename(columns={item: "item_id"})
    if "input" not in renamed.columns and "source" in renamed.columns:
        renamed = renamed.rename(columns={"source": "input"})
    for col in ("system", "output"):
        if col not in renamed.columns:
            raise DataError(f"data: missing column '{col}'. {did_you_mean(col, [str(c) for c in renamed.columns])}")
    renamed["item_id"] = renamed["item_id"].astype(str)
    return renamed


def prepare_table(
    frame: pd.DataFrame,
    metrics: str = "auto",
    *,
    cache_dir: str | Path | None = None,
    progress: bool = True,
    system_order: SystemOrder = "sorted",
) -> ItemTable:
    """Reshape ``frame`` and make sure metric columns exist; ``metrics`` is one of :data:`METRIC_MODES`.

    ``auto``: use stored ``auto.*`` columns, compute the default metrics when there are none;
    ``stored``: stored columns only; ``compute``: add computed metrics beside stored ones;
    ``none``: no metric columns needed (random, heuristic, systematic by length...).
    ``system_order``: the systems sorted by name, or in the data's order (:meth:`ItemTable.from_long`).
    """
    if metrics not in METRIC_MODES:
        raise DataError(f"metrics: unknown mode '{metrics}'. {did_you_mean(metrics, METRIC_MODES)}")
    frame = normalise_long(frame)
    has_stored = any(str(c).startswith(AUTO) for c in frame.columns)
    if metrics == "compute" or (metrics == "auto" and not has_stored):
        from humeval.metrics import compute_metrics

        frame = compute_metrics(frame, cache_dir=cache_dir, progress=progress)
    return ItemTable.from_long(frame, system_order=system_order)
