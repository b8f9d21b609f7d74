"""Plain records passed between the store and the server."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AssignmentView", "Progress", "StoredJudgement", "TaskInfo"]


@functools.lru_cache(maxsize=4096)
def _names(encoded: str) -> tuple[str, ...]:
    """A JSON list of names as a tuple (systems and criteria repeat across tasks: decoded once)."""
    return tuple(json.loads(encoded))


@dataclass(frozen=True)
class TaskInfo:
    """The fixed part of a task (cached per process)."""

    task_id: str
    item_id: str
    systems: tuple[str, ...]
    criteria: tuple[str, ...]
    family: str
    kind: str
    expected: Any
    text: str
    repeat_of: str = ""

    @classmethod
    def from_row(cls, row: Any) -> TaskInfo:
        return cls(
            row.task_id,
            row.item_id,
            _names(row.systems),
            _names(row.criteria),
            row.family,
            row.kind,
            json.loads(row.expected) if row.expected != "null" else None,
            row.text,
            row.repeat_of or "",
        )


@dataclass(frozen=True)
class Progress:
    """How far a participant is: ``done`` of ``total`` tasks; ``finished`` when nothing is left."""

    done: int
    total: int
    finished: bool = False
    completed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"done": self.done, "total": self.total, "finished": self.finished, "completed": self.completed}


@dataclass(frozen=True)
class AssignmentView:
    """An assignment as served: the task and its outputs in display order (system names hidden)."""

    assignment_id: str
    task: TaskInfo
    display: tuple[str, ...]
    expires_at: float
    progress: Progress
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredJudgement:
    """A judgement as stored, and whether this request created it (201) or found it (200)."""

    id: int
    idempotency_key: str
    assignment_id: str
    participant_id: str
    task_id: str
    values: dict[str, Any]
    submitted_at: float
    revision: int
    created: bool

    def to_json(self) -> dict[str, Any]:
        from datetime import UTC, datetime

        return {
            "judgement_id": self.id,
            "idempotency_key": self.idempotency_key,
            "assignment_id": self.assignment_id,
            "values": self.values,
            "revision": self.revision,
            "submitted_at": datetime.fromtimestamp(self.submitted_at, UTC).isoformat(),
        }
