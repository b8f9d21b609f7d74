"""Participant lists, counterbalancing, attention checks."""

from humeval.design.lists import attention_task, build_lists
from humeval.design.order import order_items, serving_order
from humeval.design.tasks import FAMILIES, ParticipantList, Task, build_tasks, criterion_groups

__all__ = ["FAMILIES", "ParticipantList", "Task", "attention_task", "build_lists", "build_tasks", "criterion_groups",
           "order_items", "serving_order"]
