"""What every sampler returns, and the registry of samplers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol as TypingProtocol

import pandas as pd

from humeval.errors import DataError

__all__ = ["Sampler", "Selection", "sample_size"]


@dataclass(frozen=True)
class Selection:
    """Selected item ids in selection order, with the phase each was selected in (0 = first)."""

    item_ids: list[str]
    phases: list[int]

    def to_json(self) -> dict[str, list]:
        return {"selected": list(self.item_ids), "phases": list(self.phases)}


class Sampler(TypingProtocol):
    """A subset-selection strategy: ``select`` returns ``size`` distinct item ids."""

    name: str

    def select(self, outputs: pd.DataFrame, size: int, seed: int) -> Selection: ...


def sample_size(n_items: int, rate: float) -> int:
    """Number of items a rate selects: ``ceil(rate * n)`` rounded to the nearest whole item, at least 1."""
    if not 0 < rate <= 1:
        raise DataError(f"sampling.rate: must be in (0, 1], got {rate}")
    if n_items < 1:
        raise DataError("sampling: there are no items to select from")
    return max(1, min(n_items, int(math.floor(rate * n_items + 0.5))))
