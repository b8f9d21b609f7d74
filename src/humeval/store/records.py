"""Plain records passed between the store and the server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from humeval.design.tasks import Task

__all__ = ["AssignmentView", "Progress", "StoredJudgement"]


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
    task: Task
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
