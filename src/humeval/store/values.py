"""Server-side validation of submitted values against the protocol's criteria.

=============  ==========================================================================
``2afc``        ``"A"`` or ``"B"`` (first or second output as displayed), or an enabled
                ``"tie"`` / ``"both-good"`` / ``"both-bad"``
``likert``      an integer 1..k
``magnitude``   a positive finite number (at most 1e9)
``slider``      a finite number in [min, max]
``rankme``      a list with one positive finite number per output, in display order
=============  ==========================================================================
Every criterion of the task is required; other keys are refused.
"""

from __future__ import annotations

import math
from typing import Any

from humeval.protocol.models import Protocol
from humeval.store.refusal import Refusal
from humeval.wire import MAX_SCORE

__all__ = ["check_values"]


def _invalid(field: str, message: str) -> Refusal:
    return Refusal("invalid_value", f"{field}: {message}", status=422, field=field)


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _invalid(field, f"expected a number, got {type(value).__name__} {_show(value)}")
    if not math.isfinite(value):
        raise _invalid(field, f"expected a finite number, got {value!r}")
    return float(value)


def _positive(value: Any, field: str) -> float:
    x = _number(value, field)
    if not 0 < x <= MAX_SCORE:
        raise _invalid(field, f"expected a positive number up to {MAX_SCORE:g}, got {value!r}")
    return x


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_values(protocol: Protocol, criteria: tuple[str, ...], n_outputs: int, values: Any) -> dict[str, Any]:
    """The validated values (numbers normalised) or a :class:`Refusal` naming the bad field."""
    if not isinstance(values, dict):
        raise _invalid("values", f"expected an object {{criterion: value}}, got {type(values).__name__}")
    unknown = sorted(set(values) - set(criteria))
    if unknown:
        raise _invalid(f"values.{unknown[0]}"[:120], f"not a criterion of this task; expected {', '.join(criteria)}")
    clean: dict[str, Any] = {}
    for name in criteria:
        field = f"values.{name}"
        if name not in values or values[name] is None:
            raise _invalid(field, "required")
        v = values[name]
        c = protocol.criterion(name)
        if c.type == "2afc":
            options = c.options()
            if not isinstance(v, str) or v not in options:
                raise _invalid(field, f"expected one of {', '.join(options)}, got {_show(v)}")
            clean[name] = v
        elif c.type == "likert":
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= c.points:
                raise _invalid(field, f"expected an integer from 1 to {c.points}, got {_show(v)}")
            clean[name] = v
        elif c.type == "slider":
            x = _number(v, field)
            if not c.min <= x <= c.max:
                raise _invalid(field, f"expected a number from {c.min:g} to {c.max:g}, got {v!r}")
            clean[name] = x
        elif c.type == "magnitude":
            clean[name] = _positive(v, field)
        else:  # rankme
            if not isinstance(v, list) or len(v) != n_outputs:
                raise _invalid(field, f"expected a list of {n_outputs} positive numbers (one per output), got {_show(v)}")
            clean[name] = [_positive(x, f"{field}[{i}]") for i, x in enumerate(v)]
    return clean
