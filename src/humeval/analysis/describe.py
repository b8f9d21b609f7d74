"""Descriptive statistics per system: mean with its interval, median, spread, response counts.

On a bounded scale (Likert, slider, ESA score, raw magnitude) the interval is the BCa
bootstrap over items of :func:`humeval.stats.means.mean_ci`, whose ends are means of
resampled answers and so stay on the scale; unbounded scores (log magnitudes) keep the
Student-t interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from humeval.stats.means import mean_ci

__all__ = ["describe", "distribution", "scale_bounds"]


def _mean_ci(x: np.ndarray, alpha: float) -> tuple[tuple[float, float], dict[str, str]]:
    r"""Student-t interval :math:`\bar x \pm t_{1-\alpha/2, n-1}\, s/\sqrt n`, or none (with the reason) when
    there are fewer than 2 scores or no spread (``s = 0`` would give a zero-width interval)."""
    nan = (float("nan"), float("nan"))
    if x.size < 2:
        return nan, {"no_interval": f"not enough data: {x.size} score(s); a t interval needs two or more"}
    if np.ptp(x) == 0:
        return nan, {"no_interval": f"not enough data: all {x.size} scores are {x[0]:g}, so the data show no spread"}
    half = sps.t.ppf(1 - alpha / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return (float(x.mean() - half), float(x.mean() + half)), {}


def describe(frame: pd.DataFrame, systems: list[str], alpha: float, score: str = "score",
             bounds: tuple[float, float] | None = None, *, n_boot: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """One record per system: mean (with its ``1 - alpha`` interval), sd, median, n judgements, n items.

    ``bounds``: the scale's range (Likert 1..k, slider min..max, ESA 0..100; 0..inf for raw
    magnitude scores). On a bounded scale the interval is a BCa bootstrap over items
    (``n_boot`` resamples, ``seed``; it cannot leave the scale), otherwise a t interval.
    """
    out = []
    for k, system in enumerate(systems):
        sub = frame[frame["system"] == system]
        x = sub[score].to_numpy(dtype=float)
        extra: dict[str, Any]
        if bounds is None:
            (lo, hi), extra = _mean_ci(x, alpha)
            method = "mean_t_interval"
        else:
            est = mean_ci(x, sub["item_id"].to_numpy(), confidence_level=1 - alpha, n_boot=n_boot, seed=seed + k)
            lo, hi, method = est.ci_low, est.ci_high, est.method
            extra = {"n_boot": n_boot, "seed": seed + k,
                     **({"no_interval": est.extra["no_interval"]} if "no_interval" in est.extra else {})}
        out.append({
            "system": system, "estimate": float(x.mean()) if x.size else None, "ci_low": lo, "ci_high": hi,
            "p_value": None, "n": int(x.size), "method": method,
            "sd": float(x.std(ddof=1)) if x.size > 1 else None,
            "median": float(np.median(x)) if x.size else None,
            "items": int(sub["item_id"].nunique()), **extra,
        })
    return out


def scale_bounds(criterion: Any, logged: bool) -> tuple[float, float] | None:
    """The range a rating criterion's analysed scores can take (``None``: unbounded, e.g. log scores)."""
    return criterion.task.bounds(criterion, logged)


def distribution(frame: pd.DataFrame, systems: list[str], levels: list[float]) -> dict[str, dict[str, int]]:
    """Counts of each response level per system (for the stacked bar charts)."""
    out = {}
    for system in systems:
        values = frame.loc[frame["system"] == system, "value"]
        counts = values.value_counts()
        out[system] = {f"{lvl:g}": int(counts.get(lvl, 0)) for lvl in levels}
    return out
