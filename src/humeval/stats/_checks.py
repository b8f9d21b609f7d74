"""Input checks shared by humeval.stats: every bad input becomes a DataError naming it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from humeval.errors import DataError, did_you_mean

__all__ = ["as_float_array", "check_alpha", "check_choice", "check_n_boot", "wide_from_long"]


def as_float_array(values: Any, name: str, ndim: int, *, allow_nan: bool) -> np.ndarray:
    """``values`` as a float array with ``ndim`` dimensions, or a DataError saying why not."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(
            f"{name}: expected numbers, got values that cannot be read as floats ({exc})"
        ) from None
    if arr.ndim != ndim:
        shape = "a 1-d array" if ndim == 1 else "a 2-d array"
        raise DataError(f"{name}: expected {shape}, got shape {arr.shape}")
    if np.isinf(arr).any():
        where = tuple(int(i) for i in np.argwhere(np.isinf(arr))[0])
        raise DataError(
            f"{name}: infinite value {arr[where]} at index {where}; only finite numbers are valid"
        )
    if not allow_nan and np.isnan(arr).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(arr))[0])
        count = int(np.isnan(arr).sum())
        raise DataError(
            f"{name}: {count} missing value(s) (NaN), first at index {where}; this method needs complete data "
            "(drop incomplete rows first, or use krippendorff_alpha, which allows missing values)"
        )
    return arr


def check_choice(value: str, valid: Iterable[str], name: str) -> str:
    options = list(valid)
    if value not in options:
        raise DataError(f"{name}: unknown value {value!r}. {did_you_mean(value, options)}")
    return value


def check_alpha(alpha: float) -> float:
    if not (0.0 < float(alpha) < 1.0):
        raise DataError(f"alpha: must be between 0 and 1 (exclusive), got {alpha!r}")
    return float(alpha)


def check_n_boot(n_boot: int) -> int:
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise DataError(
            f"n_boot: must be a non-negative integer (0 = no bootstrap), got {n_boot!r}"
        )
    return int(n_boot)


def wide_from_long(data: pd.DataFrame, index: str, columns: str, values: str) -> pd.DataFrame:
    """Pivot a long frame (one row per judgement) into ``index x columns``; duplicates are an error."""
    missing = [c for c in (index, columns, values) if c not in data.columns]
    if missing:
        raise DataError(
            f"long data: column(s) {missing} not found. {did_you_mean(missing[0], map(str, data.columns))}"
        )
    dup = data.duplicated([index, columns], keep=False)
    if dup.any():
        first = [
            v.item() if hasattr(v, "item") else v
            for v in data.loc[dup, [index, columns]].iloc[0].tolist()
        ]
        raise DataError(
            f"long data: {int(dup.sum())} rows share an ({index}, {columns}) pair, first {first}; "
            "each pair must appear once (aggregate repeated judgements first)"
        )
    return data.pivot(index=index, columns=columns, values=values)
