"""The labelling strategies by name (:data:`STRATEGIES`: ``one``, ``fixed``, ``max3``, ``majorityN``) and the builder."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from humeval.errors import HumevalError
from humeval.policies.base import LabellingStrategy
from humeval.policies.majority import Majority
from humeval.policies.max_three import MaxThree
from humeval.policies.single import FixedWorker, OneWorker
from humeval.registry import Registry

__all__ = ["STRATEGIES", "StrategyKind", "get_strategy", "parse_strategies"]

@dataclass(frozen=True)
class StrategyKind:
    """A registered labelling strategy: its builder, given the name as written, and what the docs say of it."""

    build: Callable[[str], LabellingStrategy]
    #: labels it asks per request
    labels: str
    #: when to use it
    when: str


#: strategy name -> kind (``majorityN`` stands for every odd N)
STRATEGIES: Registry[StrategyKind] = Registry("labelling strategy", "--strategy", error=HumevalError)
STRATEGIES.add("one", StrategyKind(lambda _: OneWorker(), "1", "the default: cheapest for a decision, fully parallel"),
               summary="One Worker")
STRATEGIES.add("fixed", StrategyKind(lambda _: FixedWorker(), "1", "only in the lab; one worker's bias decides the study"),
               summary="Fixed Worker")
STRATEGIES.add("max3", StrategyKind(lambda _: MaxThree(), "2 or 3",
                                    "a per-request label at about 2.3 labels; cheaper than majority"),
               summary="Max Three: two labels, a third when they disagree")
STRATEGIES.add("majorityN", StrategyKind(lambda name: Majority(int(name.removeprefix("majority"))), "N",
                                         "when per-request labels are needed (a gold set), not to decide A vs B"),
               summary="N-worker majority, N odd (`majority3`, `majority5`, ...)")

_MAJ = re.compile(r"^majority\d+$")


def get_strategy(name: str) -> LabellingStrategy:
    """Build a strategy from its name (``majority9`` etc. for any odd N); an unknown name lists what exists."""
    key = name.strip().lower()
    return STRATEGIES.get("majorityN" if _MAJ.match(key) else key).build(key)


def parse_strategies(spec: str) -> list[LabellingStrategy]:
    """``"one,max3,majority5"`` -> strategies, in order, without duplicates."""
    names = [s for s in (p.strip() for p in spec.split(",")) if s]
    if not names:
        raise HumevalError(f"no labelling strategy given in {spec!r}. Available: {STRATEGIES.help_text()}")
    seen: dict[str, LabellingStrategy] = {}
    for n in names:
        st = get_strategy(n)
        seen.setdefault(st.name, st)
    return list(seen.values())
