"""Strategy names (``one``, ``fixed``, ``max3``, ``majorityN``) and the builder."""

from __future__ import annotations

import re

from humeval.errors import HumevalError, did_you_mean
from humeval.policies.base import LabellingStrategy
from humeval.policies.majority import Majority
from humeval.policies.max_three import MaxThree
from humeval.policies.single import FixedWorker, OneWorker

__all__ = ["STRATEGIES", "get_strategy", "parse_strategies"]

#: the names the CLI lists; ``majorityN`` works for every odd N
STRATEGIES = ("one", "fixed", "max3", "majority3", "majority5", "majority7")

_MAJ = re.compile(r"^majority(\d+)$")


def get_strategy(name: str) -> LabellingStrategy:
    """Build a strategy from its name (``majority9`` etc. for any odd N)."""
    key = name.strip().lower()
    if key == "one":
        return OneWorker()
    if key == "fixed":
        return FixedWorker()
    if key == "max3":
        return MaxThree()
    m = _MAJ.match(key)
    if m:
        return Majority(int(m.group(1)))
    raise HumevalError(f"unknown labelling strategy '{name}'. {did_you_mean(key, STRATEGIES)} (majorityN for any odd N)")


def parse_strategies(spec: str) -> list[LabellingStrategy]:
    """``"one,max3,majority5"`` -> strategies, in order, without duplicates."""
    names = [s for s in (p.strip() for p in spec.split(",")) if s]
    if not names:
        raise HumevalError(f"no labelling strategy given in {spec!r}. Available: {', '.join(STRATEGIES)}")
    seen: dict[str, LabellingStrategy] = {}
    for n in names:
        st = get_strategy(n)
        seen.setdefault(st.name, st)
    return list(seen.values())
