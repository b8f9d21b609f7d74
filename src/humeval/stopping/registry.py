"""Names of the stopping rules, and the one function that builds a rule from a name."""

from __future__ import annotations

from typing import Any

from humeval.errors import HumevalError, did_you_mean
from humeval.stopping.base import BoundaryRule
from humeval.stopping.hoeffding import HoeffdingRule
from humeval.stopping.lastrun import LastRunRule
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH, BetaMixtureRule
from humeval.stopping.union_hoeffding import UnionHoeffdingRule

__all__ = ["ANYTIME_VALID", "RULES", "get_rule"]

RULES: dict[str, type] = {
    "hoeffding": HoeffdingRule,
    "hoeffding-lastrun": LastRunRule,
    "hoeffding-union": UnionHoeffdingRule,
    "mixture": BetaMixtureRule,
    "anytime": BetaMixtureRule,
}

#: rules whose probability of ever deciding wrongly is at most delta
ANYTIME_VALID = frozenset({"hoeffding-union", "mixture", "anytime"})


def get_rule(name: str, delta: float, **options: Any) -> BoundaryRule | LastRunRule:
    """Build rule ``name`` at error level ``delta``.

    Options: ``horizon`` and ``two_sided`` for ``hoeffding-lastrun``; ``prior_strength``
    for ``mixture``/``anytime``. Unknown names list what exists.
    """
    if name not in RULES:
        raise HumevalError(f"unknown stopping rule '{name}'. {did_you_mean(name, RULES)}")
    cls = RULES[name]
    if cls is LastRunRule:
        return LastRunRule(delta, options.get("horizon"), two_sided=bool(options.get("two_sided", False)))
    if cls is BetaMixtureRule:
        rule = BetaMixtureRule(delta, options.get("prior_strength", DEFAULT_PRIOR_STRENGTH))
        if name == "anytime":
            rule.name = "anytime"
        return rule
    return cls(delta)
