"""``rankme``: rank-based magnitude estimation, all outputs of an item side by side, each scored against the standard.

The value is a list with one positive number per output, in display order; each is one row of
the long table. The outputs are judged against each other (HEDS "relative"), and analysed as
magnitude estimates (:mod:`humeval.tasks.magnitude`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from humeval.tasks.base import (
    CriterionBase,
    InvalidValue,
    StandardItem,
    form_number,
    positive,
    show,
)
from humeval.tasks.magnitude import RelativeToStandard
from humeval.wire import MAX_SCORE

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RankME", "RankMEType"]


class RankME(CriterionBase):
    """Several outputs side by side, each scored relative to the standard (rank-based ME)."""

    type: Literal["rankme"] = Field(description="Response type: rank-based magnitude estimation, all outputs of an item side by side.")
    standard: StandardItem = Field(description="The standard output shown on every page.")
    modulus: float = Field(100.0, gt=0, description="The score given to the standard output.")


class RankMEType(RelativeToStandard):
    name = "rankme"
    model = RankME
    summary = "rank-based magnitude estimation: all outputs of an item side by side, each a positive number"
    family = "multi"
    scores_each_output = True
    relative = True

    def form_value(self, criterion: Any, form: Mapping[str, str], n_outputs: int) -> Any:
        return [form_number(form.get(f"{criterion.name}.{i}", "")) for i in range(n_outputs)]

    def problem_input(self, criterion: Any, index: str | None, part: str | None) -> str:
        return f"{criterion.name}.{index or 0}"

    def check(self, criterion: Any, value: Any, field: str, n_outputs: int, lengths: Sequence[int] | None) -> Any:
        if not isinstance(value, list) or len(value) != n_outputs:
            raise InvalidValue(field, f"expected a list of {n_outputs} positive numbers (one per output), got {show(value)}")
        return [positive(x, f"{field}[{i}]") for i, x in enumerate(value)]

    def values_schema(self, criterion: Any) -> dict[str, Any]:
        return {"type": "array", "minItems": 1, "items": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_SCORE}}

    def long_rows(self, criterion: Any, value: Any, display: Sequence[str], base: dict[str, Any],
                  seq: int | None) -> list[dict[str, Any]]:
        return [base | {"criterion": criterion.name, "system": system, "system_b": "", "position": pos,
                        "value": float(score), "choice": ""}
                for pos, (system, score) in enumerate(zip(display, value, strict=True))]

    def shaped(self, criterion: Any, scores: np.ndarray) -> Any:
        return [float(x) for x in scores]

    def attention_answer(self, criterion: Any, expected: Any, shown: int) -> Any:
        return [float(expected)] * shown

    def cheap_answer(self, criterion: Any, level: float, shown: int) -> Any:
        return [super().cheap_answer(criterion, level, shown)] * shown

