"""Sessions and arrivals: what dynamic stopping costs a crowd in places, money and wall time.

An agent-based simulation of one watched pairwise comparison collected in paid sessions
(participant lists), vectorised over simulated runs (arrays over runs; the loop is over
events, at most two per session, plus one per watched judgement with ``feed="judgement"``; an event
costs O(runs x sessions started), so O(runs x sessions^2) in all, w times more fed per judgement).
The model, per run:

* **Places.** ``lists`` watched lists of ``watched`` (w) watched tasks each. A place is open
  while the admission rule of the live store wants a session
  (:func:`humeval.stopping.admission.wanted_many`, the same rule as
  :func:`humeval.store.live.admissions`: ``pending + w <= d + allowance`` or nothing pending,
  ``allowance = (W - 1) w + in_flight_bound(n) - 1``), never more than the lists left.
* **Arrivals.** Participants arrive as a Poisson process of rate ``arrivals_per_hour``; one
  who arrives while a place is open starts a session, one who arrives when none is open does
  not enter, or with ``patience`` waits that many seconds for a place (first come, first
  served). Without a rate every open place is taken at once (a crowd larger than needed:
  the most places and unused judgements; wall time is then not predicted). With ``crowd``:
  a recorded :class:`~humeval.simulate.arrivals.Crowd`, its participants drawn with
  replacement per run (as many as it holds; ``resample=False``: exactly as logged) arriving
  at their recorded times from the first arrival; or a
  :class:`~humeval.simulate.arrivals.CrowdShape` drawn at ``arrivals_per_hour`` (a launch
  burst, then the stream; :func:`_from_shape`).
* **Sessions.** A session lasts ``minutes_per_list`` x L, L lognormal with mean 1 and
  log-sd ``spread`` (default 0.25: half the sessions within about -15 %/+18 % of the mean).
  With a recorded crowd: the participant's recorded times x the study's seconds per task
  (``minutes_per_list`` x 60 / ``tasks_per_list``) / the crowd's median task time (the ratio
  of medians: the level from the study, the shape from the log). Its watched tasks are
  answered at an even pace.
* **Quitters** (a crowd only): a participant who completed fewer than ``tasks_per_list`` tasks
  quits after them; the store settles them ``lease_seconds`` later, feeds the watched outcomes they
  answered (that share of the list's watched tasks; ``quitters_fed=False``: drops them, as the
  store before abandoned participants were fed) and gives the list to the next participant; a
  quitter is not paid.
* **Pausers.** A participant who pauses past the lease is settled as abandoned a lease after their last answer,
  exactly like a quitter (their answered outcomes fed, their list given to the next participant), but comes back
  for their completion code and is paid. From a recorded crowd (per-task times): one who does not quit and whose
  task (within the list's tasks, at the study's pace) took longer than ``lease_seconds`` pauses there, after the
  tasks before it. Besides, ``pausers``: a share of the others (drawn per participant) pauses once after a number
  of tasks uniform on 1..tasks - 1 (a share declared or seen in a pilot; what ``bench_crowd.py --pausers`` does).
  The list given on counts whole (the store gives its unserved rest), as for quitters.
* **Outcomes.** Each watched judgement favours A with probability ``p``, or, from a pilot fit
  (:class:`humeval.simulate.plan.PilotFit`), ``(c d + 1) / 2`` with the participant's
  capability c ~ U(capability) per session and the item's difficulty d per task
  (:func:`humeval.simulate.population.draw_difficulties`; items drawn afresh per task, so
  repeated judgements of one item are not correlated here).
* **Feeding and deciding.** ``feed="session"`` (``stopping.feed: session``, the default): a session's outcomes
  reach the rule when it ends, in order (the participant is settled; exclusion is not simulated: every session
  is kept). ``feed="judgement"``: the ``practice`` items and the ``qualification`` checks come first in every list
  (q0 tasks), then the watched tasks evenly spread over the rest (the i-th of m after ``q0 + ceil(i (tasks - q0) /
  m)`` tasks, the last one the list's last), each fed when it is submitted at the session's pace: the outcomes of
  concurrent sessions reach the rule in time order (at equal times, the earlier session's first), what a
  session in progress fed is no longer pending for admission (:func:`humeval.store.live.admissions`), so a
  place can open mid-session; a quitter's or pauser's answered outcomes were fed as submitted (those among its
  tasks answered after the qualification), nothing is fed at their settlement. The rule decides at the first
  crossing of ``rule.boundary`` (as :func:`humeval.stopping.base.first_passage`), at a session's end or (feed
  judgement) at one judgement's submit; the sessions in progress then are cut: their remaining watched tasks
  are closed, the participant is paid in full (with feed judgement nothing is answered but unfed: the unused
  are the cut).
* **Fixed design.** The same crowd (rate, durations) with all ``lists`` places open at once:
  the wall time is the last session's end.

Per run: places paid (sessions started, less quitters), judgements paid (places x w), judgements used to the
decision, unused (paid, not fed before the decision: ``unfed`` answered but not fed, ``cut``
closed unanswered), wall time to the decision (hours), the fixed design's wall time, and the
decision (wrong: against the direction of ``p``; any decision is wrong at ``p = 0.5``).
:meth:`CrowdResult.summary` gives means with a normal 95 % interval over runs and the 5/50/95 %
quantiles.
Checked against: hand-computed cases (p = 1, W = 1: the decision after ceil(d0 / w) sessions; feed judgement:
at the d0-th outcome's submit, a place opening mid-session, a quitter's outcomes fed at submit) and the scalar
admission rule (tests/unit/simulate/test_crowd_simulation.py, test_crowd_log.py, test_crowd_feed.py,
tests/unit/stopping/test_admission.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from humeval.errors import HumevalError
from humeval.rng import Seed, as_generator
from humeval.simulate.arrivals import Crowd, CrowdShape, fit_crowd
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
    quits: np.ndarray | None = None  # sessions abandoned before the decision (not paid; their list taken again)
    quit_fed: np.ndarray | None = None  # outcomes of abandoned sessions fed (quitters_fed), in ``used``
    turned_away: np.ndarray | None = None  # arrivals before the end who got no place (drawn arrivals only)
    ran_out: np.ndarray | None = None  # bool: ended undecided with lists left because no one was left to come
    pauses: np.ndarray | None = None  # sessions settled after a pause past the lease before the decision (paid)

    @property
    def unused(self) -> np.ndarray:
        """Judgements paid but not used: a quitter's fed outcomes are used but not paid (they are no part of it)."""
        return self.paid - (self.used if self.quit_fed is None else self.used - self.quit_fed)


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
    #: the crowd's shape (:class:`humeval.simulate.arrivals.CrowdShape` as a dict; a recorded crowd's fitted), or None
    crowd: dict[str, Any] | None = None
    patience: float = 0.0
    quitters_fed: bool = True
    lease_seconds: float = 0.0
    total: int = 0  # watched judgements of the fixed design (lists x w when every list holds w)
    pausers: float = 0.0  # the drawn share of pausers (besides those a recorded crowd's times show)
    feed: str = "session"  # the protocol's stopping.feed: "session" or "judgement"
    qualification: int = 0  # attention checks first in every list (timing the submits with feed judgement)
    practice: int = 0  # practice items before them

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
    def ran_out_share(self) -> float:
        """The share of runs that ended undecided with lists left because the crowd had no one left to come."""
        r = self.runs.ran_out
        return 0.0 if r is None else float(np.mean(r))

    @property
    def fixed_incomplete_share(self) -> float:
        """The share of runs in which the fixed design's collection did not complete (the crowd ran out first)."""
        if self.arrivals_per_hour is None and self.crowd is None:
            return 0.0
        return float(np.mean(np.isnan(self.runs.fixed_wall)))

    @property
    def wrong_share(self) -> float:
        truth = 1 if self.p > 0.5 else -1 if self.p < 0.5 else 0
        o = self.runs.outcome
        return float(np.mean((o != 0) & (o != truth)))

    def summary(self) -> dict[str, Quantity]:
        r = self.runs
        timed = self.arrivals_per_hour is not None or self.crowd is not None
        out = {"places": Quantity.of(r.places), "paid": Quantity.of(r.paid), "used": Quantity.of(r.used),
               "unused": Quantity.of(r.unused), "unfed": Quantity.of(r.unfed), "cut": Quantity.of(r.cut),
               "cut_sessions": Quantity.of(r.cut_sessions)}
        if r.quits is not None and r.quit_fed is not None:  # (set together: a crowd with quitters)
            out |= {"quits": Quantity.of(r.quits), "quit_fed": Quantity.of(r.quit_fed)}
        if r.turned_away is not None:
            out["turned_away"] = Quantity.of(r.turned_away)
        if r.pauses is not None:
            out["pauses"] = Quantity.of(r.pauses)
        if timed:
            out |= {"wall_hours": Quantity.of(r.wall), "fixed_wall_hours": Quantity.of(r.fixed_wall),
                    "wall_ratio": Quantity.of(r.wall / r.fixed_wall)}
        return out

    def signature(self) -> str:
        """The settings that change the numbers, as one line."""
        lam = "none" if self.arrivals_per_hour is None else f"{self.arrivals_per_hour:g}/h"
        what = f"p:{self.p:g}" if self.fit is None else f"fit:mu={self.fit['mu']:.3f},var={self.fit['difficulty_var']:.3g}"
        who = "" if self.crowd is None else f"|crowd:{self.crowd['source']}"
        spread = f"|spread:{self.spread:g}" if self.crowd is None else ""
        extra = ((f"|patience:{self.patience:g}s" if self.patience else "") + ("" if self.quitters_fed else "|quitters:dropped")
                 + (f"|lease:{self.lease_seconds:g}s" if self.lease_seconds else "")
                 + (f"|pausers:{self.pausers:g}" if self.pausers else "")
                 + (f"|feed:judgement|qualification:{self.qualification}" if self.feed == "judgement" else "")
                 + (f"|practice:{self.practice}" if self.feed == "judgement" and self.practice else ""))
        arrivals = "" if self.crowd is not None and self.arrivals_per_hour is None else f"|arrivals:{lam}"
        return (f"crowd|rule:{self.rule}|delta:{self.delta:g}|W:{self.sessions}|lists:{self.lists}|w:{self.watched}"
                f"|min:{self.minutes_per_list:g}{arrivals}{who}|{what}{spread}{extra}"
                f"|runs:{len(self.runs.places)}|seed:{self.seed}")

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "delta": self.delta, "sessions": self.sessions, "lists": self.lists,
                "watched": self.watched, "minutes_per_list": self.minutes_per_list,
                "arrivals_per_hour": self.arrivals_per_hour, "crowd": self.crowd, "patience": self.patience,
                "quitters_fed": self.quitters_fed, "lease_seconds": self.lease_seconds, "pausers": self.pausers, "feed": self.feed,
                "qualification": self.qualification, "practice": self.practice, "p": self.p, "fit": self.fit, "spread": self.spread,
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


@dataclass(frozen=True)
class _Arrivals:
    """Per run, the arrivals of a crowd in order: time (hours, inf after the last), a full session's hours, and
    for one who quits, the hours until the store settles them (quit time + lease) and their watched kept share."""

    at: np.ndarray  # (runs, M)
    hours: np.ndarray  # (runs, M)
    quits: np.ndarray  # (runs, M) bool
    quit_hours: np.ndarray  # (runs, M)
    kept_share: np.ndarray  # (runs, M): tasks completed / tasks per list (quitters)
    paused: np.ndarray | None = None  # (runs, M) bool: a pauser (settled like a quitter, but paid)


def _with_pausers(rng: np.random.Generator, arr: _Arrivals, share: float, tasks: int, lease_hours: float) -> _Arrivals:
    """``share`` of the participants who neither quit nor already pause pause once past the lease, after
    1 + floor(U x (tasks - 1)) tasks (uniform on 1..tasks - 1; an even pace): settled a lease later, paid."""
    paused = np.zeros(arr.at.shape, dtype=bool) if arr.paused is None else arr.paused
    if share <= 0 or tasks < 2:
        return arr if arr.paused is not None else _Arrivals(arr.at, arr.hours, arr.quits, arr.quit_hours,
                                                            arr.kept_share, paused)
    new = (rng.random(arr.at.shape) < share) & ~arr.quits
    k = 1 + np.floor(rng.random(arr.at.shape) * (tasks - 1))
    hours = np.nan_to_num(arr.hours, nan=0.0)
    return _Arrivals(at=arr.at, hours=arr.hours, quits=arr.quits | new,
                     quit_hours=np.where(new, hours * k / tasks + lease_hours, arr.quit_hours),
                     kept_share=np.where(new, k / tasks, arr.kept_share), paused=paused | new)


def _from_crowd(rng: np.random.Generator, crowd: Crowd, n_runs: int, tasks: int, minutes: float,
                lease_hours: float, resample: bool = True) -> _Arrivals:
    """Participants of a recorded crowd, resampled with replacement per run (or, ``resample=False``, exactly as
    logged: a replay), arriving at their recorded times (relative to the first arrival), paced at their recorded
    pace scaled by the ratio of medians."""
    n = crowd.participants
    idx = rng.integers(0, n, (n_runs, n)) if resample else np.broadcast_to(np.arange(n), (n_runs, n))
    idx = np.take_along_axis(idx, np.argsort(crowd.arrived[idx], axis=1, kind="stable"), axis=1)
    done = crowd.done(tasks)
    spent = crowd.time_for(tasks)
    if crowd.seconds_per_task is not None:  # the study's seconds per task over the crowd's median task
        scale = minutes * 60 / tasks / crowd.median_task_seconds()
    else:  # the study's session over the crowd's median (whole) session
        scale = minutes * 60 / float(np.median(spent[done >= tasks] if (done >= tasks).any() else spent))
    quits = done < tasks
    hours = spent * scale / 3600
    quit_hours, kept = hours + lease_hours, done / tasks
    paused = np.zeros(n, dtype=bool)
    if crowd.seconds_per_task is not None and lease_hours > 0:  # a task longer than the lease: a pause past it
        per = crowd.seconds_per_task[:, :tasks] * scale / 3600
        long = np.nan_to_num(per, nan=0.0) > lease_hours
        paused = ~quits & long.any(axis=1)
        at_task = long.argmax(axis=1)  # the tasks answered before the pause
        before = np.where(np.arange(per.shape[1])[None, :] < at_task[:, None], np.nan_to_num(per, nan=0.0), 0.0)
        quit_hours = np.where(paused, before.sum(axis=1) + lease_hours, quit_hours)
        kept = np.where(paused, at_task / tasks, kept)
    gone = quits | paused
    return _Arrivals(at=crowd.arrived[idx] / 3600, hours=np.where(quits, np.nan, hours)[idx], quits=gone[idx],
                     quit_hours=quit_hours[idx], kept_share=kept[idx], paused=paused[idx])


def _from_shape(rng: np.random.Generator, shape: CrowdShape, n_runs: int, lam: float, lists: int, tasks: int,
                minutes: float, lease_hours: float) -> _Arrivals:
    """A crowd drawn from a shape at the study's rate: a launch burst of Poisson(lam x burst_hours) arrivals at
    exponential times of mean burst_seconds, a Poisson stream at ``lam``; sessions lognormal with median
    pace_ratio x ``minutes`` and log-sd pace_sd; a share quit_share quits after 1 + floor(E) tasks (E exponential
    with mean quit_done_share x tasks - 1, at most tasks - 1)."""
    hours = minutes / 60
    burst = rng.poisson(lam * shape.burst_hours, n_runs)
    m_burst = int(burst.max()) if n_runs else 0
    m_stream = int(4 * lists + math.ceil(lam * 2 * lists * hours * max(shape.pace_ratio, 1.0)) + 20)
    b = rng.exponential(shape.burst_seconds / 3600, (n_runs, m_burst))
    b[np.arange(m_burst)[None, :] >= burst[:, None]] = np.inf
    stream = np.cumsum(rng.exponential(1.0 / lam, (n_runs, m_stream)), axis=1)
    at = np.sort(np.concatenate([b, stream], axis=1), axis=1)
    m = at.shape[1]
    dur = hours * shape.pace_ratio * rng.lognormal(0.0, shape.pace_sd, (n_runs, m))
    quits = rng.random((n_runs, m)) < shape.quit_share if tasks > 1 else np.zeros((n_runs, m), dtype=bool)
    k = np.minimum(1 + np.floor(rng.exponential(max(shape.quit_done_share * tasks - 1, 1e-9), (n_runs, m))), tasks - 1)
    share = np.where(quits, k / tasks, 1.0)
    return _Arrivals(at=at, hours=np.where(quits, np.nan, dur), quits=quits, quit_hours=dur * share + lease_hours,
                     kept_share=share)


def _poisson(rng: np.random.Generator, n_runs: int, lam: float, lists: int, hours: float, spread: float) -> _Arrivals:
    """The Poisson stream of ``lam`` as drawn arrivals (for a waitlist): sessions lognormal with mean ``hours``."""
    m = int(4 * lists + math.ceil(lam * 2 * lists * hours) + 20)
    at = np.cumsum(rng.exponential(1.0 / lam, (n_runs, m)), axis=1)
    dur = hours * rng.lognormal(-spread**2 / 2, spread, (n_runs, m))
    no = np.zeros((n_runs, m), dtype=bool)
    return _Arrivals(at=at, hours=dur, quits=no, quit_hours=dur, kept_share=np.ones((n_runs, m)))


def _fixed_with(arr: _Arrivals, lists: int) -> np.ndarray:
    """The fixed design's wall time with these arrivals: every list open from the start, an arrival takes a free
    list, a quitter's list is free again when they are settled; the last list's end (inf when the crowd ran out).
    The loop is over arrivals (events), vectorised over runs."""
    n_runs, m = arr.at.shape
    holder_end = np.full((n_runs, lists), -np.inf)  # -inf: free, never taken
    holder_quit = np.zeros((n_runs, lists), dtype=bool)
    done_at = np.full((n_runs, lists), np.inf)
    rows = np.arange(n_runs)
    for j in range(m):
        a = arr.at[:, j]
        back = holder_quit & (holder_end <= a[:, None])  # quitters settled: their list is free again
        holder_end[back], holder_quit[back] = -np.inf, False
        free = (holder_end == -np.inf) & (done_at == np.inf)
        take = free.any(axis=1) & np.isfinite(a)
        if not take.any():
            continue
        k = free.argmax(axis=1)
        r, k = rows[take], k[take]
        q = arr.quits[r, j]
        end = a[r] + np.where(q, arr.quit_hours[r, j], arr.hours[r, j])
        holder_end[r, k], holder_quit[r, k] = end, q
        done_at[r[~q], k[~q]] = end[~q]
    return done_at.max(axis=1)


def simulate_crowd(rule: Any, *, lists: int, watched: int | Sequence[int], minutes_per_list: float,
                   arrivals_per_hour: float | None = None, sessions: int = 2, p: float | None = None,
                   fit: PilotFit | None = None, in_flight_share: float = 0.05, min_in_flight: int = 1,
                   horizon: int | None = None, runs: int = 1000, spread: float = DEFAULT_SPREAD,
                   crowd: Crowd | CrowdShape | None = None, tasks_per_list: int | None = None,
                   patience: float = 0.0, quitters_fed: bool = True, lease_seconds: float = 0.0,
                   resample: bool = True, pausers: float = 0.0, feed: str = "session", qualification: int = 0,
                   practice: int = 0, seed: Seed = 0) -> CrowdResult:
    """Simulate ``runs`` crowd collections of one watched comparison (see the module docstring).

    ``rule``: a boundary rule (``humeval.stopping.get_rule(name, delta)``); ``lists``: the watched
    participant lists of the design (the fixed design's places); ``watched``: watched tasks per
    list, one number (w) or one per list in the order the lists are taken (the admission counts a
    session as the largest, as the store does); ``minutes_per_list``: a session's mean duration; ``sessions``: W
    (``stopping.sessions``); ``p`` or ``fit``: the outcome model; ``in_flight_share``,
    ``min_in_flight``, ``horizon``: the protocol's ``stopping`` settings; ``seed``: int or Generator.
    ``crowd``: a recorded :class:`~humeval.simulate.arrivals.Crowd` (arrivals and paces from the log, no rate
    needed) or a :class:`~humeval.simulate.arrivals.CrowdShape` (drawn at ``arrivals_per_hour``);
    ``tasks_per_list``: the tasks of a list (default the most watched), against which quitting is counted;
    ``patience``: seconds an arrival who finds no open place waits for one (0: lost, the store today);
    ``quitters_fed``: whether a quitter's answered outcomes are fed when they are settled (True, as the live store
    does: an abandoned participant's kept outcomes are fed; False: dropped); ``lease_seconds``: how long after quitting the store settles a quitter;
    ``resample=False``: a recorded crowd's participants exactly as logged in every run (a replay of the log; only
    the outcomes are random); ``pausers``: the share of the participants who do not quit that pause once past the
    lease (besides those a recorded crowd's times show; needs drawn arrivals and ``lease_seconds``); ``feed``: the
    protocol's ``stopping.feed``, ``"session"`` (outcomes fed when the session ends) or ``"judgement"`` (each watched
    outcome fed when it is submitted, after the qualification); ``qualification``: ``design.qualification``, the
    attention checks first in every list (at least 1 with ``feed="judgement"``, as ``validate`` requires), after the
    ``practice`` items (``design.practice``); the default ``tasks_per_list`` is then ``practice + qualification`` + the
    most watched.
    """
    from humeval.protocol.comparisons import Comparison

    watched_ = np.asarray(watched, dtype=np.int64)
    per_list = np.full(int(lists), watched_) if watched_.ndim == 0 else watched_
    if lists < 1 or len(per_list) != lists or per_list.min() < 1:
        raise ValueError(f"a crowd simulation needs lists with at least one watched task each (lists={lists}, "
                         f"watched={watched!r})")
    if minutes_per_list <= 0:
        raise ValueError(f"minutes_per_list must be positive, got {minutes_per_list!r}")
    if arrivals_per_hour is not None and arrivals_per_hour <= 0:
        raise ValueError(f"arrivals_per_hour must be positive, got {arrivals_per_hour!r}")
    if sessions < 1 or runs < 1:
        raise ValueError(f"sessions and runs must be at least 1 (sessions={sessions}, runs={runs})")
    if not (math.isfinite(patience) and patience >= 0) or not (math.isfinite(lease_seconds) and lease_seconds >= 0):
        raise ValueError(f"patience and lease_seconds are seconds >= 0, got {patience!r} and {lease_seconds!r}")
    if not (math.isfinite(pausers) and 0 <= pausers <= 1):
        raise ValueError(f"pausers is a share in [0, 1], got {pausers!r}")
    if pausers > 0 and crowd is None and arrivals_per_hour is None:
        raise ValueError("pausers need arrivals (a pause is timed against the lease): give arrivals_per_hour or a crowd")
    if isinstance(crowd, CrowdShape) and arrivals_per_hour is None:
        raise ValueError("a crowd shape is drawn at a rate: give arrivals_per_hour (or a recorded crowd)")
    n_runs, big_p, w = int(runs), int(lists), int(per_list.max())
    q0 = int(practice) + int(qualification)  # the tasks before the first watched one
    tasks = int(tasks_per_list or q0 + w)
    per_judgement = _check_feed(feed, int(qualification), int(practice), tasks, w, quitters_fed)
    rng = as_generator(seed)
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
    hours = minutes_per_list / 60.0
    lam = arrivals_per_hour
    # drawn arrivals (a crowd, or a Poisson stream with a waitlist); None: the Poisson stream drawn as it goes
    lease_h = lease_seconds / 3600
    if crowd is None and patience == 0 and pausers == 0:
        arr = None
        n_slots = big_p
        x, p_mean = _outcomes(rng, (n_runs, big_p, w), p, fit)
        dur = hours * rng.lognormal(-spread**2 / 2, spread, (n_runs, big_p))
    else:
        if isinstance(crowd, Crowd):
            arr = _from_crowd(rng, crowd, n_runs, tasks, minutes_per_list, lease_h, resample)
        elif isinstance(crowd, CrowdShape) and lam is not None:  # (a shape without a rate was refused above)
            arr = _from_shape(rng, crowd, n_runs, float(lam), big_p, tasks, minutes_per_list, lease_h)
        elif lam is not None:
            arr = _poisson(rng, n_runs, float(lam), big_p, hours, spread)
        else:
            raise ValueError("patience needs arrivals: give arrivals_per_hour or a crowd")
        arr = _with_pausers(rng, arr, float(pausers), tasks, lease_h)
        n_slots = arr.at.shape[1]
        x, p_mean = _outcomes(rng, (n_runs, n_slots, w), p, fit)
    timed = lam is not None or arr is not None

    t = np.zeros(n_runs)
    started = np.zeros(n_runs, dtype=np.int64)  # session slots started (quitters included)
    next_list = np.zeros(n_runs, dtype=np.int64)  # the first list never taken
    freed = np.zeros((n_runs, big_p), dtype=np.int64)  # the lists quitters gave back (a stack per run)
    n_freed = np.zeros(n_runs, dtype=np.int64)
    slot_list = np.zeros((n_runs, n_slots), dtype=np.int64)
    slot_feed = np.zeros((n_runs, n_slots), dtype=np.int64)  # watched outcomes fed when the slot ends
    slot_quit = np.zeros((n_runs, n_slots), dtype=bool)  # settled as abandoned (a quitter or a pauser)
    slot_paused = np.zeros((n_runs, n_slots), dtype=bool)  # a pauser: settled like a quitter, paid
    quit_ended = np.zeros((n_runs, n_slots), dtype=bool)
    # feed judgement: per slot the outcomes fed so far, hours per task, and the next submit time (inf: none left)
    slot_fed = np.zeros((n_runs, n_slots), dtype=np.int64)
    slot_pace = np.zeros((n_runs, n_slots))
    next_sub = np.full((n_runs, n_slots), np.inf)
    n = np.zeros(n_runs, dtype=np.int64)
    s = np.zeros(n_runs, dtype=np.int64)
    begin = np.full((n_runs, n_slots), np.nan)
    end = np.full((n_runs, n_slots), np.inf)
    live = np.ones(n_runs, dtype=bool)
    outcome = np.zeros(n_runs, dtype=np.int8)
    used = np.zeros(n_runs, dtype=np.int64)
    unfed = np.zeros(n_runs, dtype=np.int64)
    cut = np.zeros(n_runs, dtype=np.int64)
    cut_sessions = np.zeros(n_runs, dtype=np.int64)
    quit_fed = np.zeros(n_runs, dtype=np.int64)
    ran_out = np.zeros(n_runs, dtype=bool)
    ptr = np.zeros(n_runs, dtype=np.int64)  # the next arrival (drawn arrivals)
    qhead = np.zeros(n_runs, dtype=np.int64)  # the first arrival still waiting (queue: qhead .. ptr - 1)
    ridx = np.arange(n_runs)

    def start(rows: np.ndarray, at: np.ndarray, who: np.ndarray | None = None) -> None:
        k = started[rows]
        reuse = n_freed[rows] > 0  # a list a quitter gave back is taken first
        lst = np.where(reuse, freed[rows, np.maximum(n_freed[rows] - 1, 0)], next_list[rows])
        n_freed[rows] -= reuse
        next_list[rows] += ~reuse
        slot_list[rows, k] = lst
        begin[rows, k] = at
        if who is None:
            end[rows, k] = at + dur[rows, k]
            slot_feed[rows, k] = per_list[lst]
            slot_pace[rows, k] = dur[rows, k] / tasks
        else:
            assert arr is not None  # a slot is given to someone (``who``) only from drawn arrivals
            q = arr.quits[rows, who]
            end[rows, k] = at + np.where(q, arr.quit_hours[rows, who], arr.hours[rows, who])
            slot_quit[rows, k] = q
            if arr.paused is not None:
                slot_paused[rows, k] = arr.paused[rows, who]
            done = arr.kept_share[rows, who] * tasks  # the tasks a quitter (or pauser) answered
            if per_judgement:  # the watched tasks among them: those after the qualification, evenly spread
                kept = np.clip(np.floor((done - q0) * per_list[lst] / (tasks - q0) + 1e-9), 0, None).astype(np.int64)
                slot_pace[rows, k] = np.where(q, (arr.quit_hours[rows, who] - lease_h) / np.maximum(done, 1e-9),
                                              arr.hours[rows, who] / tasks)
            else:
                kept = np.floor(arr.kept_share[rows, who] * per_list[lst] + 1e-9).astype(np.int64)
            slot_feed[rows, k] = np.where(q, kept if quitters_fed else 0, per_list[lst])
        started[rows] += 1
        t[rows] = at
        if per_judgement:
            schedule(rows, k)

    def schedule(rows: np.ndarray, k: np.ndarray) -> None:
        """Feed judgement: the submit time of slot k's next watched task, the i-th (1-based) of a list of m after
        q0 + ceil(i (tasks - q0) / m) tasks at the session's pace (not after its end); inf when none is left."""
        i, m = slot_fed[rows, k] + 1, per_list[slot_list[rows, k]]
        at = begin[rows, k] + slot_pace[rows, k] * (q0 - (-i * (tasks - q0) // m))
        next_sub[rows, k] = np.where(i <= slot_feed[rows, k], np.minimum(at, end[rows, k]), np.inf)

    def want() -> np.ndarray:
        active = end < np.inf
        # feed judgement: what a session in progress has fed is no longer pending (the store's admissions)
        pending = np.where(active, per_list[slot_list] - slot_fed, 0).sum(axis=1)
        d = adm.distances(a_dist, n, s)
        k = np.minimum(adm.wanted_many(pending, w, d, allow[np.minimum(n, total)]), big_p - next_list + n_freed)
        return np.where(live, k, 0)

    def feed_in_order(rows: np.ndarray, outs: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Feed each row's first ``count`` outcomes of ``outs`` (rows x positions) in order, up to the rule's first
        crossing or the cap (n, s, the outcome and ``used`` updated); where the rule stopped and how many were fed."""
        has = np.arange(outs.shape[1])[None, :] < count[:, None]
        total_s = s[rows, None] + np.cumsum(outs * has, axis=1)
        total_n = n[rows, None] + np.cumsum(has, axis=1)
        ok = has & (total_n <= cap)
        a_n = a[np.minimum(total_n, cap) - 1]
        hit_a = ok & (total_s >= a_n)
        hit = hit_a | (ok & (total_s <= total_n - a_n))
        crossed = hit.any(axis=1)
        first = hit.argmax(axis=1)
        stop = crossed | (total_n[:, -1] >= cap)
        last = np.where(crossed, first, np.minimum(count, cap - n[rows]) - 1)  # the last position fed
        k_fed = np.where(last >= 0, np.take_along_axis(total_n, np.maximum(last, 0)[:, None], axis=1)[:, 0] - n[rows], 0)
        s[rows] = np.where(last >= 0, np.take_along_axis(total_s, np.maximum(last, 0)[:, None], axis=1)[:, 0], s[rows])
        n[rows] += k_fed
        outcome[rows[crossed]] = np.where(hit_a[crossed, first[crossed]], 1, -1)
        used[rows[stop]] = n[rows[stop]]
        return stop, k_fed

    def decide(rows: np.ndarray) -> None:
        """The rule stopped at ``t``: the sessions in progress are cut, the participant paid in full; the watched
        tasks answered so far are unused (fed at submit with feed judgement, so used), the rest closed."""
        if not rows.size:
            return
        e, b = end[rows], begin[rows]
        active = e < np.inf
        lists_of = per_list[slot_list[rows]]
        if per_judgement:
            answered = slot_fed[rows]
            cut_sessions[rows] += (active & (answered < lists_of)).sum(axis=1)
        else:
            frac = np.where(active, np.clip((t[rows, None] - b) / np.where(active, e - b, 1.0), 0, 1), 0)
            answered = np.floor(frac * lists_of).astype(np.int64)
            unfed[rows] += np.where(active, answered, 0).sum(axis=1)
            cut_sessions[rows] += active.sum(axis=1)
        cut[rows] += np.where(active, lists_of - answered, 0).sum(axis=1)
        end[rows] = np.inf
        live[rows] = False

    def settle(rows: np.ndarray) -> None:
        """A session ends (the participant settled): with feed session its outcomes are fed in order (a quitter's:
        none, or those answered with quitters_fed); with feed judgement they were fed as submitted."""
        if not rows.size:
            return
        j = end[rows].argmin(axis=1)
        t[rows] = end[rows, j]
        end[rows, j] = np.inf
        q = slot_quit[rows, j]
        lst = slot_list[rows, j]
        if q.any():  # the quitter's list is free again
            qr = rows[q]
            freed[qr, n_freed[qr]] = lst[q]
            n_freed[qr] += 1
            quit_ended[qr, j[q]] = True
        feed = slot_feed[rows, j]
        paused_j = slot_paused[rows, j]
        cut[rows] += np.where(paused_j, per_list[lst] - feed, 0)  # a pauser's unanswered rest: paid, closed for them
        if per_judgement:
            quit_fed[rows] += np.where(q & ~paused_j, slot_fed[rows, j], 0)
            return
        stop, k_fed = feed_in_order(rows, x[rows, j], feed)
        quit_fed[rows] += np.where(q & ~paused_j, k_fed, 0)  # a pauser's are paid: not counted here
        # fed outcomes beyond the decision: unused (a quitter's are not paid: no part of it)
        rest = np.where(q, np.where(paused_j, feed - k_fed, 0), per_list[lst] - k_fed)
        unfed[rows[stop]] += rest[stop]
        decide(rows[stop])

    def submit(rows: np.ndarray) -> None:
        """Feed judgement: each row's next watched submit is fed at once; the rule can stop at it."""
        if not rows.size:
            return
        j = next_sub[rows].argmin(axis=1)
        t[rows] = next_sub[rows, j]
        outs = x[rows, j, slot_fed[rows, j]][:, None]
        stop, _ = feed_in_order(rows, outs, np.ones(rows.size, dtype=np.int64))
        slot_fed[rows, j] += 1
        schedule(rows, j)
        decide(rows[stop])

    def next_event() -> np.ndarray:
        """Per run, the time of the next session end (or, feed judgement, watched submit, if sooner)."""
        e = end.min(axis=1)
        return np.minimum(e, next_sub.min(axis=1)) if per_judgement else e

    steps = (2 * n_slots + 2 if arr is None else 3 * n_slots + 2) + (w * n_slots if per_judgement else 0)
    for _ in range(steps):
        wanted = want()
        active_any = (end < np.inf).any(axis=1)
        if arr is None:
            idle = live & (wanted == 0) & ~active_any
        else:
            if patience > 0:  # the waiting who gave up
                qhead = np.minimum(np.maximum(qhead, (arr.at < (t - patience / 3600)[:, None]).sum(axis=1)), ptr)
            waiting = qhead < ptr
            nxt = np.where(ptr < n_slots, arr.at[ridx, np.minimum(ptr, n_slots - 1)], np.inf)
            idle = live & ~active_any & ((wanted == 0) | (np.isinf(nxt) & ~waiting))
            ran_out |= idle & (wanted > 0)
        used[idle] = n[idle]
        live &= ~idle  # nothing in progress, nothing admitted (or no one left to come): the design is used up
        if not live.any():
            break
        arrived = np.zeros(n_runs, dtype=bool)
        if arr is None:
            if lam is None:  # every open place taken at once
                for j in range(int(wanted.max())):
                    rows = np.flatnonzero(wanted > j)
                    start(rows, t[rows])
            else:
                t_arr = np.where(wanted > 0, t + rng.exponential(1.0 / lam, n_runs), np.inf)
                arrived = live & (t_arr < next_event())
                rows = np.flatnonzero(arrived)
                start(rows, t_arr[rows])
        else:
            e_min = next_event()
            from_q = live & (wanted > 0) & waiting
            rows = np.flatnonzero(from_q)
            start(rows, t[rows], qhead[rows])
            qhead[rows] += 1
            from_a = live & (wanted > 0) & ~waiting & (nxt < e_min)
            rows = np.flatnonzero(from_a)
            start(rows, nxt[rows], ptr[rows])
            ptr[rows] += 1
            qhead[rows] = ptr[rows]
            arrived = from_q | from_a
            # no place until the next end: those arriving meanwhile wait (patience) or are lost
            closed = live & ~arrived & (wanted == 0)
            rows = np.flatnonzero(closed)
            ptr[rows] = np.maximum(ptr[rows], (arr.at[rows] < e_min[rows, None]).sum(axis=1))
            if patience == 0:
                qhead[rows] = ptr[rows]
        rows = np.flatnonzero(live & ~arrived)
        if not rows.size:
            continue
        if per_judgement:  # the next event: a watched submit (fed at once), else a session's end (nothing to feed)
            sub = next_sub[rows].min(axis=1) <= end[rows].min(axis=1)
            submit(rows[sub])
            settle(rows[~sub])
        else:
            settle(rows)
    if live.any():  # cannot happen: each step starts or ends a session
        raise RuntimeError("crowd simulation: runs still live after every session could start and end")

    # the fixed design with the same crowd: every place open from the start
    if arr is not None:
        fixed_wall = _fixed_with(arr, big_p)
        fixed_wall = np.where(np.isfinite(fixed_wall), fixed_wall, np.nan)  # the crowd ran out first
    else:
        fixed_dur = hours * rng.lognormal(-spread**2 / 2, spread, (n_runs, big_p))
        if lam is None:
            fixed_wall = fixed_dur.max(axis=1)
        else:
            arrive = np.cumsum(rng.exponential(1.0 / lam, (n_runs, big_p)), axis=1)
            fixed_wall = (arrive + fixed_dur).max(axis=1)
    nan = np.full(n_runs, np.nan)
    taken = np.arange(n_slots)[None, :] < started[:, None]
    paid_slot = taken & ~(quit_ended & ~slot_paused)  # a pauser is paid, a quitter is not
    paid = np.where(paid_slot, per_list[slot_list], 0).sum(axis=1)
    turned = nan if arr is None else (arr.at < t[:, None]).sum(axis=1) - started
    result_runs = CrowdRuns(places=paid_slot.sum(axis=1), paid=paid, used=used, unfed=unfed, cut=cut,
                            cut_sessions=cut_sessions, wall=t if timed else nan,
                            fixed_wall=fixed_wall if timed else nan, outcome=outcome,
                            quits=(quit_ended & ~slot_paused).sum(axis=1), quit_fed=quit_fed, turned_away=turned,
                            pauses=None if arr is None else (quit_ended & slot_paused).sum(axis=1),
                            ran_out=None if arr is None else ran_out)
    return CrowdResult(rule=str(getattr(rule, "name", type(rule).__name__)), delta=float(getattr(rule, "delta", float("nan"))),
                       sessions=int(sessions), lists=big_p, watched=w, total=total, minutes_per_list=float(minutes_per_list),
                       arrivals_per_hour=None if lam is None else float(lam), p=p_mean, spread=float(spread),
                       seed=seed if isinstance(seed, int) else None, runs=result_runs,
                       fit=None if fit is None else fit.to_dict(),
                       crowd=None if crowd is None else _crowd_label(crowd, tasks), patience=float(patience),
                       quitters_fed=bool(quitters_fed), lease_seconds=float(lease_seconds) if arr is not None else 0.0,
                       pausers=float(pausers), feed=feed, qualification=int(qualification), practice=int(practice))


def _check_feed(feed: str, qualification: int, practice: int, tasks: int, w: int, quitters_fed: bool) -> bool:
    """Whether outcomes are fed per judgement (``feed="judgement"``); refuses what the protocol's validation refuses
    (:func:`humeval.protocol.feed.feed_problems`) and what cannot hold."""
    if feed not in ("session", "judgement"):
        raise HumevalError(f"feed is 'session' or 'judgement' (stopping.feed), got {feed!r}")
    if qualification < 0 or practice < 0:
        raise HumevalError(f"qualification and practice count tasks (>= 0), got {qualification!r} and {practice!r}")
    if feed == "session":
        return False
    if qualification == 0:
        raise HumevalError("feed='judgement' feeds a participant once they passed the qualification, which must "
                           "come before any watched task: give qualification >= 1 (design.qualification; validate "
                           "refuses stopping.feed: judgement without one), or feed='session'")
    if tasks < practice + qualification + w:
        raise HumevalError(f"tasks_per_list={tasks} cannot hold the {practice} practice items, {qualification} "
                           f"qualification checks and {w} watched tasks of a list: give tasks_per_list >= practice + "
                           "qualification + the most watched")
    if not quitters_fed:
        raise HumevalError("quitters_fed=False drops a quitter's outcomes when they are settled; with "
                           "feed='judgement' they were fed as they were submitted (nothing is fed or dropped later)")
    return True


def _crowd_label(crowd: Crowd | CrowdShape, tasks: int) -> dict[str, Any]:
    shape = crowd if isinstance(crowd, CrowdShape) else fit_crowd(crowd, tasks=tasks)
    return shape.to_dict()


def plan_sessions(rule: Any, *, lists: int, watched: int | Sequence[int], minutes_per_list: float,
                  arrivals_per_hour: float | None, target: float = 1.25, decided: float = 0.9, most: int = 10,
                  **options: Any) -> tuple[int, list[CrowdResult]]:
    """W for a crowd: the smallest ``stopping.sessions`` (1..``most``, within ``lists``) whose simulated wall
    time to the decision is at most ``target`` times the fixed design's (the mean of the per-run ratio) and that
    decides in at least ``decided`` times the share of runs in which the same rule, watching the fixed design's
    collection from the same crowd (every list open at once), decides; with the simulations tried. When no W reaches both, the W tried that decides most often, the faster of equals. ``options`` go to
    :func:`simulate_crowd` (``p`` or ``fit``, ``runs``, ``seed``, the protocol's settings).

    Each W costs more unused judgements than the one before (docs/budget.md): the smallest W that keeps the
    wall time and the decisions is the cheapest that does. The decided share matters with a finite crowd (a
    recorded one): a W that admits too few sessions turns the launch burst away, and the rule then runs out of
    participants before it can decide, however short its wall time.
    """
    same: dict[str, Any] = dict(lists=lists, watched=watched, minutes_per_list=minutes_per_list,
                                arrivals_per_hour=arrivals_per_hour)
    reference = simulate_crowd(rule, sessions=int(lists), **same, **options).decided_share
    tried: list[CrowdResult] = []
    for w in range(1, min(int(most), int(lists)) + 1):
        r = simulate_crowd(rule, sessions=w, **same, **options)
        tried.append(r)
        if r.summary()["wall_ratio"].mean <= target and r.decided_share >= decided * reference:
            return w, tried
    best = max(tried, key=lambda r: (round(r.decided_share, 2), -r.summary()["wall_ratio"].mean))
    return best.sessions, tried
