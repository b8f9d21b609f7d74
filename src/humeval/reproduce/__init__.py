"""Paper reproductions: ``humeval reproduce NAME``.

Each reproduction is a function returning :class:`Reproduction` (rows of
``key, paper, ours, note``). The registry maps names to ``module:function`` so that
nothing is imported until a reproduction is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from humeval.errors import HumevalError, did_you_mean

__all__ = ["REPRODUCTIONS", "Reproduction", "Row", "get_reproduction"]


@dataclass(frozen=True)
class Row:
    """One compared number: the paper's value, ours, and what explains a difference."""

    key: str
    paper: Any
    ours: Any
    note: str = ""
    #: whether ours equals the paper's value (None: not an exact comparison)
    match: bool | None = None


@dataclass(frozen=True)
class Reproduction:
    """The rows of one reproduction plus the settings that produced them."""

    name: str
    rows: list[Row]
    settings: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        exact = any(r.match is not None for r in self.rows)
        rows = [{"key": r.key, "paper": r.paper, "ours": r.ours} | ({"match": r.match} if exact else {}) | {"note": r.note}
                for r in self.rows]
        return {"name": self.name, "settings": self.settings, "rows": rows}


REPRODUCTIONS: dict[str, str] = {
    "dhe-table3": "humeval.reproduce.dhe:table3",
    "dhe-table6": "humeval.reproduce.dhe:table6",
    "casf": "humeval.reproduce.casf:casf",
    "ppi": "humeval.reproduce.ppi:ppi",
    "ppi-stopping": "humeval.reproduce.ppi_stopping:ppi_stopping_reproduction",
    "rankme": "humeval.reproduce.rankme:rankme",
    "thomson-design": "humeval.reproduce.thomson:thomson_design",
    "thomson-dummy": "humeval.reproduce.thomson:thomson_dummy",
}


def get_reproduction(name: str) -> Callable[..., Reproduction]:
    """The function behind reproduction ``name`` (imported on demand)."""
    if name not in REPRODUCTIONS:
        raise HumevalError(f"reproduce: unknown reproduction '{name}'. {did_you_mean(name, REPRODUCTIONS)}")
    module, func = REPRODUCTIONS[name].split(":")
    return getattr(importlib.import_module(module), func)
