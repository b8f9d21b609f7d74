"""Storing a judgement: validated, idempotent, append-only, acknowledged after commit.

The first submit for an assignment completes it (and may update the live stopping rule);
a later submit with a new idempotency key is an edit, stored as a new row with the next
``revision`` (exports keep the latest). A repeated idempotency key returns the stored
judgement unchanged; the same key with other values or for another assignment is refused.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from sqlalchemy import Connection, and_, func, insert, select, update

from humeval.store import schema as s
from humeval.store.assign import take
from humeval.store.context import StoreContext
from humeval.store.live import after_judgement
from humeval.store.records import StoredJudgement
from humeval.store.refusal import Refusal
from humeval.store.values import check_values

__all__ = ["SubmitResult", "submit_judgement"]

MAX_SECONDS = 7 * 24 * 3600.0


class SubmitResult:
    """The stored judgement and the comparisons this submit decided."""

    __slots__ = ("decided", "judgement")

    def __init__(self, judgement: StoredJudgement, decided: list[str]) -> None:
        self.judgement = judgement
        self.decided = decided


def _stored(row: Any, created: bool) -> StoredJudgement:
    return StoredJudgement(
        row.id, row.idempotency_key, row.assignment_id, row.participant_id, row.task_id,
        json.loads(row.values), row.submitted_at, row.revision, created,
    )


def submit_judgement(
    conn: Connection,
    ctx: StoreContext,
    participant_id: str,
    assignment_id: str,
    idempotency_key: str,
    values: Any,
    seconds: float | None = None,
) -> SubmitResult:
    """Store one judgement (see the module docstring); raise :class:`Refusal` when refused."""
    a = s.assignments.c
    row = conn.execute(select(s.assignments).where(a.assignment_id == assignment_id)).first()
    if row is None or row.participant_id != participant_id:
        raise Refusal("unknown_assignment", "no such assignment for this participant", status=404, field="assignment_id")
    task = ctx.tasks[row.task_id]
    display = json.loads(row.display)
    clean = check_values(ctx.protocol, task.criteria, len(display), values)
    j = s.judgements.c
    existing = conn.execute(select(s.judgements).where(j.idempotency_key == idempotency_key)).first()
    if existing is not None:
        if existing.assignment_id != assignment_id or existing.participant_id != participant_id:
            raise Refusal("idempotency_conflict", "this idempotency key was used for another assignment", status=409, field="idempotency_key")
        if json.loads(existing.values) != clean:
            raise Refusal("idempotency_conflict", "this idempotency key was used with other values", status=409, field="idempotency_key")
        return SubmitResult(_stored(existing, created=False), [])
    now = time.time()
    if row.status == "expired":
        if not take(conn, row.task_id):
            raise Refusal("lease_expired", "this assignment expired and was given to someone else; ask for the next one", status=409, field="assignment_id")
        row_status = "leased"
    else:
        row_status = row.status
    revision = 0
    if row_status == "done":
        revision = 1 + int(
            conn.execute(select(func.max(j.revision)).where(j.assignment_id == assignment_id)).scalar() or 0
        )
    if seconds is None or isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (0 <= seconds <= MAX_SECONDS) or math.isnan(seconds):
        seconds = max(0.0, now - row.created_at)
    res = conn.execute(
        insert(s.judgements).values(
            idempotency_key=idempotency_key, assignment_id=assignment_id, participant_id=participant_id,
            task_id=row.task_id, list_id=row.list_id or "", kind=task.kind, item_id=task.item_id,
            display=row.display, values=json.dumps(clean), seconds=float(seconds), revision=revision, submitted_at=now,
        )
    )
    stored = StoredJudgement(
        int(res.inserted_primary_key[0]), idempotency_key, assignment_id, participant_id, row.task_id, clean, now, revision, True
    )
    decided: list[str] = []
    if revision == 0:
        conn.execute(update(s.assignments).where(a.assignment_id == assignment_id).values(status="done", completed_at=now))
        t = s.tasks.c
        conn.execute(update(s.tasks).where(t.task_id == row.task_id).values(done=t.done + 1))
        if row.list_id is not None:
            lt = s.list_tasks.c
            conn.execute(
                update(s.list_tasks)
                .where(and_(lt.list_id == row.list_id, lt.position == row.position, lt.assignment_id.is_(None)))
                .values(assignment_id=assignment_id)
            )
            conn.execute(update(s.lists).where(s.lists.c.list_id == row.list_id).values(expires_at=now + ctx.lease_seconds))
        if task.family == "pair" and task.kind == "task":
            decided = after_judgement(conn, ctx, task, display, clean, now)
    conn.execute(update(s.participants).where(s.participants.c.participant_id == participant_id).values(last_seen=now))
    return SubmitResult(stored, decided)
