"""Goals over K systems (``pair``, ``best``, ``top-k``, ``ranking``) decided with an anytime-valid guarantee.

Method. Every unordered pair (i, j) of the K systems has its own two-sided beta-binomial
mixture test (:class:`~humeval.stopping.mixture.BetaMixtureRule`) at level
delta' = delta / (K (K - 1) / 2) (a union bound over the pairs). A pair's outcomes are the
judgements that compared i and j; the test *resolves* the pair (i above j) the first time
wins_ij >= a(n_ij), n_ij = wins_ij + wins_ji, and the resolution is kept for ever (sticky).
The resolved relation is closed transitively (i above j, j above l => i above l). From the
closed relation every system gets a *rank set* [1 + #systems above it, K - #systems below it]
and the goals read:

* ``best``: a system is in contention while no system is above it; decided when one is left.
* ``top-k``: a system is *in* when at least K - k systems are below it, *out* when at least k
  are above it; in contention while neither; decided when every system is in or out.
* ``ranking``: decided when every rank set is a single rank (every adjacent pair resolved).
* ``pair``: two systems; decided when their test resolves (delta' = delta).

Guarantee. By Ville's inequality each pair's test resolves wrongly with probability at most
delta', at any time and under any data-dependent choice of which pair to judge next
(optional sampling); so with probability at least 1 - delta no pair is ever resolved
wrongly, whatever the monitoring. Under weak stochastic transitivity (the true preferences
form an order; Bradley-Terry, Thurstone and every strict linear order satisfy it) the
transitive closure of correct resolutions is correct, so on that event every elimination,
acceptance, rejection and rank set announced at any time is correct:
P(any announced decision is ever wrong) <= delta. Without such an order (a preference cycle)
``best`` still needs only the pairs it resolved directly to be right, but the closure may
then claim relations the data never tested; ties (P = 1/2) are never resolved (with
probability 1 - delta'), so a goal that needs a tied pair resolved never stops.

References: Even-Dar, Mannor, Mansour (2006), JMLR 7 (successive elimination); Yue & Joachims
(2011), ICML (dueling bandits); Howard, Ramdas, McAuliffe, Sekhon (2021), Ann. Statist. 49(2)
(conjugate mixture confidence sequences); Ville (1939).
Checked against: hand-built resolution matrices in tests/unit/stopping/test_goals.py and the
simulated wrong-decision rate (<= delta) of :func:`humeval.simulate.multi.simulate_goal`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from humeval.errors import HumevalError, did_you_mean
from humeval.stopping._validate import check_delta
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH, BetaMixtureRule, _betaln

__all__ = [
    "named_events",
    "GOALS",
    "Goal",
    "GoalDecision",
    "GoalRule",
    "check_goal",
    "closure",
    "goal_status",
    "pair_delta",
    "rank_sets",
    "resolve_pairs",
    "win_rate_cs",
]

Goal = Literal["pair", "best", "top-k", "ranking"]
GOALS: tuple[str, ...] = ("pair", "best", "top-k", "ranking")


def named_events(events: Sequence[dict[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """The rule's events with system indices replaced by the systems' names (live store and analysis replay)."""
    out = []
    for e in events:
        e = dict(e)
        for key in ("above", "below", "system"):
            if key in e:
                e[key] = names[e[key]]
        if "answer" in e:
            e["answer"] = [names[i] for i in e["answer"]]
        out.append(e)
    return out


def check_goal(goal: str, k: int, top: int | None = None) -> tuple[str, int]:
    """Validate (goal, K, top) and return (goal, top); ``top`` is used by ``top-k`` only (default 1)."""
    if goal not in GOALS:
        raise HumevalError(f"stopping.goal: unknown goal '{goal}'. {did_you_mean(goal, GOALS)}")
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise HumevalError(f"a goal over systems needs an integer number of systems >= 2, got {k!r}")
    if goal == "pair" and k != 2:
        raise HumevalError(f"goal 'pair' compares two systems, got {k}; use goal best, top-k or ranking for K > 2")
    t = 1 if top is None else top
    if goal == "top-k" and (isinstance(t, bool) or int(t) != t or not 1 <= t < k):
        raise HumevalError(f"stopping.top: goal top-k needs 1 <= top < K = {k}, got {top!r}")
    return goal, int(t)


def pair_delta(delta: float, k: int) -> float:
    """delta / (K (K - 1) / 2): the level of each pairwise test (union bound over the pairs)."""
    return check_delta(delta) / (k * (k - 1) // 2)


def resolve_pairs(wins: np.ndarray, boundary: np.ndarray) -> np.ndarray:
    """Pairs whose test resolves now: ``out[..., i, j]`` is True when wins_ij >= a(n_ij).

    ``wins[..., i, j]`` counts judgements preferring i to j; ``boundary[n - 1]`` is a(n) of
    the pairwise test for n = 1..len(boundary) (n beyond it: a(len)). Vectorised over any
    leading axes (simulated runs).
    """
    w = np.asarray(wins)
    n = w + np.swapaxes(w, -1, -2)
    idx = np.clip(n, 1, len(boundary)) - 1
    return (n > 0) & (w >= np.asarray(boundary)[idx])


def closure(above: np.ndarray) -> np.ndarray:
    """Transitive closure of a boolean relation ``above[..., i, j]`` (i above j), by repeated squaring."""
    r = np.asarray(above, dtype=bool)
    k = r.shape[-1]
    steps = max(1, int(np.ceil(np.log2(max(k, 2)))))
    for _ in range(steps):
        r2 = r | (np.matmul(r.astype(np.int32), r.astype(np.int32)) > 0)
        if np.array_equal(r2, r):
            break
        r = r2
    return r


def rank_sets(closed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank sets from a closed relation: low = 1 + #above, high = K - #below (1 = best)."""
    c = np.asarray(closed, dtype=bool)
    k = c.shape[-1]
    above = c.sum(axis=-2)  # column sums: systems above i
    below = c.sum(axis=-1)
    return 1 + above, k - below


def goal_status(closed: np.ndarray, goal: str, top: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(decided, contention) for a goal from the closed relation, vectorised over leading axes.

    ``contention[..., i]``: system i can still change the answer (``best``: nothing above it;
    ``top-k``: neither in nor out; ``ranking``/``pair``: its rank set has more than one rank).
    """
    low, high = rank_sets(closed)
    if goal == "best":
        contention = low == 1
        decided = contention.sum(axis=-1) == 1
    elif goal == "top-k":
        inside = high <= top
        out = low > top
        contention = ~(inside | out)
        decided = ~contention.any(axis=-1)
    elif goal in ("ranking", "pair"):
        contention = low != high
        decided = ~contention.any(axis=-1)
    else:
        raise HumevalError(f"unknown goal '{goal}'. {did_you_mean(goal, GOALS)}")
    return decided, contention


def answer_of(closed: np.ndarray, goal: str, top: int = 1) -> tuple[int, ...]:
    """The decided answer of one study: (winner,), the top systems, or the order (best first)."""
    low, _ = rank_sets(closed)
    order = [int(i) for i in np.argsort(low, kind="stable")]
    if goal in ("best", "pair"):
        return (order[0],)
    if goal == "top-k":
        return tuple(sorted(order[:top]))
    return tuple(order)


@dataclass(frozen=True)
class GoalDecision:
    """The state of a goal over K systems after ``comparisons`` judgements.

    ``resolved[i, j]``: the pair's test resolved i above j (directly); ``closed``: its
    transitive closure; ``rank_low``/``rank_high``: rank sets (1 = best); ``contention``:
    the systems still able to change the answer; ``answer``: None until decided.
    ``events`` are the announcements the last update made (kind, details).
    """

    goal: str
    top: int
    delta: float
    pair_delta: float
    comparisons: int
    resolved: np.ndarray
    closed: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    contention: tuple[int, ...]
    answer: tuple[int, ...] | None
    reason: str
    events: tuple[dict, ...] = field(default=())

    @property
    def decided(self) -> bool:
        return self.answer is not None


class GoalRule:
    """One study's goal over K systems, fed one judgement at a time (live store, replay).

    ``update(i, j, winner)`` records a judgement between systems i and j and returns the
    :class:`GoalDecision`, whose ``events`` name what the judgement changed (a pair resolved,
    a system eliminated / in / out, the goal decided). Decisions are sticky.
    """

    name = "goal"

    def __init__(self, k: int, goal: str = "best", delta: float = 0.05, top: int | None = None,
                 prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> None:
        self.goal, self.top = check_goal(goal, k, top)
        self.k = int(k)
        self.delta = check_delta(delta)
        self.pair_delta = pair_delta(self.delta, self.k)
        self.test = BetaMixtureRule(self.pair_delta, prior_strength)
        self.reset()

    def reset(self) -> None:
        self.wins = np.zeros((self.k, self.k), dtype=np.int64)
        self.resolved = np.zeros((self.k, self.k), dtype=bool)
        self.comparisons = 0
        self._final: tuple[int, ...] | None = None

    def update(self, i: int, j: int, winner: int) -> GoalDecision:
        for v, what in ((i, "i"), (j, "j")):
            if isinstance(v, bool) or int(v) != v or not 0 <= v < self.k:
                raise HumevalError(f"system index {what}={v!r} outside 0..{self.k - 1}")
        if i == j or winner not in (i, j):
            raise HumevalError(f"a judgement compares two different systems and names one of them; "
                               f"got i={i}, j={j}, winner={winner}")
        loser = j if winner == i else i
        self.wins[winner, loser] += 1
        self.comparisons += 1
        before = self.current()
        if self._final is None:
            n = int(self.wins[i, j] + self.wins[j, i])
            a = int(self.test.a_min(np.array([n]))[0])
            if self.wins[winner, loser] >= a and not self.resolved[loser, winner]:
                self.resolved[winner, loser] = True
        return self.current(before)

    def current(self, before: GoalDecision | None = None) -> GoalDecision:
        closed = closure(self.resolved)
        low, high = rank_sets(closed)
        decided, contention = goal_status(closed, self.goal, self.top)
        answer = self._final
        if answer is None and bool(decided):
            answer = self._final = answer_of(closed, self.goal, self.top)
        cont = tuple(int(x) for x in np.flatnonzero(contention))
        reason = self._reason(answer, cont)
        events: list[dict] = []
        if before is not None:
            for w, lo in zip(*np.nonzero(self.resolved & ~before.resolved)):
                events.append({"kind": "pair_resolved", "above": int(w), "below": int(lo),
                               "judgements": int(self.wins[w, lo] + self.wins[lo, w]), "wins": int(self.wins[w, lo])})
            for s in sorted(set(before.contention) - set(cont)):
                events.append({"kind": self._leaving(int(s), low, high), "system": int(s),
                               "rank_low": int(low[s]), "rank_high": int(high[s])})
            if answer is not None and before.answer is None:
                events.append({"kind": "decided", "answer": list(answer)})
        return GoalDecision(self.goal, self.top, self.delta, self.pair_delta, self.comparisons, self.resolved.copy(),
                            closed, low, high, cont, answer, reason, tuple(events))

    def _leaving(self, s: int, low: np.ndarray, high: np.ndarray) -> str:
        if self.goal == "best":
            return "eliminated"
        if self.goal == "top-k":
            return "in" if high[s] <= self.top else "out"
        return "ranked"

    def _reason(self, answer: tuple[int, ...] | None, cont: tuple[int, ...]) -> str:
        level = f"pairwise mixture tests at delta/{self.k * (self.k - 1) // 2} = {self.pair_delta:.3g}"
        if answer is None:
            return f"{len(cont)} of {self.k} systems still in contention ({level})"
        what = {"best": "best system", "top-k": f"top {self.top}", "ranking": "ranking", "pair": "better system"}
        return f"{what[self.goal]} {list(answer)} identified with probability >= {1 - self.delta:g} ({level})"


def win_rate_cs(wins: np.ndarray, games: np.ndarray, delta: float, prior_strength: float = DEFAULT_PRIOR_STRENGTH,
                grid: int = 4001) -> tuple[np.ndarray, np.ndarray]:
    """Anytime-valid confidence sequence for P(i preferred to j) from the pair's mixture martingale.

    For any p0, M_n(p0) = B(a + S, a + n - S) / B(a, a) / (p0^S (1 - p0)^(n - S)) is a
    nonnegative martingale under P = p0 (a Beta(a, a) mixture of likelihood ratios against
    p0), so {p0 : M_n(p0) < 1/delta} covers the true P at every n with probability >= 1 - delta
    (Ville). At p0 = 1/2 it is the pair's test: the interval excludes 1/2 exactly when the
    test resolves the pair. Evaluated on a grid of ``grid`` points (interval ends within
    1/(grid - 1)); vectorised over pairs. Pass delta / (K (K - 1) / 2) for intervals valid
    over all pairs at once. Reference: Howard et al. (2021), section 3 (conjugate mixtures).
    """
    s = np.asarray(wins, dtype=float)[..., None]
    n = np.asarray(games, dtype=float)[..., None]
    p0 = np.linspace(0.0, 1.0, grid)[1:-1]
    a = float(prior_strength)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_m = _betaln(a + s, a + n - s) - _betaln(a, a) - s * np.log(p0) - (n - s) * np.log1p(-p0)
    inside = log_m < np.log(1.0 / check_delta(delta))
    has = inside.any(axis=-1)
    lo = np.where(has, p0[np.argmax(inside, axis=-1)], np.nan)
    hi = np.where(has, p0[inside.shape[-1] - 1 - np.argmax(inside[..., ::-1], axis=-1)], np.nan)
    step = 1.0 / (grid - 1)
    return np.clip(lo - step, 0.0, 1.0), np.clip(hi + step, 0.0, 1.0)
