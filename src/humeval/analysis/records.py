"""Turning stats results into plain, JSON-ready records (every one with its uncertainty fields)."""

from __future__ import annotations

from typing import Any

from humeval.errors import DataError
from humeval.stats import Estimate, Ranking

__all__ = ["attempt", "estimate_record", "ranking_record", "undefined"]


def estimate_record(est: Estimate, **context: Any) -> dict[str, Any]:
    """``context`` first, then estimate, ci_low, ci_high, p_value, n, method and the extras."""
    return {**context, **est.to_dict()}


def undefined(method: str, reason: str, **context: Any) -> dict[str, Any]:
    """A result that could not be computed, with the reason (e.g. constant data)."""
    return {**context, "estimate": None, "ci_low": None, "ci_high": None, "p_value": None, "n": 0,
            "method": method, "undefined": reason}


def attempt(method: str, func: Any, *args: Any, context: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
    """Run a stats function; a degenerate input (DataError) becomes an ``undefined`` record."""
    context = context or {}
    try:
        result = func(*args, **kwargs)
    except DataError as exc:
        return undefined(method, str(exc), **context)
    return estimate_record(result, **context)


def ranking_record(ranking: Ranking) -> dict[str, Any]:
    """A ranking as a record: method, label (clusters), one row per system best first."""
    rows = ranking.to_frame().to_dict(orient="records")
    return {"method": ranking.method, "label": ranking.label(), "systems": rows,
            "extra": dict(ranking.extra)}
