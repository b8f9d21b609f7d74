"""Adaptive pair choice for K systems: compare the leader with the least-compared challenger.

Used with :class:`humeval.stopping.BestArmRule`. At each request the policy picks, among
the systems still active, the current leader (highest share of won judgements, ties to
the lowest index) and pairs it with the active challenger it has been compared with
least often. Judging the leader against each challenger concentrates labels on the pairs
that can end the study; because the choice depends only on past data, the rule's
guarantee (see BestArmRule) is unaffected.

Reference: Yue & Joachims (2011), "Beat the mean bandit" (leader vs challengers);
Even-Dar et al. (2006) (successive elimination).
Checked against: tests/unit/policies/test_best_pair.py.
"""

from __future__ import annotations

import numpy as np

from humeval.errors import HumevalError
from humeval.stopping.best_arm import BestArmDecision, BestArmRule

__all__ = ["BestPairPolicy"]


class BestPairPolicy:
    """Chooses the next pair of systems to judge, one request at a time."""

    name = "best-pair"

    def __init__(self, rule: BestArmRule) -> None:
        self.rule = rule

    def leader(self) -> int:
        r = self.rule
        won = r.wins.sum(axis=1).astype(float)
        played = (r.wins + r.wins.T).sum(axis=1).astype(float)
        share = np.where(played > 0, won / np.maximum(played, 1), 0.5)
        share = np.where(r.active, share, -1.0)
        return int(np.argmax(share))

    def next_pair(self) -> tuple[int, int]:
        """The pair (leader, challenger) to judge next."""
        r = self.rule
        if r.active.sum() < 2:
            raise HumevalError("the best system is already decided; no pair left to judge")
        lead = self.leader()
        n = (r.wins + r.wins.T)[lead].astype(float)
        n = np.where(r.active, n, np.inf)
        n[lead] = np.inf
        return lead, int(np.argmin(n))

    def record(self, i: int, j: int, winner: int) -> BestArmDecision:
        """Record a judgement and return the rule's decision."""
        return self.rule.update(i, j, winner)
