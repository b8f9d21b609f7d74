"""Descriptive statistics per system: mean with its t interval, median, spread, response counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = ["describe", "distribution", "scale_bounds"]


def _mean_ci(x: np.ndarray, alpha: float) -> tuple[float, float]:
    r"""Student-t interval :math:`\bar x \pm t_{1-\alpha/2, n-1}\, s/\sqrt n` (NaN for n < 2)."""
    if x.size < 2:
        return float("nan"), float("nan")
    half = sps.t.ppf(1 - alpha / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def describe(frame: pd.DataFrame, systems: list[str], alpha: float, score: str = "score",
             bounds: tuple[float, float] | None = None) -> list[dict[str, Any]]:
    """One record per system: mean (with its ``1 - alpha`` t interval), sd, median, n judgements, n items.

    ``bounds``: the scale's range (Likert 1..k, slider min..max, ESA 0..100; 0..inf for
    magnitude scores). A t interval that leaves the scale is clipped to it (the mean of values
    on the scale is on the scale), and the record says so in ``clipped_to``.
    """
    out = []
    for system in systems:
        sub = frame[frame["system"] == system]
        x = sub[score].to_numpy(dtype=float)
        lo, hi = _mean_ci(x, alpha)
        record = {
            "system": system, "estimate": float(x.mean()) if x.size else None, "ci_low": lo, "ci_high": hi,
            "p_value": None, "n": int(x.size), "method": "mean_t_interval",
            "sd": float(x.std(ddof=1)) if x.size > 1 else None,
            "median": float(np.median(x)) if x.size else None,
            "items": int(sub["item_id"].nunique()),
        }
        if bounds is not None and x.size >= 2 and (lo < bounds[0] or hi > bounds[1]):
            record |= {"ci_low": max(lo, bounds[0]), "ci_high": min(hi, bounds[1]), "clipped_to": [b if np.isfinite(b) else None for b in bounds]}
        out.append(record)
    return out


def scale_bounds(criterion: Any, logged: bool) -> tuple[float, float] | None:
    """The range a rating criterion's analysed scores can take (``None``: unbounded, e.g. log scores)."""
    if criterion.type == "likert":
        return (1.0, float(criterion.points))
    if criterion.type == "slider":
        return (float(criterion.min), float(criterion.max))
    if criterion.type == "esa":
        return (0.0, 100.0)
    if criterion.type in ("magnitude", "rankme") and not logged:
        return (0.0, float("inf"))
    return None


def distribution(frame: pd.DataFrame, systems: list[str], levels: list[float]) -> dict[str, dict[str, int]]:
    """Counts of each response level per system (for the stacked bar charts)."""
    out = {}
    for system in systems:
        values = frame.loc[frame["system"] == system, "value"]
        counts = values.value_counts()
        out[system] = {f"{lvl:g}": int(counts.get(lvl, 0)) for lvl in levels}
    return out
