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

__all__ = ["drift_check", "drift_text", "population", "population_text", "utc", "wave_check", "wave_text", "when"]

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


#: how the confirmation wave's test is named in results and the report
WAVE_METHOD = ("exact one-sided binomial test of a confirmation wave against 1/2, curtailed once its flag is settled "
               "(humeval.stats.drift.confirmation_pvalues)")


def wave_check(rows: pd.DataFrame, decided: str, other: str, size: int, alpha: float) -> dict[str, Any]:
    """The confirmation wave of a decision for ``decided`` (a system; ``other`` the other), read from ``rows``: the comparison's valid
    judgements with a ``wave_seq`` (the store counted them in the wave, in that order; ties are none).

    Returns ``side`` (the decided system), ``size`` (w, preregistered), ``n`` (outcomes collected), ``wins`` (for
    the decided side), ``threshold`` (c: the most wins that flag, :func:`humeval.stats.drift.confirmation_threshold`),
    ``p_value`` with ``p_bound`` (``exact`` for a full wave; for a curtailed one the full wave's p is not known:
    ``at most`` when the flag is certain, P(Bin(w, 1/2) <= wins + w - n), ``at least`` when it is impossible,
    P(Bin(w, 1/2) <= wins)), ``flagged``, ``settled`` (False while the wave has fewer than w outcomes and its
    flag is still open), ``first``/``last`` (UTC times) and ``method``.
    """
    from humeval.stats.drift import confirmation_pvalues, confirmation_threshold

    seq = pd.to_numeric(rows["wave_seq"], errors="coerce") if "wave_seq" in rows else pd.Series(dtype=float)
    wave = rows[seq.notna()].assign(_w=seq[seq.notna()]).sort_values("_w", kind="stable")
    from humeval.judgements import winners

    won = winners(wave) if len(wave) else pd.Series(dtype=object)
    decisive = won.isin([decided, other])
    votes = (won[decisive] == decided).to_numpy(dtype=np.int64)[:size]
    n, wins = int(votes.size), int(votes.sum())
    c = int(confirmation_threshold(size, alpha)[0])
    if n >= size:
        flagged, settled, bound, p = wins <= c, True, "exact", float(confirmation_pvalues(wins, size)[0])
    elif n - wins >= size - c:
        flagged, settled, bound, p = True, True, "at most", float(confirmation_pvalues(wins + size - n, size)[0])
    elif wins > c:
        flagged, settled, bound, p = False, True, "at least", float(confirmation_pvalues(wins, size)[0])
    else:
        flagged, settled, bound, p = False, False, "at least", float(confirmation_pvalues(wins, size)[0])
    times = utc(wave["submitted_at"]) if "submitted_at" in wave and len(wave) else pd.Series(dtype="datetime64[ns, UTC]")
    return {"side": decided, "size": size, "n": n, "wins": wins, "threshold": c, "p_value": p, "p_bound": bound,
            "flagged": bool(flagged), "settled": settled, "method": WAVE_METHOD,
            "first": _iso(times.min()) if times.notna().any() else None,
            "last": _iso(times.max()) if times.notna().any() else None}


def wave_text(w: Any) -> str:
    """The confirmation wave in words (no final full stop)."""
    p = f"p {'=' if w.p_bound == 'exact' else '<=' if w.p_bound == 'at most' else '>='} {w.p_value:.2g}"
    when_ = "" if w.first is None else f", collected between {when(w.first)} and {when(w.last)}"
    counted = f"{w.wins} of {w.n} outcomes for {w.side} (w = {w.size}{'' if w.n == w.size else ', curtailed'}{when_})"
    if not w.settled:
        return f"the confirmation wave is not complete: {counted}, {p}; its flag is still open"
    if w.flagged:
        return f"the later crowd prefers the other side: the confirmation wave gave {counted}, {p}"
    return f"the confirmation wave confirmed the decision's side: {counted}, {p}"


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
    that it did not flag (``brief``: only its p), or why it was not computed. ``stopping.drift_check: wave``: the
    confirmation wave's reading, then the halves'."""
    if d.wave is not None:
        d_halves = d.model_copy(update={"wave": None, "check": "halves", "flagged": False})
        halves = drift_text(d_halves, system_a, brief=True) if d.early is not None else ""
        if d.flagged:
            return (f"{wave_text(d.wave)}; the decision is about the crowd that made it, not the later one"
                    + (f" ({halves})" if halves else ""))
        return f"Drift check (wave): {wave_text(d.wave)}" + (f"; {halves}" if halves and not brief else "")
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
