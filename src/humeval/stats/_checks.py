"""Input checks shared by humeval.stats: every bad input becomes a DataError naming it."""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np

from humeval.errors import DataError, did_you_mean

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "as_float_array",
    "check_alpha",
    "check_choice",
    "check_confidence_level",
    "check_n_boot",
    "wide_from_long",
]


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


def _open_unit(value: object) -> float | None:
    """``value`` as a float when it is a real number strictly between 0 and 1, else None."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    number = float(value)
    return number if 0.0 < number < 1.0 else None


def check_confidence_level(confidence_level: object, where: str) -> float:
    """The confidence level of an interval (0.95 = a 95% interval) as a float in (0, 1).

    Anything else is a DataError naming ``where`` (the function), the bad value and the
    valid range; a percentage such as 95 gets a hint to write 0.95.
    """
    level = _open_unit(confidence_level)
    if level is None:
        hint = ""
        if (
            isinstance(confidence_level, Real)
            and not isinstance(confidence_level, bool)
            and not math.isnan(float(confidence_level))
            and 1.0 < float(confidence_level) < 100.0
        ):
            hint = f"; it looks like a percentage: write {float(confidence_level) / 100:g}"
        raise DataError(
            f"{where}: confidence_level must be a number strictly between 0 and 1 "
            f"(e.g. 0.95 for a 95% interval), got {confidence_level!r}{hint}"
        )
    return level


def check_alpha(alpha: object, where: str) -> float:
    """A significance level (the threshold a p-value is compared with) as a float in (0, 1)."""
    level = _open_unit(alpha)
    if level is None:
        raise DataError(
            f"{where}: alpha (the significance level) must be a number strictly between 0 and 1 "
            f"(e.g. 0.05), got {alpha!r}"
        )
    return level


def check_n_boot(n_boot: int) -> int:
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise DataError(
            f"n_boot: must be a non-negative integer (0 = no bootstrap), got {n_boot!r}"
        )
    return int(n_boot)


def wide_from_long(data: pd.DataFrame, index: str, columns: str, values: str) -> pd.DataFrame:
    """Pivot a long frame (one row per judgement) into ``index x columns``; duplicates are an error.

    Examples:
        >>> import pandas as pd
        >>> from humeval.stats import wide_from_long
        >>> long = pd.DataFrame({"item": [1, 1, 2, 2], "system": ["A", "B", "A", "B"], "score": [3, 4, 5, 6]})
        >>> wide_from_long(long, "item", "system", "score")  # doctest: +NORMALIZE_WHITESPACE
        system  A  B
        item
        1       3  4
        2       5  6
    """
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
