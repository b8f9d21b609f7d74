"""A judgement's values checked against the protocol's criteria (the store checks every submit with them).

Each criterion's task type checks its value (:meth:`humeval.tasks.TaskType.check`; what each admits is in
its module's docstring, :mod:`humeval.tasks`). Every criterion of the task is required; other keys are refused.
"""

from __future__ import annotations

from typing import Any

from humeval.protocol.models import Protocol
from humeval.tasks.base import InvalidValue
from humeval.wire import MAX_COMMENT

__all__ = ["InvalidValue", "check_comment", "check_values"]


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
        clean[name] = c.task.check(c, v, field, n_outputs, lengths)
    return clean
