"""The one result record of humeval.stats: :class:`Estimate`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Estimate", "to_frame"]

NAN = float("nan")


@dataclass(frozen=True, eq=False)
class Estimate:
    """A number with its uncertainty: what every function in :mod:`humeval.stats` returns.

    Fields that do not apply are ``nan`` (e.g. ``p_value`` of an agreement coefficient
    without a test). ``extra`` holds method-specific values (test statistic, degrees of
    freedom, seed, number of bootstrap samples, ...); it is read-only.

    Examples:
        >>> from humeval.stats import Estimate
        >>> r = Estimate(0.4, ci_low=0.1, ci_high=0.7, p_value=0.01, n=30, method="example", extra={"t": 2.8})
        >>> r.ci, r.significant(0.05), r.significant(0.001)
        ((0.1, 0.7), True, False)
        >>> r.to_dict()
        {'estimate': 0.4, 'ci_low': 0.1, 'ci_high': 0.7, 'p_value': 0.01, 'n': 30, 'method': 'example', 't': 2.8}
    """

    estimate: float
    ci_low: float = NAN
    ci_high: float = NAN
    p_value: float = NAN
    n: int = 0
    method: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("estimate", "ci_low", "ci_high", "p_value"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "n", int(self.n))
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    def __eq__(self, other: object) -> bool:
        """Field-wise equality where ``nan == nan`` (so identical results compare equal)."""
        if not isinstance(other, Estimate):
            return NotImplemented
        for name in ("estimate", "ci_low", "ci_high", "p_value"):
            a, b = getattr(self, name), getattr(other, name)
            if not (a == b or (math.isnan(a) and math.isnan(b))):
                return False
        return (self.n, self.method, dict(self.extra)) == (other.n, other.method, dict(other.extra))

    __hash__ = None  # type: ignore[assignment]  # extra is a mapping: records are not hashable

    @property
    def ci(self) -> tuple[float, float]:
        """``(ci_low, ci_high)``."""
        return (self.ci_low, self.ci_high)

    def significant(self, alpha: float = 0.05) -> bool:
        """True when ``p_value < alpha`` (False when there is no p-value)."""
        return not math.isnan(self.p_value) and self.p_value < alpha

    def to_dict(self) -> dict[str, Any]:
        """A flat, JSON-friendly dict (``extra`` keys prefixed with nothing, after the fields)."""
        out: dict[str, Any] = {
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "n": self.n,
            "method": self.method,
        }
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out


def to_frame(results: Iterable[Estimate] | Mapping[str, Estimate]) -> pd.DataFrame:
    """Tabulate results (one row each; a mapping's keys become the index).

    Examples:
        >>> from humeval.stats import Estimate, to_frame
        >>> table = to_frame({"A": Estimate(0.5, n=10), "B": Estimate(0.25, n=12)})
        >>> table[["estimate", "n"]]
           estimate   n
        A      0.50  10
        B      0.25  12
    """
    import pandas as pd

    if isinstance(results, Mapping):
        return pd.DataFrame([r.to_dict() for r in results.values()], index=list(results.keys()))
    return pd.DataFrame([r.to_dict() for r in results])
