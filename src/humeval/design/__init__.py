"""Participant lists, counterbalancing, attention checks.

Names are imported from their module on first use (PEP 562): ``humeval.design.tasks``, which
the study's types need, does not import the list builder (NumPy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval.lazy import lazy_exports

_EXPORTS = {
    "attention_task": "humeval.design.lists",
    "build_lists": "humeval.design.lists",
    "order_items": "humeval.design.order",
    "serving_order": "humeval.design.order",
    "FAMILIES": "humeval.design.tasks",
    "ParticipantList": "humeval.design.tasks",
    "Task": "humeval.design.tasks",
    "build_tasks": "humeval.design.tasks",
    "criterion_groups": "humeval.design.tasks",
}

__all__ = ["FAMILIES", "ParticipantList", "Task", "attention_task", "build_lists", "build_tasks", "criterion_groups",
           "order_items", "serving_order"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.design.lists import attention_task, build_lists
    from humeval.design.order import order_items, serving_order
    from humeval.design.tasks import FAMILIES, ParticipantList, Task, build_tasks, criterion_groups
