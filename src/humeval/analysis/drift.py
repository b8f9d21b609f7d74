"""Whose preference a decision is about, and whether that crowd changed while it was collected.

A stopping rule's guarantee is about the outcomes it consumed, in the order it consumed them: the
preference of the participants who took part between the first and the last judgement it used, as they
arrived (docs/stopping.md, 'Whose preference'). :func:`population` says who they were (how many, the UTC
times of the first and last judgement used); :func:`drift_check` is the preregistered check
(``stopping.drift_check``) that their preference did not move: the used outcomes, in the rule's order,
split into the first ``floor(n / 2)`` and the rest, compared by the exact split test of a stopped
sequence (:func:`humeval.stats.drift.stopped_split_pvalues`), with each half's share for A and its Wilson
interval (descriptive: the intervals do not account for the stop). A flag qualifies a decision and never
changes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from humeval.stats.proportion import wilson_interval

if TYPE_CHECKING:
    from humeval.results import DriftCheck, Population

__all__ = ["drift_check", "drift_text", "population", "population_text", "utc", "when"]

#: how the check is named in results and the report
METHOD = "exact split test of a stopped sequence (halves in the rule's order; humeval.stats.drift)"


def utc(times: pd.Series) -> pd.Series:
    """``submitted_at`` (ISO 8601 text or a datetime) as UTC timestamps (NaT where missing)."""
    return pd.to_datetime(times, utc=True, errors="coerce", format="ISO8601")


def _iso(ts: pd.Timestamp | None) -> str | None:
    return None if ts is None or pd.isna(ts) else ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def population(used: pd.DataFrame) -> dict[str, Any]:
    """Who the decision is about: the participants whose judgements the rule used, with the times.

    ``participants`` (distinct ``participant_id``), ``judgements`` (rows used), ``first``/``last`` (UTC,
    ISO 8601; None when the rows carry no time).
    """
    times = utc(used["submitted_at"]) if "submitted_at" in used and len(used) else pd.Series(dtype="datetime64[ns, UTC]")
    return {"participants": int(used["participant_id"].nunique()) if len(used) else 0, "judgements": len(used),
            "first": _iso(times.min()) if times.notna().any() else None,
            "last": _iso(times.max()) if times.notna().any() else None}


def _half(votes: np.ndarray, times: Sequence[pd.Timestamp | None]) -> dict[str, Any]:
    s, n = int(votes.sum()), int(votes.size)
    lo, hi = wilson_interval(s, n)
    known = [t for t in times if t is not None and not pd.isna(t)]
    return {"n": n, "wins_a": s, "share": s / n, "ci_low": lo, "ci_high": hi,
            "first": _iso(min(known)) if known else None, "last": _iso(max(known)) if known else None}


def drift_check(outcomes: Sequence[int], n: int, boundary: np.ndarray | None, *, check: str, alpha: float,
                times: Sequence[pd.Timestamp | None] = ()) -> dict[str, Any] | None:
    """The preregistered drift check on the first ``n`` of ``outcomes`` (1: a win of A), in the rule's order.

    ``boundary`` is the rule's :math:`a_t` for t = 1..n (None: the rule has no boundary form, the check is
    undefined); ``times``: each outcome's time (the last of its judgements). Returns None with
    ``check == "none"``; otherwise ``check``, ``method``, ``alpha``, ``early``/``late`` (``n``, ``wins_a``,
    ``share`` for A, its 95% Wilson ``ci_low``/``ci_high``, ``first``/``last`` times), ``p_value``,
    ``flagged`` (p <= alpha) and ``undefined`` (why not computed, else None).
    """
    if check == "none":
        return None
    out: dict[str, Any] = {"check": check, "method": METHOD, "alpha": alpha, "early": None, "late": None,
                           "p_value": None, "flagged": False, "undefined": None}
    if n < 2:
        return out | {"undefined": f"n = {n}: the check needs at least 2 outcomes"}
    if boundary is None:
        return out | {"undefined": "the rule has no boundary form (a_n), which the exact split test needs"}
    from humeval.stats.drift import stopped_split_pvalues

    votes = np.asarray(outcomes[:n], dtype=np.int64)
    m = n // 2
    times = list(times[:n]) if len(times) >= n else [None] * n
    p = float(stopped_split_pvalues(np.asarray(boundary)[:n], n, int(votes.sum()), m, int(votes[:m].sum()),
                                    p0=min(0.99, max(0.01, float(votes.mean()))))[0])
    return out | {"early": _half(votes[:m], times[:m]), "late": _half(votes[m:], times[m:]), "p_value": p,
                  "flagged": p <= alpha}


def when(iso: str | None) -> str:
    """An ISO 8601 UTC time as the report prints it: ``2026-12-02 05:14:53 UTC`` ('unknown time' without one)."""
    return "unknown time" if not iso else iso.replace("T", " ").removesuffix("Z") + " UTC"


def population_text(p: Population) -> str:
    """Whose preference, in words: 'the 12 participants who took part between T1 and T2'."""
    who = f"the {p.participants} participant{'s' if p.participants != 1 else ''}"
    if p.first is None:
        return f"{who} whose {p.judgements} judgements it used (no times recorded)"
    if p.first == p.last:
        return f"{who} who took part at {when(p.first)}"
    return f"{who} who took part between {when(p.first)} and {when(p.last)}"


def drift_text(d: DriftCheck, system_a: str | None, *, brief: bool = False) -> str:
    """The drift check in words (no final full stop): the flag with both halves' shares, intervals and p, or
    that it did not flag (``brief``: only its p), or why it was not computed."""
    if d.undefined or d.early is None or d.late is None:
        return f"Drift check ({d.check}) not computed: {d.undefined}"
    e, late = d.early, d.late
    halves = (f"early {e.share:.2f} [{e.ci_low:.2f}, {e.ci_high:.2f}], late {late.share:.2f} "
              f"[{late.ci_low:.2f}, {late.ci_high:.2f}] (share for {system_a or 'A'}, 95% Wilson intervals; "
              f"{e.n} and {late.n} outcomes), p = {d.p_value:.2g}")
    if d.flagged:
        return (f"the crowd's preference changed during collection: {halves}; the decision is about the "
                "mixture of both")
    if brief:
        return f"Drift check ({d.check}): no change detected between the early and late halves (p = {d.p_value:.2g})"
    return (f"Drift check ({d.check}): no change detected at alpha {d.alpha:g}: {halves}. The check sees only the "
            "judgements the decision used; it cannot see a change that came after them")
