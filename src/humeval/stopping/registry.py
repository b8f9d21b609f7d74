"""Names of the stopping rules, and the one function that builds a rule from a name."""

from __future__ import annotations

from typing import Any

from humeval.errors import HumevalError, did_you_mean
from humeval.stopping.base import BoundaryRule
from humeval.stopping.hoeffding import HoeffdingRule
from humeval.stopping.lastrun import LastRunRule
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH, BetaMixtureRule, prior_strength_for
from humeval.stopping.normal_mixture import NormalMixtureRule, rho_for
from humeval.stopping.union_hoeffding import UnionHoeffdingRule

__all__ = ["ANYTIME_VALID", "RULES", "TUNABLE", "get_rule", "rule_problems"]

RULES: dict[str, type] = {
    "hoeffding": HoeffdingRule,
    "hoeffding-lastrun": LastRunRule,
    "hoeffding-union": UnionHoeffdingRule,
    "mixture": BetaMixtureRule,
    "anytime": BetaMixtureRule,
    "normal-mixture": NormalMixtureRule,
}

#: rules whose probability of ever deciding wrongly is at most delta
ANYTIME_VALID = frozenset({"hoeffding-union", "mixture", "anytime", "normal-mixture"})
#: rules with a tuning (``stopping.tuned_for``)
TUNABLE = frozenset({"mixture", "anytime", "normal-mixture"})


def rule_problems(name: str, delta: float, horizon: int | None, tuned_for: int | None = None) -> list[str]:
    """What keeps rule ``name`` from deciding live, judgement by judgement (empty list: it can).

    The one place that knows each rule's parameters: ``validate`` and ``lock`` report these,
    and :func:`get_rule` refuses them, so a study never reaches collection with a rule that
    cannot run.
    """
    if name not in RULES:
        return [f"stopping.rule: unknown rule '{name}'. {did_you_mean(name, RULES)}"]
    problems = []
    if not 0 < delta < 0.5:
        problems.append(f"stopping.delta: must be in (0, 0.5), got {delta!r}")
    if RULES[name] is LastRunRule and horizon is None:
        problems.append(
            f"stopping.max_judgements: rule '{name}' (the authors' code) looks ahead to a fixed horizon; "
            "set stopping.max_judgements, or use an anytime-valid rule (anytime, mixture, hoeffding-union)"
        )
    if tuned_for is not None and name not in TUNABLE:
        problems.append(f"stopping.tuned_for: rule '{name}' has no tuning; it applies to {', '.join(sorted(TUNABLE))}")
    if horizon is not None and (int(horizon) != horizon or horizon < 1):
        problems.append(f"stopping.max_judgements: must be a positive integer, got {horizon!r}")
    return problems


def get_rule(name: str, delta: float, **options: Any) -> BoundaryRule | LastRunRule:
    """Build rule ``name`` at error level ``delta``.

    Options: ``horizon`` and ``two_sided`` for ``hoeffding-lastrun``; ``prior_strength``
    for ``mixture``/``anytime``; ``tuned_for`` (judgements at which the boundary is tightest)
    for ``mixture``/``anytime`` (sets the prior strength) and ``normal-mixture`` (sets rho).
    Unknown names list what exists.
    """
    tuned_for = options.get("tuned_for")
    if name not in RULES:
        raise HumevalError(f"unknown stopping rule '{name}'. {did_you_mean(name, RULES)}")
    cls = RULES[name]
    if cls is LastRunRule:
        return LastRunRule(delta, options.get("horizon"), two_sided=bool(options.get("two_sided", False)))
    if cls is NormalMixtureRule:
        return NormalMixtureRule(delta, None if tuned_for is None else rho_for(int(tuned_for), delta))
    if cls is BetaMixtureRule:
        strength = options.get("prior_strength", DEFAULT_PRIOR_STRENGTH)
        if tuned_for is not None:
            strength = prior_strength_for(int(tuned_for), delta)
        rule = BetaMixtureRule(delta, strength)
        if name == "anytime":
            rule.name = "anytime"
        return rule
    return cls(delta)
