"""Sessions and arrivals: what dynamic stopping costs a crowd in places, money and wall time.

An agent-based simulation of one watched pairwise comparison collected in paid sessions
(participant lists), vectorised over simulated runs (arrays over runs; the loop is over
events, at most two per session). The model, per run:

* **Places.** ``lists`` watched lists of ``watched`` (w) watched tasks each. A place is open
  while the admission rule of the live store wants a session
  (:func:`humeval.stopping.admission.wanted_many`, the same rule as
  :func:`humeval.store.live.admissions`: ``pending + w <= d + allowance`` or nothing pending,
  ``allowance = (W - 1) w + in_flight_bound(n) - 1``), never more than the lists left.
* **Arrivals.** Participants arrive as a Poisson process of rate ``arrivals_per_hour``; one
  who arrives while a place is open starts a session, one who arrives when none is open does
  not enter. Without a rate every open place is taken at once (a crowd larger than needed:
  the most places and unused judgements; wall time is then not predicted).
* **Sessions.** A session lasts ``minutes_per_list`` x L, L lognormal with mean 1 and
  log-sd ``spread`` (default 0.25: half the sessions within about -15 %/+18 % of the mean).
  Its watched tasks are answered at an even pace.
* **Outcomes.** Each watched judgement favours A with probability ``p``, or, from a pilot fit
  (:class:`humeval.simulate.plan.PilotFit`), ``(c d + 1) / 2`` with the participant's
  capability c ~ U(capability) per session and the item's difficulty d per task
  (:func:`humeval.simulate.population.draw_difficulties`; items drawn afresh per task, so
  repeated judgements of one item are not correlated here).
* **Feeding and deciding.** A session's outcomes reach the rule when it ends, in order (the
  participant is settled; exclusion is not simulated: every session is kept). The rule decides
  at the first crossing of ``rule.boundary`` (as :func:`humeval.stopping.base.first_passage`);
  the sessions in progress then are cut: their remaining watched tasks are closed, the
  participant is paid in full.
* **Fixed design.** The same crowd (rate, durations) with all ``lists`` places open at once:
  the wall time is the last session's end.

Per run: places paid (sessions started), judgements paid (places x w), judgements used to the
decision, unused (paid, not fed before the decision: ``unfed`` answered but not fed, ``cut``
closed unanswered), wall time to the decision (hours), the fixed design's wall time, and the
decision (wrong: against the direction of ``p``; any decision is wrong at ``p = 0.5``).
:meth:`CrowdResult.summary` gives means with a normal 95 % interval over runs and the 5/50/95 %
quantiles.
Checked against: hand-computed cases (p = 1, W = 1: the decision after ceil(d0 / w) sessions)
and the scalar admission rule (tests/unit/simulate/test_crowd.py, tests/unit/stopping/test_admission.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from humeval.rng import Seed, as_generator
from humeval.simulate.plan import PilotFit
from humeval.stopping import admission as adm

__all__ = ["CrowdResult", "CrowdRuns", "Quantity", "plan_sessions", "simulate_crowd"]

#: log-sd of a session's duration around its mean (lognormal with mean 1)
DEFAULT_SPREAD = 0.25


@dataclass(frozen=True)
class Quantity:
    """One simulated quantity over runs: mean with a normal 95 % interval, and quantiles."""

    mean: float
    ci_low: float
    ci_high: float
    q05: float
    q50: float
    q95: float
    n: int

    @classmethod
    def of(cls, x: np.ndarray) -> Quantity:
        x = np.asarray(x, dtype=float)
        x = x[~np.isnan(x)]
        if not x.size:
            nan = float("nan")
            return cls(nan, nan, nan, nan, nan, nan, 0)
        m = float(x.mean())
        half = 1.96 * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else 0.0
        q = np.quantile(x, (0.05, 0.5, 0.95))
        return cls(m, m - half, m + half, float(q[0]), float(q[1]), float(q[2]), int(x.size))


@dataclass(frozen=True)
class CrowdRuns:
    """Per-run results (arrays over runs; see the module docstring)."""

    places: np.ndarray
    paid: np.ndarray
    used: np.ndarray
    unfed: np.ndarray
    cut: np.ndarray
    cut_sessions: np.ndarray
    wall: np.ndarray
    fixed_wall: np.ndarray
    outcome: np.ndarray  # 1: A, -1: B, 0: undecided

    @property
    def unused(self) -> np.ndarray:
        return self.paid - self.used


@dataclass(frozen=True)
class CrowdResult:
    """A crowd simulation: its settings, the fixed design, the runs."""

    rule: str
    delta: float
    sessions: int
    lists: int
    watched: int
    minutes_per_list: float
    arrivals_per_hour: float | None
    p: float
    spread: float
    seed: int | None
    runs: CrowdRuns = field(repr=False)
    fit: dict[str, Any] | None = None
    total: int = 0  # watched judgements of the fixed design (lists x w when every list holds w)

    @property
    def fixed_places(self) -> int:
        return self.lists

    @property
    def fixed_judgements(self) -> int:
        return self.total or self.lists * self.watched

    @property
    def decided_share(self) -> float:
        return float(np.mean(self.runs.outcome != 0))

    @property
    def wrong_share(self) -> float:
        truth = 1 if self.p > 0.5 else -1 if self.p < 0.5 else 0
        o = self.runs.outcome
        return float(np.mean((o != 0) & (o != truth)))

    def summary(self) -> dict[str, Quantity]:
        r = self.runs
        timed = self.arrivals_per_hour is not None
        out = {"places": Quantity.of(r.places), "paid": Quantity.of(r.paid), "used": Quantity.of(r.used),
               "unused": Quantity.of(r.unused), "unfed": Quantity.of(r.unfed), "cut": Quantity.of(r.cut),
               "cut_sessions": Quantity.of(r.cut_sessions)}
        if timed:
            out |= {"wall_hours": Quantity.of(r.wall), "fixed_wall_hours": Quantity.of(r.fixed_wall),
                    "wall_ratio": Quantity.of(r.wall / r.fixed_wall)}
        return out

    def signature(self) -> str:
        """The settings that change the numbers, as one line."""
        lam = "none" if self.arrivals_per_hour is None else f"{self.arrivals_per_hour:g}/h"
        what = f"p:{self.p:g}" if self.fit is None else f"fit:mu={self.fit['mu']:.3f},var={self.fit['difficulty_var']:.3g}"
        return (f"crowd|rule:{self.rule}|delta:{self.delta:g}|W:{self.sessions}|lists:{self.lists}|w:{self.watched}"
                f"|min:{self.minutes_per_list:g}|arrivals:{lam}|{what}|spread:{self.spread:g}|runs:{len(self.runs.places)}"
                f"|seed:{self.seed}")

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "delta": self.delta, "sessions": self.sessions, "lists": self.lists,
                "watched": self.watched, "minutes_per_list": self.minutes_per_list,
                "arrivals_per_hour": self.arrivals_per_hour, "p": self.p, "fit": self.fit, "spread": self.spread,
                "seed": self.seed, "runs": len(self.runs.places), "fixed_places": self.fixed_places,
                "fixed_judgements": self.fixed_judgements, "decided_share": self.decided_share,
                "wrong_share": self.wrong_share, "signature": self.signature(),
                "summary": {k: asdict(v) for k, v in self.summary().items()}}


def _outcomes(rng: np.random.Generator, shape: tuple[int, int, int], p: float | None,
              fit: PilotFit | None) -> tuple[np.ndarray, float]:
    """Watched outcomes per run, session slot and task (1: A won), and the mean P(A)."""
    if fit is None:
        if p is None or not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1] (or give a pilot fit), got {p!r}")
        return rng.random(shape) < p, float(p)
    from humeval.simulate.population import draw_difficulties

    lo, hi = fit.capability
    c = rng.uniform(lo, hi, shape[:2] + (1,))
    d = draw_difficulties(rng, float(np.clip(fit.mu, -1, 1)), fit.difficulty_var, shape)
    return rng.random(shape) < (c * d + 1) / 2, float((1 + (lo + hi) / 2 * np.clip(fit.mu, -1, 1)) / 2)


def simulate_crowd(rule: Any, *, lists: int, watched: int | Sequence[int], minutes_per_list: float,
                   arrivals_per_hour: float | None = None, sessions: int = 2, p: float | None = None,
                   fit: PilotFit | None = None, in_flight_share: float = 0.05, min_in_flight: int = 1,
                   horizon: int | None = None, runs: int = 1000, spread: float = DEFAULT_SPREAD,
                   seed: Seed = 0) -> CrowdResult:
    """Simulate ``runs`` crowd collections of one watched comparison (see the module docstring).

    ``rule``: a boundary rule (``humeval.stopping.get_rule(name, delta)``); ``lists``: the watched
    participant lists of the design (the fixed design's places); ``watched``: watched tasks per
    list, one number (w) or one per list in the order the lists are taken (the admission counts a
    session as the largest, as the store does); ``minutes_per_list``: a session's mean duration; ``sessions``: W
    (``stopping.sessions``); ``p`` or ``fit``: the outcome model; ``in_flight_share``,
    ``min_in_flight``, ``horizon``: the protocol's ``stopping`` settings; ``seed``: int or Generator.
    """
    from humeval.protocol.comparisons import Comparison

    per_list = np.full(int(lists), int(watched)) if np.ndim(watched) == 0 else np.asarray(watched, dtype=np.int64)
    if lists < 1 or len(per_list) != lists or per_list.min() < 1:
        raise ValueError(f"a crowd simulation needs lists with at least one watched task each (lists={lists}, "
                         f"watched={watched!r})")
    if minutes_per_list <= 0:
        raise ValueError(f"minutes_per_list must be positive, got {minutes_per_list!r}")
    if arrivals_per_hour is not None and arrivals_per_hour <= 0:
        raise ValueError(f"arrivals_per_hour must be positive, got {arrivals_per_hour!r}")
    if sessions < 1 or runs < 1:
        raise ValueError(f"sessions and runs must be at least 1 (sessions={sessions}, runs={runs})")
    rng = as_generator(seed)
    n_runs, big_p, w = int(runs), int(lists), int(per_list.max())
    total = int(per_list.sum())
    cap = total if horizon is None else min(total, int(horizon))
    a = np.asarray(rule.boundary(cap), dtype=np.int64)
    # the distance as the store sees it: capped at the horizon, else searched far enough that the
    # admission cannot differ (see humeval.stopping.admission.distances)
    a_dist = a if horizon is not None else np.asarray(rule.boundary(total + w), dtype=np.int64)
    comp = Comparison("c", "A", "B", getattr(rule, "name", "rule"), float(getattr(rule, "delta", 0.05)),
                      horizon=horizon, in_flight_share=in_flight_share, min_in_flight=min_in_flight,
                      sessions=sessions)
    allow = np.array([adm.allowance(sessions, w, comp.in_flight_bound(k)) for k in range(total + 1)])

    x, p_mean = _outcomes(rng, (n_runs, big_p, w), p, fit)
    valid = np.arange(w)[None, :] < per_list[:, None]  # (lists, w): the tasks each list holds
    x = x.astype(np.int64) * valid
    hours = minutes_per_list / 60.0
    dur = hours * rng.lognormal(-spread**2 / 2, spread, (n_runs, big_p))
    lam = arrivals_per_hour

    t = np.zeros(n_runs)
    started = np.zeros(n_runs, dtype=np.int64)
    n = np.zeros(n_runs, dtype=np.int64)
    s = np.zeros(n_runs, dtype=np.int64)
    begin = np.full((n_runs, big_p), np.nan)
    end = np.full((n_runs, big_p), np.inf)
    live = np.ones(n_runs, dtype=bool)
    outcome = np.zeros(n_runs, dtype=np.int8)
    used = np.zeros(n_runs, dtype=np.int64)
    unfed = np.zeros(n_runs, dtype=np.int64)
    cut = np.zeros(n_runs, dtype=np.int64)
    cut_sessions = np.zeros(n_runs, dtype=np.int64)

    def start(rows: np.ndarray, at: np.ndarray) -> None:
        k = started[rows]
        begin[rows, k] = at
        end[rows, k] = at + dur[rows, k]
        started[rows] += 1
        t[rows] = at

    def want() -> np.ndarray:
        pending = ((end < np.inf) * per_list).sum(axis=1)
        d = adm.distances(a_dist, n, s)
        k = np.minimum(adm.wanted_many(pending, w, d, allow[np.minimum(n, total)]), big_p - started)
        return np.where(live, k, 0)

    for _ in range(2 * big_p + 2):
        wanted = want()
        idle = live & (wanted == 0) & ~(end < np.inf).any(axis=1)
        used[idle] = n[idle]
        live &= ~idle  # nothing in progress, nothing admitted: the design is used up
        if not live.any():
            break
        arrived = np.zeros(n_runs, dtype=bool)
        if lam is None:  # every open place taken at once
            for j in range(int(wanted.max())):
                rows = np.flatnonzero(wanted > j)
                start(rows, t[rows])
        else:
            t_arr = np.where(wanted > 0, t + rng.exponential(1.0 / lam, n_runs), np.inf)
            arrived = live & (t_arr < end.min(axis=1))
            rows = np.flatnonzero(arrived)
            start(rows, t_arr[rows])
        rows = np.flatnonzero(live & ~arrived)
        if not rows.size:
            continue
        # a session ends: its outcomes are fed in order
        j = end[rows].argmin(axis=1)
        now = end[rows, j]
        t[rows] = now
        end[rows, j] = np.inf
        outs = x[rows, j]
        total_s = s[rows, None] + np.cumsum(outs, axis=1)
        has = valid[j]
        total_n = n[rows, None] + np.cumsum(has, axis=1)
        ok = has & (total_n <= cap)
        a_n = a[np.minimum(total_n, cap) - 1]
        hit_a = ok & (total_s >= a_n)
        hit = hit_a | (ok & (total_s <= total_n - a_n))
        crossed = hit.any(axis=1)
        first = hit.argmax(axis=1)
        at_cap = ~crossed & (total_n[:, -1] >= cap)
        stop = crossed | at_cap
        last = np.where(crossed, first, np.minimum(per_list[j], cap - n[rows]) - 1)  # the last position fed
        k_fed = np.take_along_axis(total_n, last[:, None], axis=1)[:, 0] - n[rows]
        n[rows] += k_fed
        s[rows] = np.take_along_axis(total_s, last[:, None], axis=1)[:, 0]
        done_rows = rows[stop]
        outcome[rows[crossed]] = np.where(hit_a[crossed, first[crossed]], 1, -1)
        used[done_rows] = n[done_rows]
        unfed[done_rows] += per_list[j[stop]] - k_fed[stop]
        if done_rows.size:  # the sessions in progress are cut: answered so far unused, the rest closed
            e, b = end[done_rows], begin[done_rows]
            active = e < np.inf
            frac = np.where(active, np.clip((t[done_rows, None] - b) / np.where(active, e - b, 1.0), 0, 1), 0)
            answered = np.floor(frac * per_list).astype(np.int64)
            unfed[done_rows] += np.where(active, answered, 0).sum(axis=1)
            cut[done_rows] += np.where(active, per_list - answered, 0).sum(axis=1)
            cut_sessions[done_rows] += active.sum(axis=1)
            end[done_rows] = np.inf
            live[done_rows] = False
    if live.any():  # cannot happen: each step starts or ends a session
        raise RuntimeError("crowd simulation: runs still live after every session could start and end")

    # the fixed design with the same crowd: every place open from the start
    fixed_dur = hours * rng.lognormal(-spread**2 / 2, spread, (n_runs, big_p))
    if lam is None:
        fixed_wall = fixed_dur.max(axis=1)
    else:
        arrive = np.cumsum(rng.exponential(1.0 / lam, (n_runs, big_p)), axis=1)
        fixed_wall = (arrive + fixed_dur).max(axis=1)
    nan = np.full(n_runs, np.nan)
    paid = np.concatenate([[0], np.cumsum(per_list)])[started]
    result_runs = CrowdRuns(places=started, paid=paid, used=used, unfed=unfed, cut=cut,
                            cut_sessions=cut_sessions, wall=t if lam is not None else nan,
                            fixed_wall=fixed_wall if lam is not None else nan, outcome=outcome)
    return CrowdResult(rule=str(getattr(rule, "name", type(rule).__name__)), delta=float(getattr(rule, "delta", float("nan"))),
                       sessions=int(sessions), lists=big_p, watched=w, total=total, minutes_per_list=float(minutes_per_list),
                       arrivals_per_hour=None if lam is None else float(lam), p=p_mean, spread=float(spread),
                       seed=seed if isinstance(seed, int) else None, runs=result_runs,
                       fit=None if fit is None else fit.to_dict())


def plan_sessions(rule: Any, *, lists: int, watched: int | Sequence[int], minutes_per_list: float,
                  arrivals_per_hour: float, target: float = 1.25, most: int = 6, **options: Any,
                  ) -> tuple[int, list[CrowdResult]]:
    """W for a crowd: the smallest ``stopping.sessions`` (1..``most``, within ``lists``) whose simulated wall
    time to the decision is at most ``target`` times the fixed design's (the mean of the per-run ratio), with the
    simulations tried; the fastest W tried when none reaches the target. ``options`` go to :func:`simulate_crowd`
    (``p`` or ``fit``, ``runs``, ``seed``, the protocol's settings).

    Each W costs more unused judgements than the one before (docs/budget.md): the smallest W that keeps the
    wall time is the cheapest that does.
    """
    tried: list[CrowdResult] = []
    for w in range(1, min(int(most), int(lists)) + 1):
        r = simulate_crowd(rule, lists=lists, watched=watched, minutes_per_list=minutes_per_list,
                           arrivals_per_hour=arrivals_per_hour, sessions=w, **options)
        tried.append(r)
        if r.summary()["wall_ratio"].mean <= target:
            return w, tried
    best = min(tried, key=lambda r: r.summary()["wall_ratio"].mean)
    return best.sessions, tried
