"""Participant lists, counterbalancing, attention checks."""

from humeval.design.lists import attention_task, build_lists
from humeval.design.tasks import FAMILIES, Task, build_tasks, criterion_groups

__all__ = ["FAMILIES", "ParticipantList", "Task", "attention_task", "build_lists", "build_tasks", "criterion_groups"]
