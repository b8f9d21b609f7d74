"""Participant lists, counterbalancing, attention checks.

Names are imported from their module on first use (PEP 562): ``humeval.design.tasks``, which
the study's types need, does not import the list builder (NumPy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval.lazy import lazy_exports

_EXPORTS = {
    "CheckAnswers": "humeval.design.lists",
    "attention_task": "humeval.design.lists",
    "check_answers": "humeval.design.lists",
    "build_lists": "humeval.design.lists",
    "order_items": "humeval.design.order",
    "serving_order": "humeval.design.order",
    "FAMILIES": "humeval.design.tasks",
    "ParticipantList": "humeval.design.tasks",
    "Task": "humeval.design.tasks",
    "build_tasks": "humeval.design.tasks",
    "criterion_groups": "humeval.design.tasks",
}

__all__ = ["FAMILIES", "CheckAnswers", "ParticipantList", "Task", "attention_task", "build_lists", "build_tasks",
           "check_answers", "criterion_groups", "order_items", "serving_order"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.design.lists import CheckAnswers, attention_task, build_lists, check_answers
    from humeval.design.order import order_items, serving_order
    from humeval.design.tasks import FAMILIES, ParticipantList, Task, build_tasks, criterion_groups
