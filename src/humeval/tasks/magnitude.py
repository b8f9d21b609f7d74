"""``magnitude``: plain magnitude estimation, a positive number for one output relative to a standard output.

The standard is shown on every page with its score (the modulus). Scores are analysed on the
log scale when ``analysis.log_magnitude`` is on (ratios of judgements are what magnitude
estimation measures); then Krippendorff's alpha is at the interval level, else at the ratio level.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from humeval.tasks.base import (
    CONTINUOUS,
    RATING_STATISTICS,
    CriterionBase,
    Scale,
    StandardItem,
    Statistic,
    TaskType,
    attention_fill,
    mark,
    positive,
)
from humeval.wire import MAX_SCORE

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Magnitude", "MagnitudeType", "RelativeToStandard"]

_ = mark


class Magnitude(CriterionBase):
    """A positive number relative to a standard output with a fixed modulus (plain ME)."""

    type: Literal["magnitude"] = Field(description="Response type: magnitude estimation, one output per task.")
    standard: StandardItem = Field(description="The standard output shown on every page.")
    modulus: float = Field(100.0, gt=0, description="The score given to the standard output.")


class RelativeToStandard(TaskType):
    """What magnitude estimation (plain and rank-based) shares: positive scores relative to a standard."""

    relative_to_standard = True
    log_scale = True
    statistics = (*RATING_STATISTICS,
                  Statistic("geometric means (log scale)", True, "magnitude estimates are ratios to the standard"),
                  CONTINUOUS)

    def problem_text(self, criterion: Any, field: str, gettext: Callable[[str], str]) -> str:
        return gettext(_("Give a number greater than 0 and at most %(max)s.")) % {"max": f"{MAX_SCORE:.0f}"}

    def attention_text(self, criterion: Mapping[str, Any], expected: Any, gettext: Callable[[str], str]) -> str:
        ask = gettext(_("This is an attention check. Please give exactly the score of the standard (%(value)s) for "
                        "the question: %(question)s"))
        return attention_fill(ask, criterion, criterion.get("modulus") if expected is None else expected)

    def check(self, criterion: Any, value: Any, field: str, n_outputs: int, lengths: Sequence[int] | None) -> Any:
        return positive(value, field)

    def values_schema(self, criterion: Any) -> dict[str, Any]:
        return {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_SCORE}

    def bounds(self, criterion: Any, logged: bool) -> tuple[float, float] | None:
        return None if logged else (0.0, float("inf"))

    def off_scale(self, criterion: Any, value: np.ndarray) -> tuple[np.ndarray, str]:
        return value <= 0, "positive numbers"

    def agreement_level(self, logged: bool) -> str:
        return "interval" if logged else "ratio"

    def scale(self, criterion: Any) -> Scale:
        import numpy as np

        return Scale(np.log(criterion.modulus / 4), np.log(criterion.modulus * 4), False, log=True)

    def check_answers(self, criterion: Any) -> tuple[Any, ...]:
        # a free positive number has no cheap default to click, and typing the modulus everywhere is straight-lining
        return (float(criterion.modulus),)

    def check_request(self, criterion: Any, expected: Any) -> str:
        return f"give exactly the score of the standard ({expected:g})"

    def attention_answer(self, criterion: Any, expected: Any, shown: int) -> Any:
        return float(expected)

    def cheap_answer(self, criterion: Any, level: float, shown: int) -> Any:
        modulus = float(criterion.modulus)
        return modulus * 2.0 ** (4 * level - 2) if level else modulus  # modulus/4 .. 4 x modulus

    def heds_scale(self, criterion: Any) -> tuple[Any, str, str]:
        return ("continuous", f"positive numbers relative to a standard scored {criterion.modulus:g}",
                "Other: a number entry box")


class MagnitudeType(RelativeToStandard):
    name = "magnitude"
    model = Magnitude
    summary = "magnitude estimation: a positive number for one output, relative to a standard output"
