"""Admitting sessions to a watched comparison: how many paid places the stopping rule can use now.

A crowd platform pays per session (one participant list), not per judgement, and a
participant's judgements reach the rule only when the participant is settled (their whole
session is in, so the preregistered exclusion rules run first). So dynamic stopping saves
money only if it stops *admitting sessions* early, and it keeps its wall time only if it
admits enough of them at once. One rule decides both, here, for the live store, the
simulator and the budget alike.

Notation, per watched comparison: ``n`` outcomes fed so far; ``d`` the **distance** to the
rule's boundary, the fewest further outcomes after which the rule *could* decide (all of them
going one way; :func:`distance`); ``pending`` the outcomes admitted but not yet fed (the
watched tasks of every session in progress, done or not); ``w`` the watched tasks of one
session; ``W`` the protocol's ``stopping.sessions``.

**Rule.** A new session is admitted while the comparison is undecided and

    pending + w <= d + allowance,    allowance = (W - 1) * w + in_flight_bound(n) - 1,

or when nothing is pending (so that collection never stalls).

**What it guarantees.** Each fed outcome lowers ``d`` by at most one and ``pending`` by
exactly one, so ``pending - d`` never grows between admissions, and at the decision (``d =
0``) the outcomes admitted but not used are at most ``max(allowance, w - 1)``
(:func:`unused_bound`), stated before launch. It holds with quitters and pausers: the store
settles an abandoned session (a lease of inactivity, service time) as a finished one, its kept
outcomes fed; the session leaves ``pending`` whole, and the rest of its list counts as a whole
session again when the next participant takes it, which only lowers ``pending - d``
(``tests/integration/server/test_pauses.py``). With ``W = 1`` and the default in-flight share,
the rule admits only sessions that cannot overshoot the boundary, plus the
``ceil(0.05 n) - 1`` of the earlier per-judgement bound; ``W = 2`` (the default) keeps one
more session in progress, which is what keeps the wall time of a crowd arriving at a few
participants per session length close to the fixed design's (``humeval budget`` predicts
places, money and wall time for a setting; :mod:`humeval.simulate.crowd`). A comparison whose rule has no
boundary on counts has ``d = 1`` (nothing is assumed about when it can decide).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["admits", "allowance", "distance", "distance_table", "distances", "unused_bound", "wanted", "wanted_many"]

#: the farthest distance looked for (beyond it the boundary counts as out of reach)
_REACH = 1_000_000


def distance(a_min: Callable[[np.ndarray], np.ndarray], n: int, successes: int, horizon: int | None = None) -> int:
    """Fewest further outcomes after which a boundary rule can decide: the least k >= 1 with
    ``S + k >= a(n + k)`` or ``(n - S) + k >= a(n + k)``; at most ``horizon - n`` (the rule then stops).

    ``a_min(m)`` is the rule's boundary (smallest success count deciding A after m outcomes,
    vectorised). Searched in doubling windows, so the cost is O(d).
    """
    limit = _REACH if horizon is None else max(1, horizon - n)
    lo, width = 1, 64
    while lo <= limit:
        k = np.arange(lo, min(lo + width, limit + 1))
        a = np.asarray(a_min(n + k))
        hit = np.flatnonzero((successes + k >= a) | (n - successes + k >= a))
        if len(hit):
            return int(k[hit[0]])
        lo, width = lo + width, width * 2
    return limit


def distances(boundary: np.ndarray, n: np.ndarray, successes: np.ndarray) -> np.ndarray:
    """:func:`distance` for many states at once, with ``horizon = len(boundary)``.

    ``boundary[m - 1]`` is ``a(m)`` for m = 1..horizon (``rule.boundary(horizon)``); ``n`` and
    ``successes`` are integer arrays of one shape. Element by element equal to
    ``distance(a_min, n, successes, horizon)`` (tests/unit/stopping/test_admission.py checks every
    state up to a size): the least k in 1..max(1, horizon - n) with ``max(S, n - S) + k >= a(n + k)``,
    else ``max(1, horizon - n)``. Searched in doubling windows over the states not yet found.
    """
    a = np.asarray(boundary, dtype=np.int64)
    horizon = len(a)
    n = np.asarray(n, dtype=np.int64)
    lead = np.maximum(np.asarray(successes, dtype=np.int64), n - np.asarray(successes, dtype=np.int64))
    limit = np.maximum(1, horizon - n)
    out: np.ndarray = limit.copy()
    todo = np.flatnonzero((n < horizon).ravel())  # at n >= horizon the answer is 1 = limit
    flat_n, flat_lead, flat_out = n.ravel(), lead.ravel(), out.reshape(-1)
    lo, width = 1, 64
    while todo.size and lo <= horizon:
        k = np.arange(lo, lo + width)
        nn, ll = flat_n[todo], flat_lead[todo]
        m = nn[:, None] + k  # candidate totals n + k
        ok = m <= horizon
        hit = ok & (ll[:, None] + k >= a[np.minimum(m, horizon) - 1])
        found = hit.any(axis=1)
        flat_out[todo[found]] = k[hit[found].argmax(axis=1)]
        todo = todo[~found & (nn + lo + width <= horizon)]
        lo, width = lo + width, width * 2
    return out


def distance_table(boundary: np.ndarray, n_max: int) -> np.ndarray:
    """``table[n, s]`` = :func:`distances` at (n, s) for 0 <= s <= n <= n_max (-1 where s > n)."""
    n, s = np.meshgrid(np.arange(n_max + 1), np.arange(n_max + 1), indexing="ij")
    return np.where(s <= n, distances(boundary, n, np.minimum(s, n)), -1)


def allowance(sessions: int, w: int, in_flight_bound: int) -> int:
    """Outcomes that may be pending beyond the distance: ``(W - 1) * w + in_flight_bound - 1``."""
    return max(0, (sessions - 1) * w + in_flight_bound - 1)


def admits(pending: int, w: int, d: int, allow: int) -> bool:
    """Whether one more session of ``w`` watched tasks may start (see the module docstring): ``pending == 0 or
    pending + w <= d + allow``, which is :func:`wanted` being at least one."""
    return wanted(pending, w, d, allow) > 0


def wanted(pending: int, w: int, d: int, allow: int) -> int:
    """How many sessions of ``w`` watched tasks may start now, one after the other (0 when none)."""
    return int(wanted_many(np.asarray(pending), w, np.asarray(d), np.asarray(allow)))


def wanted_many(pending: np.ndarray, w: int, d: np.ndarray, allow: np.ndarray) -> np.ndarray:
    """:func:`wanted` element by element over arrays (the simulator's form; :func:`wanted` calls it)."""
    pending = np.asarray(pending, dtype=np.int64)
    if w <= 0:
        return np.zeros_like(pending)
    k = np.maximum(0, (np.asarray(d, dtype=np.int64) + allow - pending) // w)
    wanted: np.ndarray = np.where(pending == 0, np.maximum(k, 1), k)
    return wanted


def unused_bound(sessions: int, w: int, in_flight_bound: int) -> int:
    """At most this many admitted outcomes go unused at the decision: ``max(allowance, w - 1)``."""
    return max(allowance(sessions, w, in_flight_bound), w - 1)
