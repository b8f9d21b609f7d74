"""``slider``: a bounded continuous scale [min, max] for one output.

Means with intervals, ANOVA or Kruskal-Wallis, the ICC and Krippendorff's alpha at the interval
level apply; Fleiss' kappa does not (the responses are continuous).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from humeval.tasks.base import (
    CONTINUOUS,
    RATING_STATISTICS,
    CriterionBase,
    InvalidValue,
    Scale,
    TaskType,
    attention_fill,
    mark,
    number,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RANGE_POINTS", "Slider", "SliderType"]

_ = mark

#: the share of its range at which a ``slider`` or ``esa`` check asks to be set (its ends, quarters and middle)
RANGE_POINTS = (0.0, 0.25, 0.5, 0.75, 1.0)


def range_checks(low: float, high: float) -> tuple[float, ...]:
    """The answers an attention check on the range [low, high] may ask for (ends, quarters, middle)."""
    return tuple(dict.fromkeys(float(f"{low + q * (high - low):g}") for q in RANGE_POINTS))


class Slider(CriterionBase):
    """A bounded continuous scale."""

    type: Literal["slider"] = Field(description="Response type: bounded continuous slider.")
    min: float = Field(0.0, description="Lowest value of the slider.")
    max: float = Field(100.0, description="Highest value of the slider.")
    low_label: str = Field("", description="Label shown at the low end.")
    high_label: str = Field("", description="Label shown at the high end.")

    @model_validator(mode="after")
    def _bounds(self) -> Slider:
        if not self.max > self.min:
            raise ValueError(f"max ({self.max}) must be greater than min ({self.min})")
        return self


class SliderType(TaskType):
    name = "slider"
    model = Slider
    summary = "a bounded continuous scale [min, max] for one output"
    statistics = (*RATING_STATISTICS, CONTINUOUS)

    def problem_text(self, criterion: Any, field: str, gettext: Callable[[str], str]) -> str:
        return gettext(_("Give a number from %(min)s to %(max)s.")) % {"min": f"{criterion.min:g}",
                                                                        "max": f"{criterion.max:g}"}

    def attention_text(self, criterion: Mapping[str, Any], expected: Any, gettext: Callable[[str], str]) -> str:
        ask = gettext(_("This is an attention check. Please set the slider to %(value)s for the question: "
                        "%(question)s"))
        return attention_fill(ask, criterion, criterion.get("min") if expected is None else expected)

    def check(self, criterion: Any, value: Any, field: str, n_outputs: int, lengths: Sequence[int] | None) -> Any:
        x = number(value, field)
        if not criterion.min <= x <= criterion.max:
            raise InvalidValue(field, f"expected a number from {criterion.min:g} to {criterion.max:g}, got {value!r}")
        return x

    def values_schema(self, criterion: Any) -> dict[str, Any]:
        return {"type": "number", "minimum": criterion.min, "maximum": criterion.max}

    def bounds(self, criterion: Any, logged: bool) -> tuple[float, float] | None:
        return (float(criterion.min), float(criterion.max))

    def off_scale(self, criterion: Any, value: np.ndarray) -> tuple[np.ndarray, str]:
        return (value < criterion.min) | (value > criterion.max), f"{criterion.min:g}..{criterion.max:g}"

    def scale(self, criterion: Any) -> Scale:
        return Scale(criterion.min, criterion.max, False)

    def check_answers(self, criterion: Any) -> tuple[Any, ...]:
        return range_checks(criterion.min, criterion.max)

    def check_request(self, criterion: Any, expected: Any) -> str:
        return f"set the slider to {expected:g}"

    def attention_answer(self, criterion: Any, expected: Any, shown: int) -> Any:
        return float(expected)

    def cheap_answer(self, criterion: Any, level: float, shown: int) -> Any:
        return float(criterion.min + level * (criterion.max - criterion.min))

    def heds_scale(self, criterion: Any) -> tuple[Any, str, str]:
        return "continuous", f"{criterion.min:g}-{criterion.max:g}", "Slider"
