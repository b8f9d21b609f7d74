"""The stopping-rule protocol and the base class of rules defined by a boundary on counts.

A two-system comparison sees outcomes X_1, X_2, ... in {0, 1} (1: the judgement
favoured A). After n outcomes with S_n = X_1 + ... + X_n a *boundary rule* decides

    A  if S_n >= a_n,        B  if S_n <= n - a_n,        else continue,

with a_n > n/2 the rule's smallest count that decides A at n (symmetric rules). Every
rule in this package except ``hoeffding-lastrun`` is of this form, which makes the
vectorised simulation one comparison per path and step.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from humeval.stats.proportion import wilson_interval
from humeval.stopping._validate import check_delta, check_outcome
from humeval.stopping.decision import Decision, Outcome, PathDecisions

__all__ = ["BoundaryRule", "StoppingRule", "first_passage"]


@runtime_checkable
class StoppingRule(Protocol):
    """A sequential decision rule for one pairwise comparison."""

    name: str
    delta: float

    def update(self, outcome: object) -> Decision:
        """Consume one outcome (1/"A" or 0/"B") and return the current decision."""
        ...

    def reset(self) -> None:
        """Forget all outcomes."""
        ...

    def decide_paths(self, successes: np.ndarray) -> PathDecisions:
        """Vectorised: ``successes[i, t]`` is S after t+1 outcomes on path i."""
        ...


def first_passage(successes: np.ndarray, a_min: np.ndarray) -> PathDecisions:
    """First n with S_n >= a_n (A) or S_n <= n - a_n (B), for every path (row) at once.

    ``a_min`` has one entry per column (n = 1..H). Paths that never cross get n = 0.
    """
    s = np.asarray(successes)
    if s.ndim == 1:
        s = s[None, :]
    h = s.shape[1]
    n = np.arange(1, h + 1)
    a = np.asarray(a_min)[:h]
    hit_a = s >= a
    hit_b = s <= n - a
    hit = hit_a | hit_b
    any_hit = hit.any(axis=1)
    first = hit.argmax(axis=1)
    rows = np.arange(s.shape[0])
    outcome = np.where(hit_a[rows, first], 1, -1).astype(np.int8)
    outcome[~any_hit] = 0
    stop = np.where(any_hit, first + 1, 0)
    return PathDecisions(n=stop, outcome=outcome)


class BoundaryRule:
    """Base of symmetric boundary rules: subclasses implement :meth:`a_min`.

    The object is usable one outcome at a time (``update``; the decision is sticky:
    once A or B is decided, later outcomes do not change it) and on whole simulated
    paths (``decide_paths``). Boundaries are cached per horizon.
    """

    name: str = "boundary"

    def __init__(self, delta: float) -> None:
        self.delta = check_delta(delta)
        self._cache: np.ndarray | None = None
        self.reset()

    # -- to implement -------------------------------------------------------------
    def a_min(self, n: np.ndarray) -> np.ndarray:
        """Smallest success count deciding A after n outcomes (n + 1 when impossible)."""
        raise NotImplementedError

    def statistic(self, n: int, s: int) -> float:
        """The rule's own evidence at (n, S_n), reported in :class:`Decision`."""
        raise NotImplementedError

    def describe(self) -> str:
        """One line naming the rule and its guarantee (used in reasons)."""
        return self.name

    # -- shared -------------------------------------------------------------------
    def boundary(self, horizon: int) -> np.ndarray:
        """``a_n`` for n = 1..horizon (cached)."""
        if self._cache is None or len(self._cache) < horizon:
            self._cache = np.asarray(self.a_min(np.arange(1, horizon + 1)), dtype=np.int64)
        return self._cache[:horizon]

    def reset(self) -> None:
        self.n = 0
        self.successes = 0
        self._final: Decision | None = None

    def update(self, outcome: object) -> Decision:
        x = check_outcome(outcome)
        if self._final is not None:
            return self._final
        self.n += 1
        self.successes += x
        return self.current()

    def current(self) -> Decision:
        """The decision for the outcomes seen so far."""
        if self._final is not None:
            return self._final
        n, s = self.n, self.successes
        if n == 0:
            return Decision("continue", 0, 0, float("nan"), 1.0, 0.0, 0.0, self.name, self.delta,
                            "no outcome yet")
        a = int(self.a_min(np.array([n]))[0])
        est = s / n
        stat = self.statistic(n, s)
        thr_a, thr_b = a / n, (n - a) / n
        outcome: Outcome
        if s >= a:
            outcome, reason = "A", f"{s}/{n} = {est:.3f} >= {thr_a:.3f}: {self.describe()} decides A"
        elif s <= n - a:
            outcome, reason = "B", f"{s}/{n} = {est:.3f} <= {thr_b:.3f}: {self.describe()} decides B"
        else:
            outcome = "continue"
            lo, hi = wilson_interval(s, n)
            if a <= n:
                need = f"it decides A at {a} or more of {n} for A, B at {n - a} or fewer"
            else:  # thresholds a/n and (n-a)/n outside [0, 1]: no outcome of n can decide yet
                need = f"no split of {n} outcomes can decide yet; at least {self.distance()} more are needed"
            reason = (f"{s}/{n} = {est:.3f} for A (95% Wilson interval {lo:.3f} to {hi:.3f}): not enough evidence "
                      f"at delta={self.delta:g}; {need}")
        d = Decision(outcome, n, s, est, thr_a, thr_b, stat, self.name, self.delta, reason)
        if d.decided:
            self._final = d
        return d

    def distance(self) -> int:
        """Fewest further outcomes after which the rule can decide (0 once decided;
        :func:`humeval.stopping.admission.distance`)."""
        from humeval.stopping.admission import distance

        if self._final is not None:
            return 0
        return distance(self.a_min, self.n, self.successes)

    def decide_paths(self, successes: np.ndarray) -> PathDecisions:
        s = np.asarray(successes)
        return first_passage(s, self.boundary(s.shape[-1]))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(delta={self.delta:g})"
