"""Result records of a simulation (uniform fields, JSON-ready)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from humeval.simulate.config import SimulationConfig

__all__ = ["SimulationReport", "StrategyResult"]


@dataclass(frozen=True)
class StrategyResult:
    """Effort of one strategy under one rule, over all iterations.

    ``mean_effort`` averages labels until the decision over *all* iterations (an
    undecided iteration counts every label up to the horizon, as in the paper's Table 3);
    ``ci_low``/``ci_high`` are its 99% percentile bootstrap CI. ``mean_effort_decided``
    averages decided iterations only (the paper's Table 6 convention). ``wrong_share``
    counts decisions for the worse system (any decision when mu = 0).
    """

    strategy: str
    rule: str
    delta: float
    mu: float
    iterations: int
    mean_effort: float
    ci_low: float
    ci_high: float
    decided_share: float
    wrong_share: float
    mean_requests: float
    mean_effort_decided: float
    label_share: float
    wald_bound: float | None = None
    method: str = "percentile bootstrap 99%, 2000 resamples"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SimulationReport:
    """All results of one simulated configuration plus the signature that produced them."""

    config: SimulationConfig
    seed: int
    results: list[StrategyResult]
    signature: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        cfg = asdict(self.config)
        cfg["capability"] = list(self.config.capability)
        return {
            "results": [r.to_dict() for r in self.results],
            "config": cfg,
            "seed": self.seed,
            "signature": self.signature,
        }

    def result(self, strategy: str, rule: str) -> StrategyResult:
        for r in self.results:
            if r.strategy == strategy and r.rule == rule:
                return r
        raise KeyError(f"no result for strategy {strategy!r} and rule {rule!r}")
