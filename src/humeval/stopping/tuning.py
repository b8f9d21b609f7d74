"""Which two-system rule, tuned how: exact efforts of the anytime-valid rules, and a tuning for an expected effect.

Every anytime-valid rule pays for not knowing the effect in advance; where it pays least is
its tuning. :func:`rule_efforts` gives the exact expected judgements (``E[min(tau, horizon)]``,
:mod:`humeval.stopping.exact`) and error of each boundary rule at a preference share ``p``;
:func:`recommend_tuning` finds the ``stopping.tuned_for`` (the number of judgements at which
the mixture boundary is tightest) that minimises the expected judgements at ``p`` among the
Beta(a, a) mixtures. The tuning is declared in the protocol and locked before collection, so
the guarantee (error at most delta under continuous monitoring) holds for any value chosen.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from humeval.stopping.base import BoundaryRule
from humeval.stopping.exact import operating_characteristics, wald_bound
from humeval.stopping.mixture import BetaMixtureRule, prior_strength_for
from humeval.stopping.normal_mixture import DEFAULT_TUNED_FOR, NormalMixtureRule, rho_for

__all__ = ["RuleEffort", "Tuning", "reference_rules", "recommend_tuning", "rule_efforts", "tuned_mixture"]

#: the range of ``tuned_for`` searched (judgements)
TUNING_RANGE = (10, 1_000_000)


@dataclass(frozen=True)
class RuleEffort:
    """One rule at one preference share: expected judgements, their ratio to Wald's bound, and errors."""

    rule: str
    p: float
    delta: float
    expected_n: float
    wald: float
    ratio: float
    wrong: float
    undecided: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Tuning:
    """The recommended ``stopping.tuned_for`` at an expected preference share ``p``."""

    p: float
    delta: float
    tuned_for: int
    prior_strength: float
    expected_n: float
    default_expected_n: float
    best_reference: str
    best_reference_n: float
    #: a weaker effect (e.g. the pilot's confidence limit nearer 1/2) and both rules' expected judgements there
    weak_p: float | None = None
    weak_expected_n: float | None = None
    weak_default_expected_n: float | None = None

    @property
    def gain(self) -> float:
        """Expected judgements saved against the default rule, as a share of the default's."""
        return 1.0 - self.expected_n / self.default_expected_n

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "gain": self.gain}


def tuned_mixture(delta: float, tuned_for: int) -> BetaMixtureRule:
    """The Beta(a, a) mixture whose boundary is tightest at ``tuned_for`` judgements."""
    return BetaMixtureRule(delta, prior_strength_for(int(tuned_for), delta))


def reference_rules(delta: float) -> dict[str, BoundaryRule]:
    """The rules of the comparison in docs/stopping.md: the default ``anytime``, the earlier default (a = 20),
    and a Beta and a normal mixture tuned for 1,000 judgements."""
    return {
        "anytime": BetaMixtureRule(delta),
        "mixture (a = 20)": BetaMixtureRule(delta, 20.0),
        f"mixture (tuned for {DEFAULT_TUNED_FOR})": tuned_mixture(delta, DEFAULT_TUNED_FOR),
        f"normal-mixture (tuned for {DEFAULT_TUNED_FOR})": NormalMixtureRule(delta, rho_for(DEFAULT_TUNED_FOR, delta)),
    }


def _horizon(p: float, delta: float) -> int:
    """A horizon long enough that any rule of the comparison has (almost surely) decided: 40 x Wald's bound."""
    return int(min(max(40 * wald_bound(delta, p), 2000), 2_000_000)) if p != 0.5 else 20_000


def rule_efforts(p: float, delta: float, rules: Mapping[str, BoundaryRule] | None = None,
                 horizon: int | None = None) -> list[RuleEffort]:
    """Exact expected judgements and errors of each rule at preference share ``p`` (p > 1/2: A is better)."""
    rules = reference_rules(delta) if rules is None else rules
    horizon = _horizon(p, delta) if horizon is None else int(horizon)
    wald = wald_bound(delta, p) if p != 0.5 else math.inf
    out = []
    for name, rule in rules.items():
        oc = operating_characteristics(rule.boundary(horizon), p, tol=1e-8)
        out.append(RuleEffort(name, p, delta, oc.expected_n, wald, oc.expected_n / wald, oc.wrong, oc.undecided))
    return out


def recommend_tuning(p: float, delta: float, weak_p: float | None = None) -> Tuning:
    """The ``tuned_for`` of the Beta mixture with the fewest expected judgements at ``p``.

    Golden-section search over ln(tuned_for) in :data:`TUNING_RANGE` (the expected judgements
    are flat near the optimum: a tuning within 5 % of the best one costs well under 1 % more).
    ``weak_p``: a weaker effect to report the tuned and the default rule at (what a too
    optimistic pilot would cost).
    """
    from scipy.optimize import minimize_scalar

    if not 0.0 < p < 1.0 or p == 0.5:
        raise ValueError(f"p must be in (0, 1) and not 1/2 (no effect: no tuning decides), got {p!r}")
    same_side = weak_p is not None and weak_p != 0.5 and (weak_p > 0.5) == (p > 0.5)
    p = max(p, 1 - p)
    horizon = _horizon(p, delta)
    efforts: dict[int, float] = {}

    def effort(log_n: float) -> float:
        n = int(round(math.exp(log_n)))
        if n not in efforts:
            efforts[n] = operating_characteristics(tuned_mixture(delta, n).boundary(horizon), p, tol=1e-7).expected_n
        return efforts[n]

    minimize_scalar(effort, bounds=tuple(math.log(b) for b in TUNING_RANGE), method="bounded",
                    options={"xatol": 0.05})
    best = min(efforts, key=efforts.__getitem__)
    refs = rule_efforts(p, delta, horizon=horizon)
    ref = min(refs, key=lambda r: r.expected_n)
    weak = None
    if same_side and weak_p is not None:  # a weak effect on the other side of 1/2 is no effect: nothing decides
        weak_p = max(weak_p, 1 - weak_p)
        rules = {"tuned": tuned_mixture(delta, best), "anytime": BetaMixtureRule(delta)}
        weak = [r.expected_n for r in rule_efforts(weak_p, delta, rules)]
    return Tuning(p, delta, best, prior_strength_for(best, delta), efforts[best], refs[0].expected_n, ref.rule,
                  ref.expected_n, weak_p if weak else None, weak[0] if weak else None, weak[1] if weak else None)
