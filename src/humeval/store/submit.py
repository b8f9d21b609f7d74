"""Storing a judgement: validated, idempotent, append-only, acknowledged after commit.

The first submit for an assignment completes it (and may update the live stopping rule);
a later submit with a new idempotency key is an edit, stored as a new row with the next
``revision`` (exports keep the latest). A repeated idempotency key returns the stored
judgement unchanged; the same key with other values or for another assignment is refused.

With a live stopping rule: a submit on a lease withdrawn because the comparison was decided
is refused (``lease_withdrawn``, nothing stored); a watched pair judgement cannot be edited
once the participant is settled (``list``) or at all (pool strategies, whose labels count
first answers): ``judgement_final``.

The check that the assignment is still the participant's (and, for a form that may only
answer an open assignment, still unanswered: ``only_open``) and the write are one
transaction: the assignment row is read with ``FOR UPDATE`` on PostgreSQL, and SQLite's
write transactions (``BEGIN IMMEDIATE``) hold the database, so two tabs submitting the same
task at the same instant store one row; the other gets ``already_submitted`` (409).
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from sqlalchemy import Connection

from humeval.design.tasks import Task
from humeval.judgements.values import check_comment, check_values
from humeval.store.assign import holds, looks, next_assignment, take
from humeval.store.context import RENEW_LIST, StoreContext
from humeval.store.live import after_judgement, is_settled
from humeval.store.participants import TOUCH
from humeval.store.records import AssignmentView, Progress, StoredJudgement
from humeval.store.refusal import Refusal
from humeval.store.sql import Rows, Sql, Step, sql_of
from humeval.wire import MAX_SECONDS

__all__ = ["SubmitResult", "submit_judgement"]


class SubmitResult:
    """The stored judgement, the comparisons this submit decided and, when asked for (``then_next``),
    the participant's next assignment: an :class:`AssignmentView`, their :class:`Progress` when nothing is left,
    or None when the next one could not be had (the judgement is stored all the same)."""

    __slots__ = ("decided", "judgement", "next")

    def __init__(self, judgement: StoredJudgement, decided: list[str],
                 following: AssignmentView | Progress | None = None) -> None:
        self.judgement = judgement
        self.decided = decided
        self.next = following


_FIND = (
    "SELECT a.participant_id, a.task_id, a.list_id, a.display, a.status, a.created_at, "
    "j.id, j.assignment_id, j.participant_id, j.\"values\", j.submitted_at, j.revision "
    "FROM assignments a LEFT JOIN judgements j ON j.idempotency_key = :key WHERE a.assignment_id = :aid"
)
_LOCK = " FOR UPDATE OF a"  # PostgreSQL: a concurrent submit of this assignment waits for this transaction
_LAST_REVISION = "SELECT max(revision) FROM judgements WHERE assignment_id = :aid"
_STORE = (
    "INSERT INTO judgements (idempotency_key, assignment_id, participant_id, task_id, list_id, kind, item_id, "
    "display, \"values\", seconds, revision, submitted_at, comment) VALUES (:key, :aid, :pid, :t, :l, :kind, :item, "
    ":display, :values, :seconds, :revision, :now, :comment) RETURNING id"
)
_DONE = "UPDATE assignments SET status = 'done', completed_at = :now WHERE assignment_id = :aid"
_TASK_DONE = "UPDATE tasks SET done = done + 1 WHERE task_id = :t"

def submit_judgement(
    conn: Connection,
    ctx: StoreContext,
    participant_id: str,
    assignment_id: str,
    idempotency_key: str,
    values: Any,
    seconds: float | None = None,
    *,
    only_open: bool = False,
    comment: Any = "",
    then_next: bool = False,
) -> SubmitResult:
    """Store one judgement (see the module docstring); raise :class:`Refusal` when refused.

    ``only_open``: refuse (``already_submitted``) an assignment that has been answered already,
    instead of storing an edit: a participant page's form answers its assignment once.
    ``comment``: the participant's optional free text (``presentation.comments``), stored as given.
    ``then_next``: give the participant their next assignment in the same operation (``result.next``, as
    :func:`~humeval.store.assign.next_assignment` would; None when it is refused): what the next assignment reads
    goes in the round trip that reads the assignment, and the answer's writes in the one that leases the next, in
    one transaction. The judgement is stored whatever becomes of the next assignment.
    """
    comment = check_comment(ctx.protocol, comment)
    db = sql_of(conn)
    now = time.time()
    # the assignment, locked, and (if the key was used before) the judgement stored under the key: one statement
    find = (_FIND + (_LOCK if db.pg else ""), {"key": idempotency_key, "aid": assignment_id})
    got = db.batch([find, *(looks(ctx, participant_id, now) if then_next else ())])
    row, seen = got[0].first, got[1:] if then_next else None
    if row is None or row[0] != participant_id:
        raise Refusal("unknown_assignment", "no such assignment for this participant", status=404, field="assignment_id")
    _, task_id, list_id, display_json, status, created_at, j_id, j_aid, j_pid, j_values, j_at, j_rev = row
    task = ctx.tasks[task_id]
    clean = _checked(ctx, task, json.loads(display_json), values)
    if j_id is not None:
        if j_aid != assignment_id or j_pid != participant_id:
            raise Refusal("idempotency_conflict", "this idempotency key was used for another assignment", status=409, field="idempotency_key")
        if json.loads(j_values) != clean:
            raise Refusal("idempotency_conflict", "this idempotency key was used with other values", status=409, field="idempotency_key")
        stored = StoredJudgement(int(j_id), idempotency_key, j_aid, j_pid, task_id, json.loads(j_values), j_at, j_rev, False)
        return SubmitResult(stored, [], _following(conn, ctx, participant_id, seen, None) if then_next else None)
    _admissible(db, ctx, participant_id, assignment_id, task_id, list_id, status, only_open)
    revision = 1 + int(db.scalar(_LAST_REVISION, {"aid": assignment_id}) or 0) if status == "done" else 0
    seconds = _seconds(seconds)
    row = {"key": idempotency_key, "aid": assignment_id, "pid": participant_id, "t": task_id, "l": list_id or "",
           "kind": task.kind, "item": task.item_id, "display": display_json, "values": json.dumps(clean),
           "seconds": float(max(0.0, now - created_at) if seconds is None else seconds), "revision": revision,
           "now": now, "comment": comment}
    steps: list[Step] = [(_STORE, row)]
    if revision == 0:
        steps += [(_DONE, row), (_TASK_DONE, row)]  # (a lease answered after it expired takes its place again)
    if not then_next:  # (else the next assignment's read touches the participant, and its lease renews the list)
        if revision == 0 and list_id is not None:
            steps.append((RENEW_LIST, {"l": list_id, **ctx.list_hold(now, ctx.lease_seconds)}))
        steps.append((TOUCH, row))
    db.durable = True  # the transaction holds a judgement: its commit waits for the disk
    if revision == 0 and ctx.strategy is not None and task.family == "pair" and task.kind == "task":
        written = db.batch(steps)
        after_judgement(conn, ctx, task, clean, now)  # list: the participant's outcomes are fed when settled
        db.commit()  # acknowledged once on disk, whatever follows in this operation
        seen = None  # (read again by the next assignment, in its own transaction)
    else:  # the writes go with the next round trip: the next assignment's lease, or the commit
        written = db.defer(steps)
    following = _following(conn, ctx, participant_id, seen, assignment_id if revision == 0 else None) if then_next else None
    db.flush(commit=not then_next)
    stored = StoredJudgement(int(written[0].scalar), idempotency_key, assignment_id, participant_id, task_id, clean, now,
                             revision, True)
    return SubmitResult(stored, [], following)


def _admissible(db: Sql, ctx: StoreContext, participant_id: str, assignment_id: str, task_id: str,
                list_id: str | None, status: str, only_open: bool) -> None:
    """Refuse an answer the assignment's state does not admit (nothing stored); an expired lease is taken again
    for this answer."""
    if only_open and status == "done":
        raise Refusal("already_submitted", "this task was answered already (in another tab or window); nothing "
                      "was stored", status=409, field="assignment_id")
    if status == "withdrawn":
        raise Refusal("lease_withdrawn", "the stopping rule has decided; this task is no longer needed and the "
                      "judgement was not stored; ask for the next task (GET /api/v1/next)", status=409, field="assignment_id")
    if status == "done" and task_id in ctx.watched and (ctx.strategy is not None or is_settled(db, participant_id)):
        raise Refusal("judgement_final", "this judgement already counts for the live stopping rule and cannot be "
                      "changed", status=409, field="assignment_id")
    if status != "expired":
        return
    # an answer that comes back after its lease was reaped is stored only where the lease could still be: the
    # participant holds its list, and (a stopping rule watching it) is not settled, whose outcomes are final
    gone = list_id is not None and not holds(db, participant_id, list_id)
    if gone or (task_id in ctx.watched and is_settled(db, participant_id)) or not take(db, task_id, assignment_id):
        raise Refusal("lease_expired", "this assignment expired and was given to someone else; ask for the next one",
                      status=409, field="assignment_id")


def _following(conn: Connection, ctx: StoreContext, participant_id: str, seen: list[Rows] | None,
               answered: str | None) -> AssignmentView | Progress | None:
    """The participant's next assignment, or None when it is refused (they ask again: ``GET /api/v1/next``)."""
    try:
        return next_assignment(conn, ctx, participant_id, seen=seen, answered=answered)
    except Refusal:
        return None


def _checked(ctx: StoreContext, task: Task, display: list[str] | tuple[str, ...], values: Any) -> Any:
    """The values validated for the task as shown (ESA spans against each output's length)."""
    lengths = [len(ctx.texts.get((task.item_id, system), ("",))[0]) for system in display] if task.kind != "attention" else None
    return check_values(ctx.protocol, task.criteria, len(display), values, lengths)


def _seconds(seconds: Any) -> float | None:
    """The seconds a client reported, or None when absent or not plausible (the server's count is used)."""
    if seconds is None or isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (0 <= seconds <= MAX_SECONDS) or math.isnan(seconds):
        return None
    return float(seconds)
