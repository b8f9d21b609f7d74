"""Input checks shared by the stopping rules (raise, never assert)."""

from __future__ import annotations

import math

from humeval.errors import HumevalError

__all__ = ["check_delta", "check_outcome"]


def check_delta(delta: float, *, what: str = "delta") -> float:
    """Return ``delta`` as float if ``0 < delta < 1``, else raise a :class:`HumevalError`."""
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise HumevalError(f"{what} must be a number in (0, 1), got {delta!r}") from None
    if not (0.0 < value < 1.0) or math.isnan(value):
        raise HumevalError(
            f"{what} must lie strictly between 0 and 1 (the error probability you accept, "
            f"e.g. 0.05 or 0.001), got {delta!r}"
        )
    return value


def check_outcome(x: object) -> int:
    """An outcome is 1 (A chosen) or 0 (B chosen); also accepts ``"A"``/``"B"`` and bools."""
    if isinstance(x, str):
        if x in ("A", "B"):
            return 1 if x == "A" else 0
        raise HumevalError(f"an outcome must be 'A', 'B', 1 or 0, got {x!r}")
    if x in (0, 1) or x is True or x is False:
        return int(x)
    raise HumevalError(f"an outcome must be 'A', 'B', 1 or 0, got {x!r}")
