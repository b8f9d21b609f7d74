"""The stopping rules by name (:data:`RULES`), and the one function that builds a rule from a name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from humeval.errors import ProtocolError, did_you_mean
from humeval.registry import Registry
from humeval.stopping.base import BoundaryRule
from humeval.stopping.hoeffding import HoeffdingRule
from humeval.stopping.lastrun import LastRunRule
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH, BetaMixtureRule, prior_strength_for
from humeval.stopping.normal_mixture import NormalMixtureRule, rho_for
from humeval.stopping.union_hoeffding import UnionHoeffdingRule

__all__ = ["ANYTIME_VALID", "RULES", "TUNABLE", "RuleKind", "RuleOptions", "get_rule", "rule_problems"]


@dataclass(frozen=True)
class RuleOptions:
    """What a rule is built with besides its error level; a rule reads the options that apply to it."""

    #: ``hoeffding-lastrun``: the fixed horizon it looks ahead to (``stopping.max_judgements``)
    horizon: int | None = None
    #: ``hoeffding-lastrun``: test both directions at the horizon
    two_sided: bool = False
    #: ``mixture``/``anytime``: the Beta(a, a) prior's a (``tuned_for`` overrides it)
    prior_strength: float = DEFAULT_PRIOR_STRENGTH
    #: mixtures: the number of judgements at which the boundary is tightest (``stopping.tuned_for``)
    tuned_for: int | None = None

    @classmethod
    def of(cls, options: dict[str, Any]) -> RuleOptions:
        """The options named in ``options``; an unknown option is an error that names the valid ones."""
        valid = [f.name for f in fields(cls)]
        for key in options:
            if key not in valid:
                raise ProtocolError(f"stopping: unknown rule option {key!r}. {did_you_mean(key, valid)}")
        return cls(**{k: v for k, v in options.items() if v is not None})


Rule = BoundaryRule | LastRunRule


@dataclass(frozen=True)
class RuleKind:
    """A registered stopping rule: how it is built and what it guarantees."""

    build: Callable[[str, float, RuleOptions], Rule]
    #: when it decides A after n requests with S of them labelled "A" (X̄ = S/n), as the docs show it
    decides: str
    #: the chance that it ever decides wrongly, as the docs show it
    errs: str
    #: its probability of ever deciding wrongly is at most delta
    anytime_valid: bool
    #: ``stopping.tuned_for`` applies to it
    tunable: bool = False
    #: it needs a fixed horizon (``stopping.max_judgements``)
    needs_horizon: bool = False


def _mixture(name: str, delta: float, o: RuleOptions) -> Rule:
    strength = o.prior_strength if o.tuned_for is None else prior_strength_for(int(o.tuned_for), delta)
    return BetaMixtureRule(delta, strength, name=name)


_VILLE = "≤ δ (Ville's inequality)"
_BETA = "2ⁿ B(a+S, a+n−S)/B(a,a) ≥ 1/δ and S > n/2"
RULES: Registry[RuleKind] = Registry("stopping rule", "stopping.rule", error=ProtocolError)
RULES.add("hoeffding", RuleKind(lambda _, d, o: HoeffdingRule(d), "X̄ − √(ln(1/δ)/2n) > ½ (B symmetric; first passage)",
                                "**more than δ** (see below)", anytime_valid=False),
          summary="the paper's rule as described (a fixed-n bound); for reproducing the paper")
RULES.add("hoeffding-lastrun", RuleKind(lambda _, d, o: LastRunRule(d, o.horizon, two_sided=bool(o.two_sided)),
                                        "start of the *final* run with X̄ − t > ½ up to a fixed horizon",
                                        "not controlled; looks into the future", anytime_valid=False, needs_horizon=True),
          summary="the authors' code; for reproducing their tables only")
RULES.add("hoeffding-union", RuleKind(lambda _, d, o: UnionHoeffdingRule(d), "X̄ − √(ln(2n(n+1)/δ)/2n) > ½",
                                      "≤ δ (union bound over n)", anytime_valid=True),
          summary="Hoeffding with a union bound over n: a simple, conservative baseline")
RULES.add("anytime", RuleKind(_mixture, _BETA, _VILLE, anytime_valid=True, tunable=True),
          summary="the beta-binomial mixture martingale: **every real study**")
RULES.add("mixture", RuleKind(_mixture, _BETA, _VILLE, anytime_valid=True, tunable=True),
          summary="`anytime` under its own name in results")
RULES.add("normal-mixture", RuleKind(lambda _, d, o: NormalMixtureRule(d, None if o.tuned_for is None
                                                                         else rho_for(int(o.tuned_for), d)),
                                     "\\|S − n/2\\| ≥ √((n/4 + ρ)(2 ln(1/δ) + ln((n/4 + ρ)/ρ))), S > n/2", _VILLE,
                                     anytime_valid=True, tunable=True),
          summary="the same guarantee, as Robbins' normal mixture")

#: rules whose probability of ever deciding wrongly is at most delta
ANYTIME_VALID = frozenset(e.name for e in RULES.entries() if e.value.anytime_valid)
#: rules with a tuning (``stopping.tuned_for``)
TUNABLE = frozenset(e.name for e in RULES.entries() if e.value.tunable)


def rule_problems(name: str, delta: float, horizon: int | None, tuned_for: int | None = None) -> list[str]:
    """What keeps rule ``name`` from deciding live, judgement by judgement (empty list: it can).

    The one place that knows each rule's parameters: ``validate`` and ``lock`` report these,
    and :func:`get_rule` refuses them, so a study never reaches collection with a rule that
    cannot run.
    """
    if name not in RULES:
        return [f"stopping.rule: unknown rule '{name}'. {did_you_mean(name, RULES)}"]
    kind = RULES.get(name)
    problems = []
    if not 0 < delta < 0.5:
        problems.append(f"stopping.delta: must be in (0, 0.5), got {delta!r}")
    if kind.needs_horizon and horizon is None:
        problems.append(
            f"stopping.max_judgements: rule '{name}' (the authors' code) looks ahead to a fixed horizon; "
            "set stopping.max_judgements, or use an anytime-valid rule (anytime, mixture, hoeffding-union)"
        )
    if tuned_for is not None and not kind.tunable:
        problems.append(f"stopping.tuned_for: rule '{name}' has no tuning; it applies to {', '.join(sorted(TUNABLE))}")
    if horizon is not None and (int(horizon) != horizon or horizon < 1):
        problems.append(f"stopping.max_judgements: must be a positive integer, got {horizon!r}")
    return problems


def get_rule(name: str, delta: float, **options: Any) -> Rule:
    """Build rule ``name`` at error level ``delta`` with the :class:`RuleOptions` ``options``.

    Each rule reads the options that apply to it (``horizon`` and ``two_sided`` for
    ``hoeffding-lastrun``, ``prior_strength`` for ``mixture``/``anytime``, ``tuned_for`` for the
    mixtures); an unknown option, or an unknown name, is an error that lists what exists.
    """
    kind = RULES.get(name)
    return kind.build(name, delta, RuleOptions.of(options))
