"""Descriptive statistics per system: mean with its t interval, median, spread, response counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = ["describe", "distribution"]


def _mean_ci(x: np.ndarray, alpha: float) -> tuple[float, float]:
    r"""Student-t interval :math:`\bar x \pm t_{1-\alpha/2, n-1}\, s/\sqrt n` (NaN for n < 2)."""
    if x.size < 2:
        return float("nan"), float("nan")
    half = sps.t.ppf(1 - alpha / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def describe(frame: pd.DataFrame, systems: list[str], alpha: float, score: str = "score") -> list[dict[str, Any]]:
    """One record per system: mean (with its ``1 - alpha`` t interval), sd, median, n judgements, n items."""
    out = []
    for system in systems:
        sub = frame[frame["system"] == system]
        x = sub[score].to_numpy(dtype=float)
        lo, hi = _mean_ci(x, alpha)
        out.append({
            "system": system, "estimate": float(x.mean()) if x.size else None, "ci_low": lo, "ci_high": hi,
            "p_value": None, "n": int(x.size), "method": "mean_t_interval",
            "sd": float(x.std(ddof=1)) if x.size > 1 else None,
            "median": float(np.median(x)) if x.size else None,
            "items": int(sub["item_id"].nunique()),
        })
    return out


def distribution(frame: pd.DataFrame, systems: list[str], levels: list[float]) -> dict[str, dict[str, int]]:
    """Counts of each response level per system (for the stacked bar charts)."""
    out = {}
    for system in systems:
        values = frame.loc[frame["system"] == system, "value"]
        counts = values.value_counts()
        out[system] = {f"{lvl:g}": int(counts.get(lvl, 0)) for lvl in levels}
    return out
