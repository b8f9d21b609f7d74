"""``likert``: a k-point rating scale (integers 1..k) for one output.

Means with intervals, ANOVA or Kruskal-Wallis, the ICC, Krippendorff's alpha at the ordinal
level and Fleiss' kappa over the k points apply; the response distribution per system is charted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from humeval.tasks.base import (
    MISSING,
    RATING_STATISTICS,
    CriterionBase,
    InvalidValue,
    Scale,
    Statistic,
    TaskType,
    attention_fill,
    mark,
    show,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Likert", "LikertType"]

_ = mark


class Likert(CriterionBase):
    """A k-point rating scale."""

    type: Literal["likert"] = Field(description="Response type: k-point Likert scale (integers 1..k).")
    points: int = Field(5, ge=2, le=11, description="Number of scale points k (2-11); values are 1..k.")
    labels: list[str] = Field(
        default_factory=list,
        description="Labels: either one per point, or two (the lowest and highest point); empty for numbers only.",
    )

    @model_validator(mode="after")
    def _labels_fit(self) -> Likert:
        if self.labels and len(self.labels) not in (2, self.points):
            raise ValueError(
                f"labels has {len(self.labels)} entries; give 2 (end points) or {self.points} (one per point)"
            )
        return self


class LikertType(TaskType):
    name = "likert"
    model = Likert
    summary = "a k-point scale (integers 1..k) for one output"
    statistics = (*RATING_STATISTICS,
                  Statistic("Fleiss' kappa, response distribution", True, "the k points are categories"))

    def form_value(self, criterion: Any, form: Mapping[str, str], n_outputs: int) -> Any:
        text = form.get(criterion.name, "")
        if text == "":
            return MISSING
        # "²".isdigit() is true but int("²") fails: ASCII digits only
        return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else text

    def problem_text(self, criterion: Any, field: str, gettext: Callable[[str], str]) -> str:
        return gettext(_("Choose one of the points from 1 to %(max)s.")) % {"max": criterion.points}

    def attention_text(self, criterion: Mapping[str, Any], expected: Any, gettext: Callable[[str], str]) -> str:
        ask = gettext(_("This is an attention check. Please give the score %(value)s for the question: %(question)s"))
        return attention_fill(ask, criterion, 1 if expected is None else expected)

    def check(self, criterion: Any, value: Any, field: str, n_outputs: int, lengths: Sequence[int] | None) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= criterion.points:
            raise InvalidValue(field, f"expected an integer from 1 to {criterion.points}, got {show(value)}")
        return value

    def values_schema(self, criterion: Any) -> dict[str, Any]:
        return {"type": "integer", "minimum": 1, "maximum": criterion.points}

    def categories(self, criterion: Any) -> list[float] | None:
        return [float(v) for v in range(1, criterion.points + 1)]

    def bounds(self, criterion: Any, logged: bool) -> tuple[float, float] | None:
        return (1.0, float(criterion.points))

    def off_scale(self, criterion: Any, value: np.ndarray) -> tuple[np.ndarray, str]:
        import numpy as np

        return (value < 1) | (value > criterion.points) | (value != np.round(value)), f"integers 1..{criterion.points}"

    def agreement_level(self, logged: bool) -> str:
        return "ordinal"

    def scale(self, criterion: Any) -> Scale:
        return Scale(1, criterion.points, True)

    def shaped(self, criterion: Any, scores: np.ndarray) -> Any:
        return round(float(scores[0]))

    def check_answers(self, criterion: Any) -> tuple[Any, ...]:
        return tuple(range(1, criterion.points + 1))

    def check_request(self, criterion: Any, expected: Any) -> str:
        return f"give the score {expected}"

    def attention_answer(self, criterion: Any, expected: Any, shown: int) -> Any:
        return int(expected)

    def cheap_answer(self, criterion: Any, level: float, shown: int) -> Any:
        return 1 + round(level * (criterion.points - 1))

    def heds_scale(self, criterion: Any) -> tuple[Any, str, str]:
        labels = f" ({' / '.join(criterion.labels)})" if criterion.labels else ""
        return criterion.points, f"1-{criterion.points}{labels}", "Multiple-choice options"
