"""Best of K systems with an anytime-valid guarantee: pairwise mixture tests + elimination.

Method. Every unordered pair (i, j) of the K systems has its own two-sided mixture test
(:class:`BetaMixtureRule`) at level delta' = delta / (K (K - 1) / 2) (union bound over the
pairs). A pair's outcomes are the judgements that compared i and j (1: i preferred).
When the test of (i, j) decides, the loser is eliminated (successive elimination); the
procedure stops when one system is left. Which pair to judge next is up to the
assignment policy (:class:`humeval.policies.BestPairPolicy` compares the current leader
with the least-compared challenger); any policy that picks the next pair from past data
keeps the guarantee.

Guarantee. With probability at least 1 - delta no pairwise test ever decides wrongly, at
any time and under any data-dependent choice of pairs (each pair's test martingale is
valid under optional sampling). On that event a system is only eliminated by one that is
truly preferred to it (P(i beats j) > 1/2). So if a Condorcet winner exists (a system
preferred to every other), it is never eliminated, and whenever the procedure stops it
returns the Condorcet winner: P(return a system that is not the winner) <= delta.
Without a Condorcet winner (a preference cycle) or with exact ties the procedure may not
stop; it then reports the remaining active systems.

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
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH, BetaMixtureRule

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
    """Successive elimination over K systems with pairwise anytime-valid mixture tests."""

    name = "best-arm"

    def __init__(self, k: int, delta: float, prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> None:
        if int(k) != k or k < 2:
            raise HumevalError(f"the number of systems must be an integer >= 2, got {k!r}")
        self.k = int(k)
        self.delta = check_delta(delta)
        self.pairs = self.k * (self.k - 1) // 2
        self.pair_delta = self.delta / self.pairs
        self.pair_rule = BetaMixtureRule(self.pair_delta, prior_strength)
        self.reset()

    def reset(self) -> None:
        self.wins = np.zeros((self.k, self.k), dtype=np.int64)  # wins[i, j]: i preferred to j
        self.active = np.ones(self.k, dtype=bool)
        self.comparisons = 0

    def boundary(self, horizon: int) -> np.ndarray:
        """a_n of the pairwise test (decide i over j once wins_ij >= a_n, n = wins_ij + wins_ji)."""
        return self.pair_rule.boundary(horizon)

    def update(self, i: int, j: int, winner: int) -> BestArmDecision:
        """Record one judgement of system i against system j; ``winner`` is i or j."""
        for v, what in ((i, "i"), (j, "j")):
            if not (0 <= v < self.k) or int(v) != v:
                raise HumevalError(f"system index {what}={v!r} outside 0..{self.k - 1}")
        if i == j or winner not in (i, j):
            raise HumevalError(f"a judgement compares two different systems and names one of them; got i={i}, j={j}, winner={winner}")
        loser = j if winner == i else i
        self.wins[winner, loser] += 1
        self.comparisons += 1
        n = int(self.wins[i, j] + self.wins[j, i])
        a = int(self.pair_rule.a_min(np.array([n]))[0])
        if self.active[i] and self.active[j]:
            if self.wins[i, j] >= a:
                self.active[j] = False
            elif self.wins[j, i] >= a:
                self.active[i] = False
        return self.current()

    def current(self) -> BestArmDecision:
        act = tuple(int(x) for x in np.flatnonzero(self.active))
        if len(act) == 1:
            return BestArmDecision(act[0], act, self.comparisons,
                                   f"system {act[0]} beat every eliminated rival (pairwise delta {self.pair_delta:.3g})")
        return BestArmDecision(None, act, self.comparisons, f"{len(act)} systems still active")
