"""Handing out tasks: leases, per-task caps held exactly, never the same task twice to a participant.

A task's ``taken`` counts its live leases and its judgements; a lease is granted only by
``UPDATE tasks SET taken = taken + 1 WHERE taken < cap``, which the database applies
atomically, so caps hold across processes. Leases that expire are reclaimed (``taken``
goes down, the list position is free again). The ``list`` strategy serves a participant's
list in order; the labelling strategies serve the task pool in order, up to
``items_per_participant`` tasks per participant.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import time

from sqlalchemy import Connection, and_, case, exists, func, insert, or_, select, update

from humeval.store import schema as s
from humeval.store.context import StoreContext
from humeval.store.records import AssignmentView, Progress, TaskInfo
from humeval.store.refusal import Refusal

__all__ = ["display_order", "next_assignment", "progress", "reap", "release", "take"]

REAP_EVERY = 2.0
_CANDIDATES = 16


def display_order(ctx: StoreContext, participant_id: str, task: TaskInfo) -> tuple[str, ...]:
    """The systems in display order: a seeded shuffle per (study seed, participant, task)."""
    systems = list(task.systems)
    if ctx.protocol.presentation.randomise_order and len(systems) > 1:
        key = f"{ctx.protocol.study.seed}|{participant_id}|{task.task_id}".encode()
        random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big")).shuffle(systems)
    return tuple(systems)


def take(conn: Connection, task_id: str) -> bool:
    """Reserve one unit of the task's cap; False when full or closed."""
    t = s.tasks.c
    res = conn.execute(
        update(s.tasks)
        .where(and_(t.task_id == task_id, t.taken < t.cap, t.closed == 0))
        .values(taken=t.taken + 1, open=case((t.taken + 1 >= t.cap, 0), else_=1))
    )
    return res.rowcount == 1


def release(conn: Connection, task_id: str) -> None:
    """Give one unit of the task's cap back (an expired lease)."""
    t = s.tasks.c
    conn.execute(update(s.tasks).where(t.task_id == task_id).values(taken=t.taken - 1, open=1))


def reap(conn: Connection, now: float) -> int:
    """Expire leases past their time; return how many were reclaimed."""
    a = s.assignments.c
    rows = conn.execute(
        select(a.assignment_id, a.task_id, a.list_id, a.position, a.participant_id)
        .where(and_(a.status == "leased", a.expires_at < now))
        .limit(500)
    ).all()
    n = 0
    for r in rows:
        res = conn.execute(
            update(s.assignments).where(and_(a.assignment_id == r.assignment_id, a.status == "leased")).values(status="expired")
        )
        if res.rowcount != 1:
            continue
        n += 1
        release(conn, r.task_id)
        if r.list_id is not None:
            lt = s.list_tasks.c
            conn.execute(
                update(s.list_tasks)
                .where(and_(lt.list_id == r.list_id, lt.position == r.position, lt.assignment_id == r.assignment_id))
                .values(assignment_id=None)
            )
        conn.execute(
            insert(s.events).values(
                at=now, kind="lease_expired", participant_id=r.participant_id,
                data=json.dumps({"assignment_id": r.assignment_id, "task_id": r.task_id}),
            )
        )
    return n


def _participant(conn: Connection, participant_id: str):  # type: ignore[no-untyped-def]
    p = s.participants.c
    return conn.execute(select(s.participants).where(p.participant_id == participant_id).with_for_update()).first()


def progress(conn: Connection, ctx: StoreContext, participant_id: str, *, finished: bool = False) -> Progress:
    """Tasks done by the participant out of their list (or their share of the pool)."""
    a = s.assignments.c
    done = conn.execute(
        select(func.count()).select_from(s.assignments).where(and_(a.participant_id == participant_id, a.status == "done"))
    ).scalar_one()
    total = ctx.per_participant
    if ctx.strategy is None:
        p = s.participants.c
        list_id = conn.execute(select(p.list_id).where(p.participant_id == participant_id)).scalar()
        if list_id is not None:
            total = conn.execute(select(s.lists.c.size).where(s.lists.c.list_id == list_id)).scalar() or total
    total = max(total, done)
    return Progress(done, total, finished=finished, completed=finished and done > 0)


def _view(ctx: StoreContext, row, prog: Progress) -> AssignmentView:  # type: ignore[no-untyped-def]
    return AssignmentView(row.assignment_id, ctx.tasks[row.task_id], tuple(json.loads(row.display)), row.expires_at, prog)


def _create(
    conn: Connection, ctx: StoreContext, participant_id: str, task_id: str, now: float,
    list_id: str | None = None, position: int | None = None,
) -> AssignmentView:
    task = ctx.tasks[task_id]
    display = display_order(ctx, participant_id, task)
    assignment_id = secrets.token_hex(12)
    expires = now + ctx.lease_seconds
    conn.execute(
        insert(s.assignments).values(
            assignment_id=assignment_id, participant_id=participant_id, task_id=task_id, list_id=list_id,
            position=position, display=json.dumps(display), status="leased", created_at=now, expires_at=expires,
        )
    )
    if list_id is not None:
        lt = s.list_tasks.c
        conn.execute(
            update(s.list_tasks).where(and_(lt.list_id == list_id, lt.position == position)).values(assignment_id=assignment_id)
        )
        conn.execute(update(s.lists).where(s.lists.c.list_id == list_id).values(expires_at=expires))
    row = conn.execute(select(s.assignments).where(s.assignments.c.assignment_id == assignment_id)).one()
    return _view(ctx, row, progress(conn, ctx, participant_id))


def _not_done_by(participant_id: str, task_id_col):  # type: ignore[no-untyped-def]
    a = s.assignments.c
    return ~exists().where(and_(a.participant_id == participant_id, a.task_id == task_id_col))


def _claim_list(conn: Connection, ctx: StoreContext, participant_id: str, current: str | None, now: float) -> str | None:
    """The participant's list, claiming a free (or abandoned) one when they hold none."""
    lc = s.lists.c
    if current is not None:
        holder = conn.execute(select(lc.participant_id).where(lc.list_id == current)).scalar()
        if holder == participant_id:
            return current
    free = or_(lc.participant_id.is_(None), and_(lc.completed == 0, lc.expires_at < now))
    for list_id in conn.execute(select(lc.list_id).where(free).order_by(lc.list_id).limit(_CANDIDATES)).scalars():
        res = conn.execute(
            update(s.lists).where(and_(lc.list_id == list_id, free)).values(participant_id=participant_id, expires_at=now + ctx.lease_seconds)
        )
        if res.rowcount == 1:
            conn.execute(
                update(s.participants).where(s.participants.c.participant_id == participant_id).values(list_id=list_id)
            )
            conn.execute(
                insert(s.events).values(at=now, kind="list_claimed", participant_id=participant_id, data=json.dumps({"list_id": list_id}))
            )
            return list_id
    return None


def next_assignment(conn: Connection, ctx: StoreContext, participant_id: str) -> AssignmentView | Progress:
    """The participant's current or next assignment, or their final progress when nothing is left."""
    now = time.time()
    if now - ctx.last_reap > REAP_EVERY:
        ctx.last_reap = now
        reap(conn, now)
    p = _participant(conn, participant_id)
    if p is None:
        raise Refusal("unknown_participant", "this token names no participant of this study; enter again", status=401)
    if ctx.protocol.presentation.consent and p.consented_at is None:
        raise Refusal("consent_required", "the participant has not given consent yet (POST /api/v1/consent)", status=403)
    a = s.assignments.c
    active = conn.execute(
        select(s.assignments)
        .where(and_(a.participant_id == participant_id, a.status == "leased", a.expires_at >= now))
        .order_by(a.created_at)
        .limit(1)
    ).first()
    conn.execute(update(s.participants).where(s.participants.c.participant_id == participant_id).values(last_seen=now))
    if active is not None:
        return _view(ctx, active, progress(conn, ctx, participant_id))
    if ctx.strategy is None:
        view = _from_list(conn, ctx, participant_id, p.list_id, now)
    else:
        view = _from_pool(conn, ctx, participant_id, now)
    if view is not None:
        return view
    final = progress(conn, ctx, participant_id, finished=True)
    if final.completed and p.completed_at is None:
        conn.execute(update(s.participants).where(s.participants.c.participant_id == participant_id).values(completed_at=now))
    return final


def _from_list(conn: Connection, ctx: StoreContext, participant_id: str, current: str | None, now: float) -> AssignmentView | None:
    list_id = _claim_list(conn, ctx, participant_id, current, now)
    if list_id is None:
        return None
    lt, t = s.list_tasks.c, s.tasks.c
    candidates = conn.execute(
        select(lt.position, lt.task_id)
        .join(s.tasks, t.task_id == lt.task_id)
        .where(and_(lt.list_id == list_id, lt.assignment_id.is_(None), t.closed == 0, _not_done_by(participant_id, lt.task_id)))
        .order_by(lt.position)
        .limit(_CANDIDATES)
    ).all()
    for position, task_id in candidates:
        if take(conn, task_id):
            return _create(conn, ctx, participant_id, task_id, now, list_id, position)
    if not candidates:
        conn.execute(update(s.lists).where(s.lists.c.list_id == list_id).values(completed=1))
    return None


def _from_pool(conn: Connection, ctx: StoreContext, participant_id: str, now: float) -> AssignmentView | None:
    a = s.assignments.c
    done = conn.execute(
        select(func.count()).select_from(s.assignments).where(and_(a.participant_id == participant_id, a.status == "done"))
    ).scalar_one()
    if done >= ctx.per_participant:
        return None
    if ctx.strategy is not None and ctx.strategy.same_worker and not _is_fixed_worker(conn, participant_id):
        return None
    t = s.tasks.c
    candidates = conn.execute(
        select(t.task_id)
        .where(and_(t.open == 1, t.closed == 0, t.kind == "task", _not_done_by(participant_id, t.task_id)))
        .order_by(t.seq)
        .limit(_CANDIDATES)
    ).scalars().all()
    for task_id in candidates:
        if take(conn, task_id):
            return _create(conn, ctx, participant_id, task_id, now)
    return None


def _is_fixed_worker(conn: Connection, participant_id: str) -> bool:
    """``fixed``: the first participant to ask becomes the one worker of the study."""
    m = s.meta.c
    holder = conn.execute(select(m.value).where(m.key == "fixed_worker")).scalar()
    if holder is None:
        conn.execute(insert(s.meta).values(key="fixed_worker", value=participant_id))
        return True
    return holder == participant_id
