"""Best of K systems with an anytime-valid guarantee: pairwise mixture tests + elimination.

Method. Every unordered pair (i, j) of the K systems has its own two-sided mixture test
(:class:`BetaMixtureRule`) at level delta' = delta / (K (K - 1) / 2) (union bound over the
pairs). A pair's outcomes are the judgements that compared i and j (1: i preferred).
When the test of (i, j) decides, the loser is eliminated (successive elimination); the
procedure stops when one system has beaten every other system directly. Which pair to judge next is up to the
assignment policy (:class:`humeval.policies.BestPairPolicy` compares the current leader
with the least-compared challenger); any policy that picks the next pair from past data
keeps the guarantee.

Guarantee. With probability at least 1 - delta no pairwise test ever decides wrongly, at
any time and under any data-dependent choice of pairs (each pair's test martingale is
valid under optional sampling). On that event a system is only eliminated by one that is
truly preferred to it (P(i beats j) > 1/2), and the system returned beat every other one
directly, so it is the Condorcet winner (a system preferred to every other): P(return a
system that is not a Condorcet winner) <= delta, with no transitivity assumed. Without a
Condorcet winner (a preference cycle) or with exact ties the procedure does not stop; it
then reports the remaining active systems (none once every system has been beaten).

Reference: Even-Dar, Mannor, Mansour (2006), "Action elimination and stopping conditions
for the multi-armed bandit", JMLR 7; Yue & Joachims (2011), "Beat the mean bandit", ICML
(dueling bandits); Howard et al. (2021) for the pairwise confidence sequences.
Checked against: simulated misidentification rate <= delta in tests/unit/stopping/test_best_arm.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from humeval.errors import HumevalError
from humeval.stopping._validate import check_delta
from humeval.stopping.goals import GoalDecision, GoalRule
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH

__all__ = ["BestArmDecision", "BestArmRule"]


@dataclass(frozen=True)
class BestArmDecision:
    """``best`` is the winning system index (None while several are active)."""

    best: int | None
    active: tuple[int, ...]
    comparisons: int
    reason: str

    @property
    def decided(self) -> bool:
        return self.best is not None


class BestArmRule:
    """Successive elimination over K systems: :class:`~humeval.stopping.goals.GoalRule` with goal ``best``.

    Kept for its one-system-at-a-time interface (``active``, :class:`BestArmDecision`); the
    tests, resolutions and eliminations are the goal rule's.
    """

    name = "best-arm"

    def __init__(self, k: int, delta: float, prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> None:
        if isinstance(k, bool) or int(k) != k or k < 2:
            raise HumevalError(f"the number of systems must be an integer >= 2, got {k!r}")
        self.k = int(k)
        self.delta = check_delta(delta)
        self.goal = GoalRule(self.k, "best", self.delta, prior_strength=prior_strength)
        self.pairs = self.k * (self.k - 1) // 2
        self.pair_delta = self.goal.pair_delta
        self.pair_rule = self.goal.test

    def reset(self) -> None:
        self.goal.reset()

    @property
    def wins(self) -> np.ndarray:
        """wins[i, j]: judgements preferring i to j."""
        return self.goal.wins

    @property
    def active(self) -> np.ndarray:
        """The systems still in contention (never beaten directly)."""
        out = np.zeros(self.k, dtype=bool)
        out[list(self.goal.current().contention)] = True
        return out

    @property
    def comparisons(self) -> int:
        return self.goal.comparisons

    def boundary(self, horizon: int) -> np.ndarray:
        """a_n of the pairwise test (decide i over j once wins_ij >= a_n, n = wins_ij + wins_ji)."""
        return self.pair_rule.boundary(horizon)

    def update(self, i: int, j: int, winner: int) -> BestArmDecision:
        """Record one judgement of system i against system j; ``winner`` is i or j."""
        return self._view(self.goal.update(i, j, winner))

    def current(self) -> BestArmDecision:
        return self._view(self.goal.current())

    def _view(self, d: GoalDecision) -> BestArmDecision:
        act = d.contention
        if d.answer is not None:
            return BestArmDecision(d.answer[0], act, d.comparisons,
                                   f"system {d.answer[0]} beat every rival directly (pairwise delta {self.pair_delta:.3g})")
        return BestArmDecision(None, act, d.comparisons, f"{len(act)} systems still active")
