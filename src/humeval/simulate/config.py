"""The settings of a simulated study, validated once (errors name the bad value)."""

from __future__ import annotations

from dataclasses import dataclass

from humeval._version import __version__
from humeval.errors import HumevalError
from humeval.stopping._validate import check_delta
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH

__all__ = ["SimulationConfig"]


@dataclass(frozen=True)
class SimulationConfig:
    """One cell of a simulation: difficulty, workers, horizon, iterations, delta.

    ``parity=True`` reproduces the authors' set-up: pool and request list from the legacy
    ``RandomState(seed)`` (see :func:`legacy_parity_inputs`), one request list shared by
    all iterations, Max-3 workers drawn with replacement. Otherwise every iteration draws
    its own requests (the statistically meaningful default).
    """

    mu: float = 0.25
    difficulty_var: float = 0.1
    capability: tuple[float, float] = (0.8, 1.0)
    workers: int = 100
    n_requests: int = 3500
    iterations: int = 1000
    delta: float = 0.001
    position_bias: float = 0.0
    spammer_share: float = 0.0
    adversarial_share: float = 0.0
    parity: bool = False
    prior_strength: float = DEFAULT_PRIOR_STRENGTH

    def __post_init__(self) -> None:
        check_delta(self.delta)
        lo, hi = self.capability
        if not (0.0 <= lo <= 1.0 and 0.0 <= hi <= 1.0):
            raise HumevalError(f"capability range must lie within [0, 1], got ({lo!r}, {hi!r})")
        if lo > hi:
            raise HumevalError(f"capability range: LOW must not exceed HIGH, got ({lo!r}, {hi!r})")
        if not -1.0 <= self.mu <= 1.0:
            raise HumevalError(f"difficulty mean mu must lie in [-1, 1], got {self.mu!r}")
        if not self.difficulty_var >= 0.0:
            raise HumevalError(f"difficulty variance must be >= 0, got {self.difficulty_var!r}")
        for name in ("workers", "n_requests", "iterations"):
            v = getattr(self, name)
            if isinstance(v, bool) or int(v) != v or v < 1:
                raise HumevalError(f"{name.replace('_', '-')} must be a positive integer, got {v!r}")
        for name in ("spammer_share", "adversarial_share"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise HumevalError(f"{name.replace('_', '-')} must lie in [0, 1], got {v!r}")
        if self.spammer_share + self.adversarial_share > 1.0:
            raise HumevalError(
                f"spammer share + adversarial share exceed 1: {self.spammer_share!r} + {self.adversarial_share!r}"
            )
        if not -1.0 <= self.position_bias <= 1.0:
            raise HumevalError(f"position bias must lie in [-1, 1], got {self.position_bias!r}")
        if self.parity and self.n_requests > 30000:
            raise HumevalError(f"parity mode uses the authors' list of 30000 requests; n-requests={self.n_requests} is larger")
        if self.parity and (self.spammer_share or self.adversarial_share or self.position_bias):
            raise HumevalError("parity mode reproduces the authors' model: no spammers, adversaries or position bias")

    def signature(self, seed: int, rules: str = "", strategies: str = "") -> str:
        """``humeval-simulate|mu:..|...|seed:..|version:..`` (every option that changes a number)."""
        lo, hi = self.capability
        parts = [
            "humeval-simulate",
            f"mu:{self.mu:g}", f"var:{self.difficulty_var:g}", f"cap:{lo:g}-{hi:g}", f"workers:{self.workers}",
            f"horizon:{self.n_requests}", f"iters:{self.iterations}", f"delta:{self.delta:g}",
        ]
        if self.position_bias:
            parts.append(f"bias:{self.position_bias:g}")
        if self.spammer_share:
            parts.append(f"spam:{self.spammer_share:g}")
        if self.adversarial_share:
            parts.append(f"adv:{self.adversarial_share:g}")
        parts.append(f"requests:{'parity' if self.parity else 'fresh'}")
        parts.append(f"prior:{self.prior_strength:g}")
        if rules:
            parts.append(f"rules:{rules}")
        if strategies:
            parts.append(f"strategies:{strategies}")
        parts += [f"seed:{seed}", f"version:{__version__}"]
        return "|".join(parts)
