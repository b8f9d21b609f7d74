"""Storing a judgement: validated, idempotent, append-only, acknowledged after commit.

The first submit for an assignment completes it (and may update the live stopping rule);
a later submit with a new idempotency key is an edit, stored as a new row with the next
``revision`` (exports keep the latest). A repeated idempotency key returns the stored
judgement unchanged; the same key with other values or for another assignment is refused.

With a live stopping rule: a submit on a lease withdrawn because the comparison was decided
is refused (``lease_withdrawn``, nothing stored); a watched pair judgement cannot be edited
once the participant is settled (``list``) or at all (pool strategies, whose labels count
first answers; ``stopping.feed: judgement``, whose watched judgements and qualification checks
count as answered): ``judgement_final``.

A first answer to a live lease is written without reading first, by one list of conditional
statements (:meth:`Answer.first_steps`): its values are checked against the task the assignment
id names as the participant was shown it (:func:`~humeval.store.assign.shown`); the assignment is
marked done only while it is leased to the participant, as shown, and the key is unused (the update locks its row on
PostgreSQL; SQLite's write transactions, ``BEGIN IMMEDIATE``, hold the database), and the
judgement follows only in the submit that marked it (the tasks done are counted from the assignments). With ``then_next`` the lease of
the list's next place goes in the same round trip (:func:`~humeval.store.assign.lease_after`):
an answer and the next task are one round trip and one transaction. When that stored nothing,
the assignment is read (``FOR UPDATE`` on PostgreSQL) and the rarer cases are decided in its
transaction: the judgement stored under the key before, a key used otherwise, an edit, an answer
to an expired lease taken again, or a refusal (for a form that may only answer an open
assignment, ``only_open``, an answered one). Two tabs submitting the same task at the same
instant store one row; the other gets ``already_submitted`` (409).
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from sqlalchemy import Connection

from humeval.design.tasks import Task, is_qualification
from humeval.errors import Refused
from humeval.judgements.values import check_comment, check_values
from humeval.store.assign import holds, lease_after, looks, next_assignment, reap_due, shown, take
from humeval.store.context import RENEW, StoreContext
from humeval.store.generations import battle_state
from humeval.store.live import (
    SETTLED_ANY,
    after_judgement,
    after_submit,
    feeds_at_submit,
    is_settled,
)
from humeval.store.participants import TOUCH
from humeval.store.qualify import attempts_left
from humeval.store.reads import latest_judgements
from humeval.store.records import AssignmentView, Progress, StoredJudgement
from humeval.store.refusal import Refusal
from humeval.store.sql import Rows, Sql, Step, sql_of
from humeval.wire import MAX_SECONDS

__all__ = ["SubmitResult", "attempts_after", "submit_judgement"]


class SubmitResult:
    """The stored judgement, the comparisons this submit decided and, when asked for (``then_next``),
    the participant's next assignment: an :class:`AssignmentView`, their :class:`Progress` when nothing is left,
    or None when the next one could not be had (the judgement is stored all the same)."""

    __slots__ = ("attempts_left", "decided", "judgement", "next")

    def __init__(self, judgement: StoredJudgement, decided: list[str],
                 following: AssignmentView | Progress | None = None) -> None:
        self.judgement = judgement
        self.decided = decided
        self.next = following
        #: the attempts left at a qualification check whose answer failed (:mod:`humeval.store.qualify`); else 0
        self.attempts_left = 0


_FIND = (
    "SELECT a.participant_id, a.task_id, a.list_id, a.display, a.status, a.created_at, "
    "j.id, j.assignment_id, j.participant_id, j.\"values\", j.submitted_at, j.revision "
    "FROM assignments a LEFT JOIN judgements j ON j.idempotency_key = :key WHERE a.assignment_id = :aid"
)
_LOCK = " FOR UPDATE OF a"  # PostgreSQL: a concurrent submit of this assignment waits for this transaction
#: the participant seen now, with the tasks they have done (before this answer)
_TOUCH_DONE = TOUCH + " RETURNING (SELECT count(*) FROM assignments a WHERE a.participant_id = :pid AND a.status = 'done')"
#: a first answer marks the assignment done while it is the participant's, as shown, ``:was`` (``leased``; or
#: ``expired``, taken again), the key is unused and the participant is not settled (their judgements are final);
#: then, in the submit that marked it only (it is done and has no judgement yet, :data:`_FIRST`), the judgement
#: (:data:`_STORE`)
_ANSWER = ("UPDATE assignments SET status = 'done', completed_at = :now WHERE assignment_id = :aid "
           "AND participant_id = :pid AND status = :was AND display = :display "
           "AND NOT EXISTS (SELECT 1 FROM judgements WHERE idempotency_key = :key) AND NOT " + SETTLED_ANY)
_FIRST = ("a.assignment_id = :aid AND a.status = 'done' "
          "AND NOT EXISTS (SELECT 1 FROM judgements j WHERE j.assignment_id = :aid)")
#: a judgement of the assignment ``a`` (revision ``{revision}``, when ``{where}``); the seconds the client reported,
#: else the server's since the lease
_STORE = (
    "INSERT INTO judgements (idempotency_key, assignment_id, participant_id, task_id, list_id, kind, item_id, "
    "display, \"values\", seconds, revision, submitted_at, comment) SELECT :key, a.assignment_id, a.participant_id, "
    "a.task_id, COALESCE(a.list_id, ''), :kind, :item, a.display, :values, "
    "COALESCE(:seconds, CASE WHEN :now > a.created_at THEN :now - a.created_at ELSE 0.0 END), {revision}, :now, "
    ":comment FROM assignments a WHERE {where} RETURNING id, revision"
)
_STORE_FIRST = _STORE.format(revision="0", where=_FIRST)
#: an edit: the next revision of the assignment's judgement
_STORE_EDIT = _STORE.format(revision="(SELECT max(j.revision) + 1 FROM judgements j WHERE j.assignment_id = :aid)",
                            where="a.assignment_id = :aid")
#: the participant's list held a whole lease from an answer (theirs and done) that leases nothing with it
_RENEW_ANSWERED = RENEW.format(l="(SELECT a.list_id FROM assignments a WHERE a.assignment_id = :aid "
                                 "AND a.participant_id = :pid AND a.status = 'done')") + " AND participant_id = :pid"


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
    :func:`~humeval.store.assign.next_assignment` would; None when it is refused). The judgement is stored whatever
    becomes of the next assignment.
    """
    result = _submit(conn, ctx, participant_id, assignment_id, idempotency_key, values, seconds, only_open=only_open,
                     comment=comment, then_next=then_next)
    if ctx.protocol.design.qualification_attempts > 1:
        result.attempts_left = attempts_after(conn, ctx, participant_id, assignment_id)
        sql_of(conn).commit()
    return result


def _submit(conn: Connection, ctx: StoreContext, participant_id: str, assignment_id: str, idempotency_key: str,
            values: Any, seconds: float | None, *, only_open: bool, comment: Any, then_next: bool) -> SubmitResult:
    comment = check_comment(ctx.protocol, comment)
    db = sql_of(conn)
    if ctx.live_battle(ctx.task_of(assignment_id)):
        state = battle_state(conn, assignment_id)
        if state == "failed":
            raise _generation_failed()
        if state == "pending":
            raise Refusal("generation_pending", "the answers of this battle are not both shown yet; a vote counts "
                          "only for answers shown in full: stream them first (the assignment's stream)", status=409,
                          field="assignment_id")
    now = time.time()
    if then_next:
        reap_due(conn, ctx, now)
    answer = Answer(participant_id, assignment_id, idempotency_key, _seconds(seconds), comment, now)
    if (found := shown(ctx, participant_id, assignment_id)) is not None:
        task, display = found
        try:
            clean = _checked(ctx, task, display, values)
        except Refused:
            pass  # refused once the assignment is read: whether it is theirs is said first
        else:
            result = _first(conn, db, ctx, answer.of(task, json.dumps(display), clean), then_next)
            if result is not None:
                return result
    return _decide(conn, db, ctx, answer, values, only_open=only_open, then_next=then_next)


class Answer:
    """The parameters of an answer's statements (:attr:`row`), and what it answers once known (:meth:`of`)."""

    def __init__(self, participant_id: str, assignment_id: str, key: str, seconds: float | None, comment: str,
                 now: float) -> None:
        self.row: dict[str, Any] = {"pid": participant_id, "aid": assignment_id, "key": key, "seconds": seconds,
                                    "comment": comment, "now": now, "was": "leased"}
        self.task: Task | None = None
        self.clean: Any = None

    def of(self, task: Task, display: str, clean: Any, was: str = "leased") -> Answer:
        self.task, self.clean = task, clean
        self.row.update(t=task.task_id, kind=task.kind, item=task.item_id, display=display, values=json.dumps(clean),
                        was=was)
        return self

    def first_steps(self, counted: bool = False) -> list[Step]:
        """A first answer (the judgement's id is what the third step returns; ``counted``: the first, the
        participant's tasks done before it)."""
        return [(_TOUCH_DONE if counted else TOUCH, self.row), (_ANSWER, self.row), (_STORE_FIRST, self.row)]

    def stored(self, judgement_id: Any, revision: int) -> StoredJudgement:
        r, task = self.row, self.task
        assert task is not None
        return StoredJudgement(int(judgement_id), r["key"], r["aid"], r["pid"], task.task_id, self.clean, r["now"],
                               int(revision), True)


def _feeds_rule(ctx: StoreContext, task: Task) -> bool:
    """Whether a first answer to the task feeds a live stopping rule as it is stored (a pool strategy's pair label;
    with the ``list`` strategy a participant's outcomes are fed when they are settled, or with ``stopping.feed:
    judgement`` once they qualified: :func:`humeval.store.live.feeds_at_submit`)."""
    return (ctx.strategy is not None and task.family == "pair" and task.kind == "task") or feeds_at_submit(ctx, task)


def _first(conn: Connection, db: Sql, ctx: StoreContext, answer: Answer, then_next: bool) -> SubmitResult | None:
    """A first answer to a lease, sent without reading first, with (``then_next``) the lease of the list's next
    place, in one round trip that commits, or else what the next assignment reads; None when nothing was stored."""
    r, task = answer.row, answer.task
    assert task is not None
    feeds = _feeds_rule(ctx, task)
    plan = lease_after(ctx, r["pid"], r["aid"], r["now"], key=r["key"], values=r["values"]) if then_next and not feeds else None
    steps = answer.first_steps(counted=plan is not None)  # (the count: the progress of the lease sent with it)
    if plan is not None:
        steps += plan.steps
    elif then_next and not feeds:
        steps += looks(ctx, r["pid"], r["now"])  # read after the answer: the next assignment starts from them
    else:
        steps.append((_RENEW_ANSWERED, {**r, **ctx.list_hold(r["now"], ctx.lease_seconds)}))
    db.durable = True  # the transaction holds a judgement: its commit waits for the disk
    got = db.batch(steps, commit=not feeds and (plan is not None or not then_next), group=True)
    if got[2].scalar is None:
        return None  # nothing stored, nothing leased (the lease needs the answer stored under its key)
    result = SubmitResult(answer.stored(*got[2].rows[0]), [])
    if feeds:
        if ctx.strategy is None:
            result.decided = after_submit(conn, ctx, r["pid"], r["now"])
        else:
            after_judgement(conn, ctx, task, answer.clean, r["now"])
        db.commit()  # acknowledged once on disk, whatever follows in this operation
    if plan is not None and plan.leased(got[3:], done=int(got[0].scalar) + 1):
        result.next = plan.view
    elif then_next:
        result.next = _following(conn, ctx, r["pid"], got[3:] if plan is None and not feeds else None)
    return result


def _decide(conn: Connection, db: Sql, ctx: StoreContext, answer: Answer, values: Any, *, only_open: bool,
            then_next: bool) -> SubmitResult:
    """An answer that is not a first one to a live lease, decided once its assignment is read (locked): the
    judgement stored under its key before, an edit, a first answer to an expired lease taken again, or a refusal."""
    r = answer.row
    participant_id, assignment_id = r["pid"], r["aid"]
    # the assignment, locked, and (if the key was used before) the judgement stored under the key: one statement
    row = db.one(_FIND + (_LOCK if db.pg else ""), {"key": r["key"], "aid": assignment_id})
    if row is None or row[0] != participant_id:
        raise Refusal("unknown_assignment", "no such assignment for this participant", status=404, field="assignment_id")
    _, task_id, list_id, display_json, status, _, j_id, j_aid, j_pid, j_values, j_at, j_rev = row
    task = ctx.tasks[task_id]
    answer.of(task, display_json, _checked(ctx, task, json.loads(display_json), values), status)
    if j_id is not None:
        if j_aid != assignment_id or j_pid != participant_id:
            raise Refusal("idempotency_conflict", "this idempotency key was used for another assignment", status=409, field="idempotency_key")
        if json.loads(j_values) != answer.clean:
            raise Refusal("idempotency_conflict", "this idempotency key was used with other values", status=409, field="idempotency_key")
        stored = StoredJudgement(int(j_id), r["key"], j_aid, j_pid, task_id, json.loads(j_values), j_at, j_rev, False)
        return SubmitResult(stored, [], _following(conn, ctx, participant_id, None) if then_next else None)
    _admissible(conn, db, ctx, participant_id, assignment_id, task_id, list_id, status, only_open)
    if status != "done":
        result = _first(conn, db, ctx, answer, then_next)
        assert result is not None, "a first answer to the assignment read and locked is stored"
        return result
    db.durable = True  # an edit: acknowledged once on disk, whatever follows in this operation
    # another attempt at a qualification check decides the qualification as a first answer would
    feeds = ctx.strategy is None and feeds_at_submit(ctx, task) and _attempts_apply(ctx, task)
    stored = answer.stored(*db.batch([(_STORE_EDIT, r)], commit=not feeds)[0].rows[0])
    decided = after_submit(conn, ctx, participant_id, r["now"]) if feeds else []
    if feeds:
        db.commit()
    return SubmitResult(stored, decided, _following(conn, ctx, participant_id, None) if then_next else None)


def _attempts_apply(ctx: StoreContext, task: Task) -> bool:
    """Whether ``task`` is a qualification check with more than one attempt (:mod:`humeval.store.qualify`)."""
    return ctx.protocol.design.qualification_attempts > 1 and is_qualification(task, ctx.protocol.design)


def attempts_after(conn: Connection, ctx: StoreContext, participant_id: str, assignment_id: str) -> int:
    """The attempts the participant has left at the qualification check ``assignment_id`` after their answer (0 for
    any other task, and once their session is settled)."""
    task = ctx.task_of(assignment_id)
    if task is None or not _attempts_apply(ctx, task) or (ctx.watched and is_settled(sql_of(conn), participant_id)):
        return 0
    return attempts_left(ctx, latest_judgements(conn, participant_id), assignment_id)


#: the refusal of a vote on a battle whose generation failed (its lease ended as ``failed``: :mod:`humeval.store.generations`)
def _generation_failed() -> Refusal:
    return Refusal("generation_failed", "a model's answer to this battle could not be shown (it broke a limit, the "
                   "endpoint failed, or it named a model); the vote was not stored; ask for the next battle "
                   "(GET /api/v1/next)", status=409, field="assignment_id")


def _admissible(conn: Connection, db: Sql, ctx: StoreContext, participant_id: str, assignment_id: str, task_id: str,
                list_id: str | None, status: str, only_open: bool) -> None:
    """Refuse an answer the assignment's state does not admit (nothing stored); an expired lease is taken again
    for this answer."""
    if only_open and status == "done":
        raise Refusal("already_submitted", "this task was answered already (in another tab or window); nothing "
                      "was stored", status=409, field="assignment_id")
    if status == "failed":
        raise _generation_failed()
    if status == "withdrawn":
        raise Refusal("lease_withdrawn", "the stopping rule has decided; this task is no longer needed and the "
                      "judgement was not stored; ask for the next task (GET /api/v1/next)", status=409, field="assignment_id")
    # a live stopping rule: a settled participant's judgements are final, all of them (the exclusion rules ran on
    # them, and the exclude stage must see the same), so nothing of theirs is stored any more
    settled = bool(ctx.watched) and is_settled(db, participant_id)
    task = ctx.tasks[task_id]
    if status == "done" and not settled and _attempts_apply(ctx, task):
        if attempts_left(ctx, latest_judgements(conn, participant_id), assignment_id) > 0:
            return  # another attempt at a failed qualification check (an edit)
        raise Refusal("judgement_final", "this qualification check was answered as it asks, or with every attempt "
                      f"it allows (design.qualification_attempts: {ctx.protocol.design.qualification_attempts}), or "
                      "tasks after it were answered; it cannot be answered again", status=409, field="assignment_id")
    # a watched judgement is final under a pool strategy or once settled; with ``stopping.feed: judgement`` a watched
    # judgement and a qualification check are final once answered
    final = feeds_at_submit(ctx, task) or (task_id in ctx.watched and (ctx.strategy is not None or settled))
    if status == "done" and final:
        raise Refusal("judgement_final", "this judgement already counts for the live stopping rule and cannot be "
                      "changed", status=409, field="assignment_id")
    if settled:
        # a late answer of one whose session ended (inactive longer than a lease, or finished): refused, and the
        # session ends with its code all the same
        raise Refusal("lease_expired" if status != "done" else "judgement_final", "your session has ended (you were "
                      "away for longer than a task is held, or your work is done): this answer was not stored; your "
                      "completion code is ready (GET /api/v1/status)", status=409, field="assignment_id")
    if status != "expired":
        return
    # an answer that comes back after its lease was reaped is stored only where the lease could still be: the
    # participant holds its list, and the task has room again
    gone = list_id is not None and not holds(db, participant_id, list_id)
    if gone or not take(db, task_id, assignment_id):
        raise Refusal("lease_expired", "this assignment expired and was given to someone else; ask for the next one",
                      status=409, field="assignment_id")


def _following(conn: Connection, ctx: StoreContext, participant_id: str,
               seen: list[Rows] | None) -> AssignmentView | Progress | None:
    """The participant's next assignment, or None when it is refused (they ask again: ``GET /api/v1/next``)."""
    try:
        return next_assignment(conn, ctx, participant_id, seen=seen)
    except Refusal:
        return None


def _checked(ctx: StoreContext, task: Task, display: list[str] | tuple[str, ...], values: Any) -> Any:
    """The values validated for the task as shown (ESA spans against each output's length)."""
    spans = task.kind != "attention" and any(ctx.protocol.criterion(c).task.marks_spans for c in task.criteria)
    lengths = [len(ctx.texts.get((task.item_id, system), ("",))[0]) for system in display] if spans else None
    return check_values(ctx.protocol, task.criteria, len(display), values, lengths)


def _seconds(seconds: Any) -> float | None:
    """The seconds a client reported, or None when absent or not plausible (the server's count is used)."""
    if seconds is None or isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (0 <= seconds <= MAX_SECONDS) or math.isnan(seconds):
        return None
    return float(seconds)
