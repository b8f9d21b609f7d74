"""Sequential decision rules for pairwise comparisons (and best-of-K).

Each rule consumes outcomes one at a time (``update``) or whole simulated paths
(``decide_paths``) and returns a decision (A, B or continue) with its bound and reason.

The rules by name are the registry :data:`RULES` (:mod:`humeval.stopping.registry`; its table with
each rule's boundary and guarantee: docs/stopping.md, "The rules").

``stopping.tuned_for`` tunes the mixtures (:mod:`humeval.stopping.tuning`); exact
operating characteristics of any boundary rule: :mod:`humeval.stopping.exact`.
"""

from humeval.stopping.base import BoundaryRule, StoppingRule, first_passage
from humeval.stopping.best_arm import BestArmDecision, BestArmRule
from humeval.stopping.decision import Decision, Outcome, PathDecisions
from humeval.stopping.hoeffding import HoeffdingRule, hoeffding_radius
from humeval.stopping.lastrun import LastRunRule
from humeval.stopping.mixture import BetaMixtureRule, log_mixture_ratio, prior_strength_for
from humeval.stopping.normal_mixture import NormalMixtureRule, rho_for
from humeval.stopping.pooled import PooledState, PooledStatements, question_pairs
from humeval.stopping.registry import ANYTIME_VALID, RULES, get_rule
from humeval.stopping.union_hoeffding import UnionHoeffdingRule, union_radius

__all__ = [
    "ANYTIME_VALID",
    "RULES",
    "BestArmDecision",
    "BestArmRule",
    "BetaMixtureRule",
    "BoundaryRule",
    "Decision",
    "HoeffdingRule",
    "LastRunRule",
    "NormalMixtureRule",
    "Outcome",
    "PathDecisions",
    "PooledState",
    "PooledStatements",
    "StoppingRule",
    "UnionHoeffdingRule",
    "first_passage",
    "get_rule",
    "hoeffding_radius",
    "log_mixture_ratio",
    "prior_strength_for",
    "question_pairs",
    "rho_for",
    "union_radius",
]
