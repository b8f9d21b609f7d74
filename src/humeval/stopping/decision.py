"""What a stopping rule says: a decision with its reason, for one study or many paths."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["Decision", "Outcome", "PathDecisions"]

Outcome = Literal["A", "B", "continue"]


@dataclass(frozen=True)
class Decision:
    """The state of a sequential comparison after ``n`` outcomes.

    ``outcome`` is ``"A"`` (system A is better), ``"B"``, or ``"continue"``.
    ``estimate`` is the share of outcomes for A; ``threshold_a`` / ``threshold_b`` are
    the shares at which the rule decides A / B at this ``n`` (its current bound in
    proportion scale); ``statistic`` is the rule's own evidence (a lower bound, a log
    likelihood ratio) and ``reason`` says in words why the rule decided or continues.
    """

    outcome: Outcome
    n: int
    successes: int
    estimate: float
    threshold_a: float
    threshold_b: float
    statistic: float
    rule: str
    delta: float
    reason: str

    @property
    def decided(self) -> bool:
        return self.outcome != "continue"


@dataclass(frozen=True)
class PathDecisions:
    """Decisions of one rule over many simulated paths (vectorised form).

    ``n[i]`` is the number of requests after which path ``i`` stopped (0: never decided
    within the horizon) and ``outcome[i]`` is +1 (A), -1 (B) or 0 (no decision).
    """

    n: np.ndarray
    outcome: np.ndarray

    @property
    def decided(self) -> np.ndarray:
        decided: np.ndarray = self.outcome != 0
        return decided
