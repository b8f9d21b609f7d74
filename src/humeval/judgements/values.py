"""A judgement's values checked against the protocol's criteria (the store checks every submit with them).

=============  ==========================================================================
``2afc``        ``"A"`` or ``"B"`` (first or second output as displayed), or an enabled
                ``"tie"`` / ``"both-good"`` / ``"both-bad"``
``likert``      an integer 1..k
``magnitude``   a positive finite number (at most 1e9)
``slider``      a finite number in [min, max]
``esa``         ``{"score": number in [0, 100], "spans": [{"start", "end", "severity"}, ...]}``: character
                offsets into the output shown (0 <= start < end <= its length), severity ``minor`` or
                ``major``, at most ``max_spans`` spans, none overlapping
``rankme``      a list with one positive finite number per output, in display order
=============  ==========================================================================
Every criterion of the task is required; other keys are refused.
"""

from __future__ import annotations

import math
from typing import Any

from humeval.errors import Refused
from humeval.protocol.models import Protocol
from humeval.wire import MAX_COMMENT, MAX_SCORE

__all__ = ["InvalidValue", "check_comment", "check_values"]


class InvalidValue(Refused):
    """A value (or comment) the protocol does not admit: ``invalid_value``, at its ``field``; nothing is stored."""

    def __init__(self, field: str, message: str, status: int = 422) -> None:
        super().__init__("invalid_value", f"{field}: {message}", status=status, field=field)


def check_comment(protocol: Protocol, comment: Any) -> str:
    """The participant's optional free-text comment (empty when none), or a :class:`InvalidValue`."""
    if comment is None or comment == "":
        return ""
    if not isinstance(comment, str) or len(comment) > MAX_COMMENT:
        raise InvalidValue("comment", f"expected text of at most {MAX_COMMENT} characters, got "
                           f"{type(comment).__name__} of length {len(comment) if isinstance(comment, str) else '?'}")
    if not protocol.presentation.comments:
        raise InvalidValue("comment", "this study does not collect comments (presentation.comments is off)")
    return comment


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidValue(field, f"expected a number, got {type(value).__name__} {_show(value)}")
    if not math.isfinite(value):
        raise InvalidValue(field, f"expected a finite number, got {value!r}")
    return float(value)


def _positive(value: Any, field: str) -> float:
    x = _number(value, field)
    if not 0 < x <= MAX_SCORE:
        raise InvalidValue(field, f"expected a positive number up to {MAX_SCORE:g}, got {value!r}")
    return x


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _spans(v: Any, field: str, length: int | None, most: int) -> list[dict[str, Any]]:
    if not isinstance(v, list) or len(v) > most:
        raise InvalidValue(field, f"expected a list of at most {most} spans {{start, end, severity}}, got {_show(v)}")
    spans = []
    for i, span in enumerate(v):
        where = f"{field}[{i}]"
        if not isinstance(span, dict) or set(span) != {"start", "end", "severity"}:
            raise InvalidValue(where, f"expected {{start, end, severity}}, got {_show(span)}")
        start, end, severity = span["start"], span["end"], span["severity"]
        if any(isinstance(x, bool) or not isinstance(x, int) for x in (start, end)) or not 0 <= start < end:
            raise InvalidValue(where, f"expected integer offsets 0 <= start < end, got start={start!r}, end={end!r}")
        if length is not None and end > length:
            raise InvalidValue(where, f"end {end} is past the end of the output ({length} characters)")
        if severity not in ("minor", "major"):
            raise InvalidValue(where, f"severity: expected minor or major, got {_show(severity)}")
        spans.append({"start": start, "end": end, "severity": severity})
    spans.sort(key=lambda s: (s["start"], s["end"]))
    for a, b in zip(spans, spans[1:], strict=False):
        if b["start"] < a["end"]:
            raise InvalidValue(field, f"spans overlap: [{a['start']}, {a['end']}) and [{b['start']}, {b['end']})")
    return spans


def check_values(protocol: Protocol, criteria: tuple[str, ...], n_outputs: int, values: Any,
                 lengths: list[int] | None = None) -> dict[str, Any]:
    """The validated values (numbers normalised) or a :class:`InvalidValue` naming the bad field.

    ``lengths``: the length (characters) of each output shown, to check ``esa`` span offsets."""
    if not isinstance(values, dict):
        raise InvalidValue("values", f"expected an object {{criterion: value}}, got {type(values).__name__}")
    unknown = sorted(set(values) - set(criteria))
    if unknown:
        raise InvalidValue(f"values.{unknown[0]}"[:120], f"not a criterion of this task; expected {', '.join(criteria)}")
    clean: dict[str, Any] = {}
    for name in criteria:
        field = f"values.{name}"
        if name not in values or values[name] is None:
            raise InvalidValue(field, "required")
        v = values[name]
        c = protocol.criterion(name)
        if c.type == "2afc":
            options = c.options()
            if not isinstance(v, str) or v not in options:
                raise InvalidValue(field, f"expected one of {', '.join(options)}, got {_show(v)}")
            clean[name] = v
        elif c.type == "likert":
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= c.points:
                raise InvalidValue(field, f"expected an integer from 1 to {c.points}, got {_show(v)}")
            clean[name] = v
        elif c.type == "slider":
            x = _number(v, field)
            if not c.min <= x <= c.max:
                raise InvalidValue(field, f"expected a number from {c.min:g} to {c.max:g}, got {v!r}")
            clean[name] = x
        elif c.type == "magnitude":
            clean[name] = _positive(v, field)
        elif c.type == "esa":
            if not isinstance(v, dict) or set(v) != {"score", "spans"}:
                raise InvalidValue(field, f"expected {{score, spans}}, got {_show(v)}")
            score = _number(v["score"], f"{field}.score")
            if not 0 <= score <= 100:
                raise InvalidValue(f"{field}.score", f"expected a number from 0 to 100, got {v['score']!r}")
            clean[name] = {"score": score, "spans": _spans(v["spans"], f"{field}.spans",
                                                          lengths[0] if lengths else None, c.max_spans)}
        else:  # rankme
            if not isinstance(v, list) or len(v) != n_outputs:
                raise InvalidValue(field, f"expected a list of {n_outputs} positive numbers (one per output), got {_show(v)}")
            clean[name] = [_positive(x, f"{field}[{i}]") for i, x in enumerate(v)]
    return clean
