"""Goals over K systems (``pair``, ``best``, ``top-k``, ``ranking``) decided with an anytime-valid guarantee.

Method. Every unordered pair (i, j) of the K systems has its own two-sided beta-binomial
mixture test (:class:`~humeval.stopping.mixture.BetaMixtureRule`) at level
delta' = delta / (K (K - 1) / 2) (a union bound over the pairs). A pair's outcomes are the
judgements that compared i and j; the test *resolves* the pair (i above j) the first time
wins_ij >= a(n_ij), n_ij = wins_ij + wins_ji, and the resolution is kept for ever (sticky).
The goals are read from these direct resolutions only, never from their transitive closure:

* ``best``: a system is in contention while no system beat it directly; decided when one
  system beat every other system directly (the answer).
* ``top-k``: a system is *out* once k systems beat it directly, *in* once it beat K - k
  directly, in contention while neither; decided when k systems each beat each of the other
  K - k directly (the answer).
* ``ranking``: decided when every pair is resolved and the resolutions form a total order
  (the answer); a system leaves contention when all its pairs are resolved.
* ``pair``: two systems; decided when their test resolves (delta' = delta).

A goal that the direct resolutions can no longer satisfy (``best``: every system beaten;
``top-k``: an *out* system beat an *in* one, or too many in or out; ``ranking``: a resolved
cycle) is *unreachable*: nothing is left in contention, no pair is open
(:func:`open_pairs`), and the goal stays undecided. The transitive closure gives the rank
sets shown on leaderboards ([1 + #strictly above, K - #strictly below]); it decides nothing.

Guarantee. By Ville's inequality each pair's test resolves wrongly with probability at most
delta', at any time and under any data-dependent choice of which pair to judge next
(optional sampling); so with probability at least 1 - delta no pair is ever resolved
wrongly, whatever the monitoring. Every announcement rests on pairs resolved directly, so on
that event it is correct whatever the preferences, transitive or not:
P(any announced answer is ever wrong) <= delta, where correct means borne out pair by pair
(``best``: the system is preferred to every other with P > 1/2, a Condorcet winner;
``top-k``: each of the k is preferred to each of the rest; ``ranking``: each system is
preferred to every system below it). It assumes the judgements of a pair are independent
draws at a fixed rate P(i preferred to j) (one population of judges, no drift); it needs no
transitivity. When no correct answer exists (a preference cycle, a tie) the goal stays
undecided (a tie is never resolved with probability 1 - delta'; the horizon ends
collection), which is correct. Of the per-system events, ``eliminated`` and ``out`` hold
whatever the preferences; ``in`` and ``ranked`` say where a system stands in the answer if
the goal is reached. Without transitivity, reaching an answer takes every pair it needs:
``best`` has the winner meet all K - 1 rivals, ``ranking`` resolves all K (K - 1) / 2 pairs.

References: Even-Dar, Mannor, Mansour (2006), JMLR 7 (successive elimination); Yue & Joachims
(2011), ICML (dueling bandits); Howard, Ramdas, McAuliffe, Sekhon (2021), Ann. Statist. 49(2)
(conjugate mixture confidence sequences); Ville (1939).
Checked against: hand-built resolution matrices in tests/unit/stopping/test_goals.py and
test_goals_intransitive.py, and the simulated wrong-decision rate (<= delta) of
:func:`humeval.simulate.multi.simulate_goal`, including a preference cycle A > B > C > A.
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
    "GOALS",
    "Goal",
    "GoalDecision",
    "GoalRule",
    "answer_of",
    "check_goal",
    "closure",
    "goal_status",
    "named_events",
    "open_pairs",
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
    resolved: np.ndarray = (n > 0) & (w >= np.asarray(boundary)[idx])
    return resolved


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
    """Rank sets for display from a closed relation: low = 1 + #above, high = K - #below (1 = best).

    Only the strict part counts (i above j and not j above i): systems on a preference cycle
    are not ranked against each other. For display only; decisions are read from the direct
    relation (:func:`goal_status`).
    """
    c = np.asarray(closed, dtype=bool)
    c = c & ~np.swapaxes(c, -1, -2)
    k = c.shape[-1]
    above = c.sum(axis=-2)  # column sums: systems above i
    below = c.sum(axis=-1)
    return 1 + above, k - below


def _unresolved(r: np.ndarray) -> np.ndarray:
    k = r.shape[-1]
    unresolved: np.ndarray = ~(r | np.swapaxes(r, -1, -2)) & ~np.eye(k, dtype=bool)
    return unresolved


def _status(resolved: np.ndarray, goal: str, top: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(decided, contention, open pairs) from the direct relation; see :func:`goal_status`."""
    r = np.asarray(resolved, dtype=bool)
    k = r.shape[-1]
    wins, losses = r.sum(axis=-1), r.sum(axis=-2)
    unresolved = _unresolved(r)
    if goal in ("best", "pair"):
        contention = losses == 0  # never beaten directly: can still be the answer
        decided = (wins == k - 1).any(axis=-1)
        open_ = unresolved & (contention[..., :, None] | contention[..., None, :])
    elif goal == "top-k":
        inside, out = wins >= k - top, losses >= top
        # no top set can exist: too many in or out, or an outside system beat an inside one directly
        stuck: np.ndarray = ((inside.sum(axis=-1) > top) | (out.sum(axis=-1) > k - top)
                 | (r & out[..., :, None] & inside[..., None, :]).any(axis=(-1, -2)))
        contention = ~(inside | out) & ~stuck[..., None]
        block = inside[..., :, None] & out[..., None, :]
        decided = (inside.sum(axis=-1) == top) & (out.sum(axis=-1) == k - top) & ~(block & ~r).any(axis=(-1, -2))
        same = inside[..., :, None] & inside[..., None, :] | out[..., :, None] & out[..., None, :]
        open_ = unresolved & ~same & ~stuck[..., None, None]
    elif goal == "ranking":
        stuck = np.asarray(np.diagonal(closure(r), axis1=-2, axis2=-1).any(axis=-1))  # a directly resolved cycle
        open_ = unresolved & ~stuck[..., None, None]
        contention = open_.any(axis=-1)
        # a complete tournament is a total order exactly when its win counts are 0, 1, ..., K - 1
        decided = ~unresolved.any(axis=(-1, -2)) & (np.sort(wins, axis=-1) == np.arange(k)).all(axis=-1)
    else:
        raise HumevalError(f"unknown goal '{goal}'. {did_you_mean(goal, GOALS)}")
    return decided, contention, open_


def goal_status(resolved: np.ndarray, goal: str, top: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(decided, contention) for a goal from the DIRECT relation, vectorised over leading axes.

    ``resolved[..., i, j]``: the pair's own test resolved i above j (never its transitive
    closure: a decision read from the closure is not covered by the guarantee when the
    preferences are intransitive). Decided when

    * ``best`` / ``pair``: one system beat every other system directly;
    * ``top-k``: k systems each beat each of the other K - k directly;
    * ``ranking``: every pair is resolved and the resolutions form a total order.

    ``contention[..., i]``: system i can still change the answer (``best``: never beaten
    directly; ``top-k``: neither *in*, at least K - k direct wins, nor *out*, at least k direct
    losses; ``ranking``: a pair of i is unresolved). A goal that can no longer be reached (every
    system beaten, a resolved cycle) has nobody in contention and no open pair.
    """
    decided, contention, _ = _status(resolved, goal, top)
    return decided, contention


def open_pairs(resolved: np.ndarray, goal: str, top: int = 1) -> np.ndarray:
    """Unresolved pairs whose direct resolution can still bring the decision (symmetric, vectorised).

    ``best``: pairs touching a system never beaten directly (the winner must beat everyone
    itself); ``top-k``: pairs not both *in* and not both *out*; ``ranking``: every unresolved
    pair. None once decided or once the goal can no longer be reached (the live store closes a
    pair's tasks when it is not open; the pair choice serves only open pairs).
    """
    decided, _, open_ = _status(resolved, goal, top)
    pairs: np.ndarray = open_ & ~np.asarray(decided)[..., None, None]
    return pairs


def answer_of(resolved: np.ndarray, goal: str, top: int = 1) -> tuple[int, ...]:
    """The answer of one decided study from its direct relation: (winner,), the top systems, or the order."""
    r = np.asarray(resolved, dtype=bool)
    wins = r.sum(axis=-1)
    order = [int(i) for i in np.argsort(-wins, kind="stable")]
    if goal in ("best", "pair"):
        return (order[0],)
    if goal == "top-k":
        return tuple(sorted(order[:top]))
    return tuple(order)


@dataclass(frozen=True)
class GoalDecision:
    """The state of a goal over K systems after ``comparisons`` judgements.

    ``resolved[i, j]``: the pair's test resolved i above j (directly), the only relation the
    decision reads; ``closed``: its transitive closure, for display; ``rank_low``/``rank_high``:
    display rank sets from the closure (1 = best); ``contention``: the systems still able to
    change the answer; ``open_pairs[i, j]``: the unresolved pairs still able to bring the
    decision (:func:`open_pairs`); ``answer``: None until decided. ``events`` are the
    announcements the last update made (kind, details).
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
    open_pairs: np.ndarray
    events: tuple[dict[str, Any], ...] = field(default=())

    @property
    def decided(self) -> bool:
        return self.answer is not None

    @property
    def reachable(self) -> bool:
        """False once no judgement can bring the decision (e.g. a preference cycle resolved directly)."""
        return self.decided or bool(self.open_pairs.any())


class GoalRule:
    """One study's goal over K systems, fed one judgement at a time (live store, replay).

    ``update(i, j, winner)`` records a judgement between systems i and j and returns the
    :class:`GoalDecision`, whose ``events`` name what the judgement changed (a pair resolved,
    a system eliminated / in / out / ranked, the goal unreachable or decided). Decisions are
    sticky, and read from the direct resolutions only (:func:`goal_status`).
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
        decided, contention, open_ = _status(self.resolved, self.goal, self.top)
        answer = self._final
        if answer is None and bool(decided):
            answer = self._final = answer_of(self.resolved, self.goal, self.top)
        if answer is not None:
            open_ = np.zeros_like(open_)
        cont = tuple(int(x) for x in np.flatnonzero(contention))
        reachable = answer is not None or bool(open_.any())
        reason = self._reason(answer, cont, reachable)
        events: list[dict[str, Any]] = []
        if before is not None:
            for w, lo in zip(*np.nonzero(self.resolved & ~before.resolved), strict=True):
                events.append({"kind": "pair_resolved", "above": int(w), "below": int(lo),
                               "judgements": int(self.wins[w, lo] + self.wins[lo, w]), "wins": int(self.wins[w, lo])})
            for s in sorted(set(before.contention) - set(cont)):
                kind = self._leaving(int(s), reachable)
                if kind is not None:
                    events.append({"kind": kind, "system": int(s), "rank_low": int(low[s]), "rank_high": int(high[s])})
            if not reachable and before.reachable:
                events.append({"kind": "unreachable"})
            if answer is not None and before.answer is None:
                events.append({"kind": "decided", "answer": list(answer)})
        return GoalDecision(self.goal, self.top, self.delta, self.pair_delta, self.comparisons, self.resolved.copy(),
                            closed, low, high, cont, answer, reason, open_, tuple(events))

    def _leaving(self, s: int, reachable: bool) -> str | None:
        """What a system leaving contention was settled as, from its direct resolutions alone.

        ``eliminated`` (beaten directly) and ``out`` (beaten directly by k systems) hold whatever
        the preferences; ``in`` and ``ranked`` say where the system stands in the answer if the
        goal is reached, and are not announced once it cannot be (None).
        """
        wins, losses = int(self.resolved[s].sum()), int(self.resolved[:, s].sum())
        if self.goal in ("best", "pair"):
            return "eliminated" if losses else None
        if self.goal == "top-k":
            if losses >= self.top:
                return "out"
            return "in" if wins >= self.k - self.top and reachable else None
        return "ranked" if wins + losses == self.k - 1 and reachable else None

    def _reason(self, answer: tuple[int, ...] | None, cont: tuple[int, ...], reachable: bool = True) -> str:
        level = f"pairwise mixture tests at delta/{self.k * (self.k - 1) // 2} = {self.pair_delta:.3g}"
        if answer is None and not reachable:
            return (f"the goal cannot be reached: the pairs resolved directly admit no answer (intransitive "
                    f"preferences, {level})")
        if answer is None:
            return f"{len(cont)} of {self.k} systems still in contention ({level})"
        what = {"best": "best system", "top-k": f"top {self.top}", "ranking": "ranking", "pair": "better system"}
        return (f"{what[self.goal]} {list(answer)} identified with probability >= {1 - self.delta:g}, "
                f"every pair it needs resolved directly ({level})")


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
