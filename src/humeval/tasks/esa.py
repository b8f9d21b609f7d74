"""``esa``: error span annotation (ESA, as in the WMT campaigns) in one output, then a 0-100 score.

The value is ``{"score": number in [0, 100], "spans": [{"start", "end", "severity"}, ...]}``:
character offsets into the output's source text (0 <= start < end <= its length), severity
``minor`` or ``major``, at most ``max_spans`` spans, none overlapping. The score is analysed
as a rating (:mod:`humeval.tasks.slider`'s statistics on 0-100); the spans give error counts,
a weighted error score per system and span agreement. The spans are the long table's ``spans``
column (JSON).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from humeval.tasks.base import (
    CONTINUOUS,
    MISSING,
    RATING_STATISTICS,
    CriterionBase,
    InvalidValue,
    Scale,
    Statistic,
    TaskType,
    attention_fill,
    mark,
    number,
    show,
)
from humeval.tasks.slider import range_checks

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["ESA", "ESAType", "check_spans", "esa_value"]

_ = mark


class ESA(CriterionBase):
    """Error span annotation (ESA, as in the WMT campaigns): mark error spans in one output, each
    minor or major, then give a 0-100 score. The output is shown rendered in its format (text,
    Markdown, a chat); spans are character offsets into the output's source text."""

    type: Literal["esa"] = Field(description="Response type: error spans (minor/major) in one output, then a 0-100 score.")
    minor_weight: float = Field(1.0, ge=0, description="Weight of a minor error in the MQM-style weighted error score.")
    major_weight: float = Field(5.0, ge=0, description="Weight of a major error in the MQM-style weighted error score.")
    max_spans: int = Field(50, ge=1, le=500, description="Most error spans a participant may mark in one output.")
    low_anchor: str = Field(
        "", description="What a score of 0 means, shown as \"Score from 0 (low_anchor) to 100 (high_anchor)\" "
        "(e.g. `no meaning preserved` for a translation, `not helpful at all` for an answer); your own text, shown "
        "as written. Empty: humeval's neutral `worst`, in the study's language.")
    high_anchor: str = Field(
        "", description="What a score of 100 means (e.g. `perfect`); your own text, shown as written. Empty: "
        "humeval's neutral `best`, in the study's language.")


def esa_value(form: Mapping[str, str], name: str) -> Any:
    """An ``esa`` answer from the task form: ``{name}.score`` and the JSON list ``{name}.spans``;
    what cannot be read is passed on as given, so the store's check names the problem."""
    score_text = form.get(f"{name}.score", "")
    try:
        score: Any = float(score_text)
    except ValueError:
        score = score_text or None
    try:
        spans = json.loads(form.get(f"{name}.spans", "") or "[]")
    except json.JSONDecodeError:
        spans = form.get(f"{name}.spans", "")
    if score is None:
        return None  # missing: the store says "required"
    return {"score": score, "spans": spans}


def check_spans(v: Any, field: str, length: int | None, most: int) -> list[dict[str, Any]]:
    """Error spans checked (integer offsets within the output, minor or major, at most ``most``, none
    overlapping) and sorted by position."""
    if not isinstance(v, list) or len(v) > most:
        raise InvalidValue(field, f"expected a list of at most {most} spans {{start, end, severity}}, got {show(v)}")
    spans = []
    for i, span in enumerate(v):
        where = f"{field}[{i}]"
        if not isinstance(span, dict) or set(span) != {"start", "end", "severity"}:
            raise InvalidValue(where, f"expected {{start, end, severity}}, got {show(span)}")
        start, end, severity = span["start"], span["end"], span["severity"]
        if any(isinstance(x, bool) or not isinstance(x, int) for x in (start, end)) or not 0 <= start < end:
            raise InvalidValue(where, f"expected integer offsets 0 <= start < end, got start={start!r}, end={end!r}")
        if length is not None and end > length:
            raise InvalidValue(where, f"end {end} is past the end of the output ({length} characters)")
        if severity not in ("minor", "major"):
            raise InvalidValue(where, f"severity: expected minor or major, got {show(severity)}")
        spans.append({"start": start, "end": end, "severity": severity})
    spans.sort(key=lambda s: (s["start"], s["end"]))
    for a, b in pairwise(spans):
        if b["start"] < a["end"]:
            raise InvalidValue(field, f"spans overlap: [{a['start']}, {a['end']}) and [{b['start']}, {b['end']})")
    return spans


class ESAType(TaskType):
    name = "esa"
    model = ESA
    summary = "error spans (minor / major) marked in one output, then a 0-100 score"
    marks_spans = True
    statistics = (*RATING_STATISTICS,
                  Statistic("error counts and weighted error score per system", True, "the spans mark each error"),
                  Statistic("span agreement", True, "several participants mark spans in the same output"), CONTINUOUS)

    def form_value(self, criterion: Any, form: Mapping[str, str], n_outputs: int) -> Any:
        value = esa_value(form, criterion.name)
        return MISSING if value is None else value

    def problem_input(self, criterion: Any, index: str | None, part: str | None) -> str:
        return f"{criterion.name}.{part or 'score'}"

    def problem_text(self, criterion: Any, field: str, gettext: Callable[[str], str]) -> str:
        if field.endswith(".spans"):
            return gettext(_("The errors marked could not be read. Please mark them again."))
        return gettext(_("Give a score from 0 to 100."))

    def attention_text(self, criterion: Mapping[str, Any], expected: Any, gettext: Callable[[str], str]) -> str:
        ask = gettext(_("This is an attention check. Please mark no error and give the score %(value)s for the "
                        "question: %(question)s"))
        return attention_fill(ask, criterion, 0 if expected is None else expected)

    def check(self, criterion: Any, value: Any, field: str, n_outputs: int, lengths: Sequence[int] | None) -> Any:
        if not isinstance(value, dict) or set(value) != {"score", "spans"}:
            raise InvalidValue(field, f"expected {{score, spans}}, got {show(value)}")
        score = number(value["score"], f"{field}.score")
        if not 0 <= score <= 100:
            raise InvalidValue(f"{field}.score", f"expected a number from 0 to 100, got {value['score']!r}")
        return {"score": score, "spans": check_spans(value["spans"], f"{field}.spans",
                                                     lengths[0] if lengths else None, criterion.max_spans)}

    def values_schema(self, criterion: Any) -> dict[str, Any]:
        # a 0-100 score and error spans as character offsets into the output's source text
        span = {"type": "object", "required": ["start", "end", "severity"], "additionalProperties": False,
                "properties": {"start": {"type": "integer", "minimum": 0}, "end": {"type": "integer", "minimum": 1},
                               "severity": {"type": "string", "enum": ["minor", "major"]}}}
        return {"type": "object", "required": ["score"], "additionalProperties": False,
                "properties": {"score": {"type": "number", "minimum": 0, "maximum": 100},
                               "spans": {"type": "array", "items": span, "maxItems": criterion.max_spans}}}

    def long_rows(self, criterion: Any, value: Any, display: Sequence[str], base: dict[str, Any],
                  seq: int | None) -> list[dict[str, Any]]:
        return [base | {"criterion": criterion.name, "system": display[0], "system_b": "", "position": 0,
                        "value": float(value["score"]), "choice": "",
                        "spans": json.dumps(value["spans"], separators=(",", ":"))}]

    def span_penalties(self, criterion: Any, frame: pd.DataFrame) -> np.ndarray:
        from humeval.stats.spans import error_counts

        counts = error_counts(frame)
        return (criterion.minor_weight * counts["minor"] + criterion.major_weight * counts["major"]).to_numpy(float)

    def penalty_label(self, criterion: Any) -> str:
        return f"weighted errors per output ({criterion.minor_weight:g} x minor + {criterion.major_weight:g} x major)"

    def with_spans(self, criterion: Any, value: Any, scores: np.ndarray,
                   draw: Callable[[float], list[dict[str, Any]]]) -> Any:
        return value | {"spans": draw(value["score"])}

    def bounds(self, criterion: Any, logged: bool) -> tuple[float, float] | None:
        return (0.0, 100.0)

    def off_scale(self, criterion: Any, value: np.ndarray) -> tuple[np.ndarray, str]:
        return (value < 0) | (value > 100), "0..100"

    def scale(self, criterion: Any) -> Scale:
        return Scale(0.0, 100.0, False)

    def shaped(self, criterion: Any, scores: np.ndarray) -> Any:
        import numpy as np

        return {"score": float(np.clip(scores[0], 0.0, 100.0)), "spans": []}

    def check_answers(self, criterion: Any) -> tuple[Any, ...]:
        return range_checks(0.0, 100.0)  # the scores 0, 25, 50, 75 and 100, no error marked

    def check_request(self, criterion: Any, expected: Any) -> str:
        return f"give the score {expected:g} (marking no error)"

    def attention_answer(self, criterion: Any, expected: Any, shown: int) -> Any:
        return {"score": float(expected), "spans": []}

    def cheap_answer(self, criterion: Any, level: float, shown: int) -> Any:
        return {"score": 100.0 * level, "spans": []}

    def heds_scale(self, criterion: Any) -> tuple[Any, str, str]:
        return ("continuous", "error spans (minor / major) marked in the output, then a score 0-100",
                "Other: marking error spans in the text, then a number entry box")
