"""Plain records passed between the store and the server."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["AssignmentView", "Progress", "StoredJudgement", "TaskInfo"]


@functools.lru_cache(maxsize=4096)
def _names(encoded: str) -> tuple[str, ...]:
    """A JSON list of names as a tuple (systems and criteria repeat across tasks: decoded once)."""
    return tuple(json.loads(encoded))


class TaskInfo(NamedTuple):
    """The fixed part of a task (cached per process: a tuple, as a large study holds 600,000 of them)."""

    task_id: str
    item_id: str
    systems: tuple[str, ...]
    criteria: tuple[str, ...]
    family: str
    kind: str
    expected: Any
    text: str
    repeat_of: str = ""
    #: the task's row number in the store (-1: not from a store)
    seq: int = -1

    @classmethod
    def from_row(cls, row: Any) -> TaskInfo:
        """From a ``tasks`` row (or a tuple of :data:`TASK_COLUMNS`, in that order)."""
        task_id, item_id, systems, criteria, family, kind, expected, text, repeat_of, seq = row
        return cls(task_id, item_id, _names(systems), _names(criteria), family, kind,
                   json.loads(expected) if expected != "null" else None, text, repeat_of or "", seq)


#: the ``tasks`` columns :meth:`TaskInfo.from_row` reads, in its order
TASK_COLUMNS = ("task_id", "item_id", "systems", "criteria", "family", "kind", "expected", "text", "repeat_of", "seq")


@dataclass(frozen=True)
class Progress:
    """How far a participant is: ``done`` of ``total`` tasks; ``finished`` when nothing is left.

    ``reason`` says why a participant who has done nothing got nothing: ``wait`` (the stopping
    rule admits no new session now; one may open later) or ``closed`` (no session is left).
    """

    done: int
    total: int
    finished: bool = False
    completed: bool = False
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"done": self.done, "total": self.total, "finished": self.finished,
                               "completed": self.completed}
        if self.reason:
            out["reason"] = self.reason
        return out


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
