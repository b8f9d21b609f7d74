"""Handing out tasks: leases, per-task caps held exactly, never the same task twice to a participant.

A task's ``taken`` counts its live leases and its judgements; a lease is granted only by
``UPDATE tasks SET taken = taken + 1 WHERE taken < cap``, which the database applies
atomically, so caps hold across processes. Leases that expire are reclaimed (``taken``
goes down, the list position is free again). Until a participant's first submit, their
list and lease are held only for the short first reservation (``first_lease_seconds``),
so entries that never answer do not hold the study's lists for a whole lease; and a participant who has not
answered yet is given at most :data:`FIRST_LEASES` leases (a first task whose reservation lapsed is given once
more, then nothing: an entry that never answers holds a list for at most two first reservations, while a slow
participant keeps their place). The ``list`` strategy serves a participant's
list in order; the labelling strategies serve the task pool in order, up to
``items_per_participant`` tasks per participant.

With a live stopping rule and the ``list`` strategy, a list holding watched pair tasks is a
session: it is claimed only while the rule admits one (:func:`humeval.store.live.admissions`)
and then served whole, but for the tasks the rule closed when it decided. With a pool
strategy, a pair task of an undecided comparison is leased only while the comparison has
room in flight (:func:`humeval.store.live.has_room`). A participant who is left with nothing
is settled (:func:`humeval.store.live.settle`) and gets no further task.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import time
from collections.abc import Iterable
from dataclasses import replace
from itertools import chain
from typing import Any

from sqlalchemy import Connection, and_, func, insert, select, update

from humeval.store import schema as s
from humeval.store.context import RENEW_LIST, StoreContext
from humeval.store.live import (
    admissions,
    has_room,
    is_settled,
    preferred_tasks,
    release_list,
    sessions_wanted,
    settle,
    settle_abandoned,
)
from humeval.store.records import AssignmentView, Progress, TaskInfo
from humeval.store.refusal import Refusal
from humeval.store.sql import Sql, sql_of

__all__ = ["FIRST_LEASES", "Lease", "display_order", "holds", "idle_reason", "lease_with_answer", "next_assignment", "progress", "reap", "release", "take"]

REAP_EVERY = 2.0
#: leases a participant is given before their first answer (their reservations ran out before they answered)
FIRST_LEASES = 2
_CANDIDATES = 16
#: PostgreSQL's fast path: candidates tried by a lease (their display orders are computed beforehand)
_FAST_CANDIDATES = 4
#: ... and positions of the participant's list read with their state (those after the one leased are kept
#: in :attr:`StoreContext.upcoming`, so that the next lease goes with their answer)
_STATE_CANDIDATES = 12


def display_order(ctx: StoreContext, participant_id: str, task: TaskInfo) -> tuple[str, ...]:
    """The systems in display order: a seeded shuffle per (study seed, participant, task)."""
    systems = list(task.systems)
    if ctx.protocol.presentation.randomise_order and len(systems) > 1:
        key = f"{ctx.protocol.study.seed}|{participant_id}|{task.task_id}".encode()
        random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big")).shuffle(systems)
    return tuple(systems)


def take(conn: Connection, task_id: str) -> bool:
    """Reserve one unit of the task's cap; False when full or closed."""
    return sql_of(conn).run(_TAKE, {"t": task_id}) == 1


def holds(db: Sql, participant_id: str, list_id: str) -> bool:
    """Whether the participant holds the list now."""
    return db.scalar(_HOLDER, {"l": list_id}) == participant_id


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


def progress(conn: Connection, ctx: StoreContext, participant_id: str, *, finished: bool = False) -> Progress:
    """Tasks done by the participant out of their list (or their share of the pool)."""
    a = s.assignments.c
    done = conn.execute(
        select(func.count()).select_from(s.assignments).where(and_(a.participant_id == participant_id, a.status == "done"))
    ).scalar_one()
    list_id = None
    if ctx.strategy is None:
        p = s.participants.c
        list_id = conn.execute(select(p.list_id).where(p.participant_id == participant_id)).scalar()
    return _progress(ctx, done, list_id, finished)


def _progress(ctx: StoreContext, done: int, list_id: str | None, finished: bool = False) -> Progress:
    total = ctx.per_participant
    if ctx.strategy is None and list_id is not None:
        total = ctx.list_sizes.get(list_id) or total
    total = max(total, done)
    return Progress(done, total, finished=finished, completed=finished and done > 0)


# -- the hot path: fixed statements on the driver connection (see humeval.store.sql) --------
_TOUCH_RETURNING = "UPDATE participants SET last_seen = :now WHERE participant_id = :pid RETURNING consented_at, completed_at, list_id"
_PARTICIPANT = "SELECT consented_at, completed_at, list_id FROM participants WHERE participant_id = :pid FOR UPDATE"
_TOUCH = "UPDATE participants SET last_seen = :now WHERE participant_id = :pid"
_SETTLED = "SELECT 1 FROM settled WHERE participant_id = :pid"
_MINE = "SELECT assignment_id, task_id, display, expires_at, status, created_at FROM assignments WHERE participant_id = :pid"
_HOLDER = "SELECT participant_id FROM lists WHERE list_id = :l"
_FREE = "(participant_id IS NULL OR (completed = 0 AND expires_at < :now))"
#: a free list no other transaction is claiming: one left unfinished (its reservation ran out) first, else the
#: first list nobody holds, in list order. PostgreSQL: the row is locked, and re-checked free once locked;
#: lists being claimed meanwhile are skipped, never waited for, so a claim fails only when no list is free
#: (the second query runs only when the first found nothing). SQLite: the writer holds the database. The holder
#: test is written so that no index serves it (``IS TRUE``): the lists are found by their expiry, not by walking
#: every held list's entry of the holder index (which PostgreSQL's planner, with the statistics of the lists as
#: seeded, when nobody held one, takes for the rarer condition). Both halves are read by an index at any size of
#: study (``tests/unit/store/test_claim_plans.py``): a new list is the first entry of the partial index of the free
#: lists of its kind (``ix_lists_free*``, whose conditions are the statement's, word for word); left lists are the
#: range of ``ix_lists_expiring`` between 0 and now (few: the next claims take them), sorted. The range is bounded
#: on both sides (times are positive) because SQLite, for a one-sided range in a subquery, walks the whole table in
#: list order instead.
_LEFT_LIST = ("SELECT list_id FROM lists WHERE completed = 0 AND expires_at > 0 AND expires_at < :now "
              "AND (participant_id IS NOT NULL) IS TRUE "
              "{guard}ORDER BY list_id LIMIT 1 FOR UPDATE SKIP LOCKED")
_NEW_LIST = "SELECT list_id FROM lists WHERE participant_id IS NULL AND completed = 0 {guard}ORDER BY list_id LIMIT 1 FOR UPDATE SKIP LOCKED"
_FREE_LIST = f"COALESCE(({_LEFT_LIST}), ({_NEW_LIST}))"
#: which lists a claim may take: any; sessions of a watched comparison (first, while the rule admits one); the others
#: (each the condition of its index of free lists, :mod:`humeval.store.schema`: ``watched >= 0`` holds for every list)
_ANY, _WATCHED, _UNWATCHED = "AND watched >= 0 ", "AND watched > 0 ", "AND watched = 0 "
_CLAIM = {g: f"UPDATE lists SET participant_id = :pid, expires_at = :exp WHERE list_id = {_FREE_LIST.format(guard=g)} "
             "RETURNING list_id" for g in (_ANY, _WATCHED, _UNWATCHED)}
_CLAIM_OLD_SQLITE = f"UPDATE lists SET participant_id = :pid, expires_at = :exp WHERE list_id = :l AND {_FREE}"
_SET_LIST = "UPDATE participants SET list_id = :l WHERE participant_id = :pid"
_EVENT = "INSERT INTO events (at, kind, participant_id, data) VALUES (:now, :kind, :pid, :data)"
_LIST_CANDIDATES = (
    "SELECT lt.position, lt.task_id FROM list_tasks lt JOIN tasks t ON t.task_id = lt.task_id "
    "WHERE lt.list_id = :l AND lt.assignment_id IS NULL AND t.closed = 0 "
    "AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.participant_id = :pid AND a.task_id = lt.task_id) "
    f"ORDER BY lt.position LIMIT {_CANDIDATES}"
)
_POOL_CANDIDATES = (
    "SELECT t.task_id FROM tasks t WHERE t.open = 1 AND t.closed = 0 AND t.kind = 'task' "
    "AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.participant_id = :pid AND a.task_id = t.task_id) "
    f"ORDER BY t.seq LIMIT {_CANDIDATES}"
)
_TAKE = (
    "UPDATE tasks SET taken = taken + 1, open = CASE WHEN taken + 1 >= cap THEN 0 ELSE 1 END "
    "WHERE task_id = :t AND taken < cap AND closed = 0"
)
_LEASE = (
    "INSERT INTO assignments (assignment_id, participant_id, task_id, list_id, position, display, status, created_at, expires_at) "
    "VALUES (:aid, :pid, :t, :l, :pos, :display, 'leased', :now, :exp)"
)
_LIST_POSITION = "UPDATE list_tasks SET assignment_id = :aid WHERE list_id = :l AND position = :pos"
_LIST_DONE = "UPDATE lists SET completed = 1 WHERE list_id = :l"
_LIST_COMPLETED = "SELECT completed FROM lists WHERE list_id = :l"
_COMPLETED = "UPDATE participants SET completed_at = :now WHERE participant_id = :pid"
_WITHDRAWN = "SELECT 1 FROM assignments WHERE participant_id = :pid AND status = 'withdrawn' LIMIT 1"


def _create(
    db: Sql, ctx: StoreContext, participant_id: str, task_id: str, now: float, done: int,
    list_id: str | None = None, position: int | None = None,
) -> AssignmentView:
    task = ctx.tasks[task_id]
    display = display_order(ctx, participant_id, task)
    assignment_id = ctx.assignment_id(task, secrets.token_hex(12))
    expires = now + ctx.reservation(done)
    db.run(_LEASE, {"aid": assignment_id, "pid": participant_id, "t": task_id, "l": list_id, "pos": position,
                    "display": json.dumps(display), "now": now, "exp": expires})
    if list_id is not None:
        db.run(_LIST_POSITION, {"aid": assignment_id, "l": list_id, "pos": position})
        db.run(RENEW_LIST, {"l": list_id, **ctx.list_hold(now, ctx.reservation(done))})
    return AssignmentView(assignment_id, task, display, expires, _progress(ctx, done, list_id))


def _claim_list(conn: Connection, ctx: StoreContext, participant_id: str, current: str | None, now: float,
                done: int) -> str | None:
    """The participant's list, claiming a free (or abandoned) one when they hold none.

    One list per participant: someone who judged tasks of a list and lost it (idle beyond
    its lease, it went to the next participant) gets no second list. A list is reserved for
    :meth:`StoreContext.reservation` seconds: briefly until the participant's first submit.
    A list holding watched pair tasks is a session the stopping rule admits
    (:func:`humeval.store.live.admissions`): taken first while it admits one, else another list.
    """
    db = sql_of(conn)
    if current is not None and holds(db, participant_id, current):
        return current
    if current is not None and done > 0:
        return None
    key = {"pid": participant_id, "exp": now + ctx.reservation(0), "now": now}
    list_id = None
    for guard in _claimable(conn, ctx):
        if db.returning:
            list_id = db.scalar(_CLAIM[guard], key)
        else:  # SQLite before 3.35: the writer holds the database between the two statements
            list_id = db.scalar("SELECT " + _FREE_LIST.format(guard=guard), key)
            if list_id is not None:
                db.run(_CLAIM_OLD_SQLITE, {**key, "l": list_id})
        if list_id is not None:
            break
    if list_id is None:
        return None
    db.run(_SET_LIST, {"l": list_id, "pid": participant_id})
    db.run(_EVENT, _claimed_event(participant_id, list_id, now))
    return str(list_id)


def _claimable(conn: Connection, ctx: StoreContext) -> tuple[str, ...]:
    """The kinds of list a claim may take now, in order of preference."""
    if not ctx.list_watched:
        return (_ANY,)
    admitted = sessions_wanted(admissions(conn, ctx))
    if admitted is None:  # every comparison decided: the lists left hold other tasks too
        return (_ANY,)
    return (_WATCHED, _UNWATCHED) if admitted > 0 else (_UNWATCHED,)


def idle_reason(conn: Connection, ctx: StoreContext) -> str:
    """Why a participant who has done nothing gets no list: ``wait`` (the stopping rule admits no session now,
    one may open later) or ``closed`` (no list is left for them)."""
    if any(a.outcome == "continue" and a.free > 0 for a in admissions(conn, ctx, lock=False)):
        return "wait"
    return "closed"


def _claimed_event(participant_id: str, list_id: str, now: float) -> dict[str, Any]:
    return {"now": now, "kind": "list_claimed", "pid": participant_id, "data": json.dumps({"list_id": list_id})}


def next_assignment(conn: Connection, ctx: StoreContext, participant_id: str) -> AssignmentView | Progress:
    """The participant's current or next assignment, or their final progress when nothing is left."""
    now = time.time()
    if now - ctx.last_reap > REAP_EVERY:
        ctx.last_reap = now
        reap(conn, now)
        settle_abandoned(conn, ctx, now)
    db = sql_of(conn)
    if db.pg:  # SQLite's statements cost microseconds (no round trips): the step-by-step path below is cheaper
        fast = _next_fast(db, ctx, participant_id, now)
        if fast is not None:
            return fast
        db.ensure_transaction()  # the fast path may have committed what it did (a touch, a claim)
    key = {"pid": participant_id, "now": now}
    if db.returning:  # one statement: last_seen, the participant's row (and its row lock on PostgreSQL)
        p = db.one(_TOUCH_RETURNING, key)
    else:
        p = db.one(_PARTICIPANT, key)
    if p is None:
        raise Refusal("unknown_participant", "this token names no participant of this study; enter again", status=401)
    consented_at, completed_at, list_id = p
    if ctx.protocol.presentation.consent and consented_at is None:
        raise Refusal("consent_required", "the participant has not given consent yet (POST /api/v1/consent)", status=403)
    if not db.returning:
        db.run(_TOUCH, key)
    done, active, lapsed = _mine(db.all(_MINE, key), now)  # the participant's few assignments
    if active is not None:
        return AssignmentView(active[0], ctx.tasks[active[1]], tuple(json.loads(active[2])), active[3],
                              _progress(ctx, done, list_id))
    if done == 0 and lapsed >= FIRST_LEASES:  # reserved twice and never answered: no third reservation
        release_list(db, participant_id)
        return replace(_progress(ctx, 0, list_id, finished=True), reason="closed")
    if ctx.watched and is_settled(db, participant_id):
        return _progress(ctx, done, list_id, finished=True)  # settled: their judgements are final
    if ctx.strategy is None:
        claimed = _claim_list(conn, ctx, participant_id, list_id, now, done)
        view = _from_list(db, ctx, participant_id, claimed, now, done) if claimed is not None else None
        while view is None and claimed is not None and done == 0 and db.scalar(_LIST_COMPLETED, {"l": claimed}):
            # the list held only tasks the stopping rule closed: one who has done nothing yet takes the next free list
            claimed = _claim_list(conn, ctx, participant_id, None, now, done)
            view = _from_list(db, ctx, participant_id, claimed, now, done) if claimed is not None else None
        list_id = claimed or list_id
    else:
        view = _from_pool(conn, db, ctx, participant_id, now, done)
    if view is not None:
        return view
    final = _progress(ctx, done, list_id, finished=True)
    if done == 0 and ctx.watched and db.one(_WITHDRAWN, key) is not None:
        final = replace(final, completed=True)  # the rule decided during their first task: a session, paid whole
    if final.completed and completed_at is None:
        db.run(_COMPLETED, key)
    if final.completed:
        settle(conn, ctx, participant_id, now)
    elif ctx.watched and ctx.strategy is None:
        release_list(db, participant_id)
        return replace(final, reason=idle_reason(conn, ctx))
    return final


# -- PostgreSQL's fast path: two batches (two round trips) --------------------------------------------------
# Batch 1 locks and touches the participant and reads, in the same statement, their list's holder, their
# assignments and the candidate tasks (their list's first open tasks in order; the pool's in a statement of
# its own); for a participant this process has not seen holding a list, it first claims a free list. Batch 2
# leases the first candidate that still has room in one statement (data-modifying CTEs), choosing it in SQL:
# the keys of the candidates' assignments are made in Python beforehand. What the fast path does not cover (a
# participant who lost their list, a list done or closed, nothing left, the last task of a pool share, goals
# over K systems) goes on statement by statement below, in a transaction of its own.
_CLAIM_NEW = (
    "UPDATE lists SET participant_id = :pid, expires_at = :exp WHERE list_id = "
    + _FREE_LIST.format(guard=_ANY + "AND EXISTS (SELECT 1 FROM participants p WHERE p.participant_id = :pid "
                              "AND p.list_id IS NULL AND (p.consented_at IS NOT NULL OR :free = 1)) ")
    + " RETURNING list_id"
)
_SET_NEW_LIST = (
    "UPDATE participants SET list_id = (SELECT l.list_id FROM lists l WHERE l.participant_id = participants.participant_id "
    "AND l.completed = 0 ORDER BY l.list_id LIMIT 1) WHERE participant_id = :pid AND list_id IS NULL "
    "AND EXISTS (SELECT 1 FROM lists l WHERE l.participant_id = participants.participant_id AND l.completed = 0)"
)
#: the participant's state in one row: consent, completion, their list and who holds it, their assignments
#: (JSON) and, for the ``list`` strategy, the list's first tasks they may be given (JSON)
_STATE = (
    "UPDATE participants SET last_seen = :now WHERE participant_id = :pid RETURNING consented_at, completed_at, "
    "list_id, (SELECT l.participant_id FROM lists l WHERE l.list_id = participants.list_id), "
    "(SELECT json_agg(json_build_array(a.assignment_id, a.task_id, a.display, a.expires_at, a.status, a.created_at)) "
    "FROM assignments a WHERE a.participant_id = :pid){candidates}"
)
_STATE_LIST = _STATE.format(candidates=(
    ", (SELECT json_agg(json_build_array(c.position, c.task_id) ORDER BY c.position) FROM (SELECT lt.position, "
    "lt.task_id FROM list_tasks lt JOIN tasks t ON t.task_id = lt.task_id WHERE lt.list_id = participants.list_id "
    "AND lt.assignment_id IS NULL AND t.closed = 0 AND NOT EXISTS (SELECT 1 FROM assignments a "
    f"WHERE a.participant_id = :pid AND a.task_id = lt.task_id) ORDER BY lt.position LIMIT {_STATE_CANDIDATES}) c)"))
_STATE_POOL = _STATE.format(candidates="")
#: the first candidate with room leased: the assignment, its task's cap, its list position and the list's lease
_LEASE_FIRST = (
    "WITH c (pos, task_id, display, ord, aid) AS (VALUES {values}), "
    "ins AS (INSERT INTO assignments (assignment_id, participant_id, task_id, list_id, position, display, status, "
    "created_at, expires_at) SELECT c.aid, :who, t.task_id, :list, {position}, c.display, 'leased', :now, :exp "
    "FROM c JOIN tasks t ON t.task_id = c.task_id WHERE t.taken < t.cap AND t.closed = 0 "
    "ORDER BY c.ord LIMIT 1 FOR UPDATE OF t RETURNING assignment_id, task_id, position), "
    "took AS (UPDATE tasks SET taken = taken + 1, open = CASE WHEN taken + 1 >= cap THEN 0 ELSE 1 END "
    "WHERE task_id = (SELECT task_id FROM ins)){list_steps} "
    "SELECT assignment_id, task_id FROM ins"
)
_LEASE_PLACED = (
    ", placed AS (UPDATE list_tasks SET assignment_id = (SELECT assignment_id FROM ins) WHERE list_id = :l "
    "AND position = (SELECT position FROM ins))"
)
_LEASE_LIST_STEPS = _LEASE_PLACED + f", held AS ({RENEW_LIST} AND EXISTS (SELECT 1 FROM ins))"
#: a lease that goes with the participant's answer (:func:`lease_with_answer`): the next position's task taken (its
#: row updated, which locks it) only when that answer was stored (``:jkey``), the participant still holds the list
#: and has no other lease, the position is free and the task new to them (what the state read checks on the page's
#: way); then the assignment inserted and the position filled. The list is read by its key and the participant's
#: leases among their assignments (the conditions are not where an index on the holder or the status could serve
#: them: such a scan walks every holder's or every lease's entries, dead versions included)
_LEASE_ANSWERED = (
    "WITH took AS (UPDATE tasks SET taken = taken + 1, open = CASE WHEN taken + 1 >= cap THEN 0 ELSE 1 END "
    "WHERE task_id = :t0 AND taken < cap AND closed = 0 "
    "AND EXISTS (SELECT 1 FROM judgements j WHERE j.idempotency_key = :jkey AND j.assignment_id = :jaid) "
    "AND (SELECT h.participant_id = :gp AND h.completed = 0 FROM lists h WHERE h.list_id = :l) "
    "AND (SELECT count(*) FILTER (WHERE m.status = 'leased') FROM assignments m WHERE m.participant_id = :gp) = 0 "
    "AND EXISTS (SELECT 1 FROM list_tasks x WHERE x.list_id = :l AND x.position = :p0 AND x.assignment_id IS NULL) "
    "AND NOT EXISTS (SELECT 1 FROM assignments m WHERE m.participant_id = :gp AND m.task_id = :t0) RETURNING task_id), "
    "ins AS (INSERT INTO assignments (assignment_id, participant_id, task_id, list_id, position, display, status, "
    "created_at, expires_at) SELECT :a0, :who, task_id, :list, :p0, :d0, 'leased', :now, :exp FROM took "
    "RETURNING assignment_id, task_id, position)" + _LEASE_PLACED + " SELECT assignment_id, task_id FROM ins"
)
#: PostgreSQL: this transaction's commit returns before its WAL reaches the disk (a crash of the database
#: server may forget the last leases, never a judgement: a submit commits synchronously)
_ASYNC_COMMIT = "SET LOCAL synchronous_commit TO OFF"
#: participants :attr:`StoreContext.holding` remembers before it starts again
_HOLDING_MAX = 100_000


def _next_fast(db: Sql, ctx: StoreContext, participant_id: str, now: float) -> AssignmentView | Progress | None:
    """The common cases of :func:`next_assignment` in two batches; None (nothing changed but the
    participant's ``last_seen`` and maybe a claimed list, possibly committed) for the others."""
    listed = ctx.strategy is None
    if not listed and (ctx.strategy.same_worker or any(c.multi for c in ctx.comparisons.values())):  # type: ignore[union-attr]
        return None
    key = {"pid": participant_id, "now": now, "exp": now + ctx.reservation(0),
           "free": 0 if ctx.protocol.presentation.consent else 1}
    steps: list[tuple[str, dict[str, Any] | None]] = []
    # a new participant's claim: a session of a watched comparison is admitted on the step-by-step way
    claiming = listed and participant_id not in ctx.holding and not ctx.list_watched
    if claiming:  # the participant's row first (the order every operation locks in), then a free list
        steps += [(_TOUCH, key), (_CLAIM_NEW, key), (_SET_NEW_LIST, key)]
    steps.append((_STATE_LIST if listed else _STATE_POOL, key))
    if ctx.watched:
        steps.append((_SETTLED, key))
    if not listed:
        steps.append((_POOL_CANDIDATES, key))
    got = db.batch(steps)
    claimed = got[1].scalar if claiming else None
    got = got[3:] if claiming else got
    p = got[0].first
    if p is None:
        raise Refusal("unknown_participant", "this token names no participant of this study; enter again", status=401)
    consented_at, completed_at, list_id, holder, mine = p[:5]
    if ctx.protocol.presentation.consent and consented_at is None:
        raise Refusal("consent_required", "the participant has not given consent yet (POST /api/v1/consent)", status=403)
    done, active, lapsed = _mine(mine or (), now)
    if active is None and done == 0 and lapsed >= FIRST_LEASES:
        return None  # no third reservation before a first answer: the step-by-step way says so
    if listed:
        if list_id is None or holder != participant_id:
            ctx.holding.discard(participant_id)
            return None  # lost their list (or none free): the slow path decides
        if len(ctx.holding) >= _HOLDING_MAX:
            ctx.holding.clear()
        ctx.holding.add(participant_id)
        candidates: list[tuple[int | None, str]] = [(pos, t) for pos, t in p[5] or ()]
    else:
        candidates = [(None, r[0]) for r in got[-1].rows]
    if active is not None:
        return AssignmentView(active[0], ctx.tasks[active[1]], tuple(json.loads(active[2])), active[3],
                              _progress(ctx, done, list_id))
    if ctx.watched and got[1].first is not None:
        return _progress(ctx, done, list_id, finished=True)  # settled: their judgements are final
    if not candidates and listed and done > 0 and not ctx.watched:
        # the list is done: the participant is finished (no stopping rule to settle them for)
        steps = [(_LIST_DONE, {"l": list_id})] + ([(_COMPLETED, key)] if completed_at is None else [])
        db.batch(steps, commit=True)
        return _progress(ctx, done, list_id, finished=True)
    if not candidates or (not listed and (done >= ctx.per_participant or any(t in ctx.watched for _, t in candidates))):
        return None
    # the first few: their display orders are computed beforehand, and the first one usually has room
    return _lease_first(db, ctx, participant_id, candidates, list_id if listed else None, now, done, claimed)


def _mine(rows: Iterable[tuple[Any, ...]], now: float) -> tuple[int, tuple[Any, ...] | None, int]:
    """(tasks done, the live lease made first, leases that ran out) from the participant's assignments."""
    done = lapsed = 0
    active = None
    for row in rows:
        if row[4] == "done":
            done += 1
        elif row[4] == "expired" or (row[4] == "leased" and row[3] < now):
            lapsed += 1
        elif row[4] == "leased" and (active is None or row[5] < active[5]):
            active = row
    return done, active, lapsed


def _lease_first(db: Sql, ctx: StoreContext, participant_id: str, candidates: list[tuple[int | None, str]],
                 list_id: str | None, now: float, done: int, claimed: str | None) -> AssignmentView | None:
    """Lease the first candidate with room, in one batch that commits (PostgreSQL) whatever it leased."""
    lease = Lease(ctx, participant_id, candidates, list_id, now, done)
    steps: list[tuple[str, dict[str, Any] | None]] = []
    if db.pg:  # a lease is not an acknowledged judgement: its commit need not wait for the disk
        steps.append((_ASYNC_COMMIT, None))
    if claimed is not None:
        steps.append((_EVENT, _claimed_event(participant_id, claimed, now)))
    steps.append(lease.statement())
    return lease.leased(db.batch(steps, commit=True)[-1].first)


class Lease:
    """The statement that leases the first of ``candidates`` (list positions, or pool tasks) with room, and
    what it leased; the positions after it are remembered for the participant's next lease (PostgreSQL).
    ``answered``: a lease sent with the participant's answer (:func:`lease_with_answer`), of the next position."""

    def __init__(self, ctx: StoreContext, participant_id: str, candidates: list[tuple[int | None, str]],
                 list_id: str | None, now: float, done: int, *, answered: bool = False) -> None:
        self.ctx, self.participant_id, self.list_id, self.done = ctx, participant_id, list_id, done
        self.answered = answered
        # with an answer, the next position only: it has room but for a stopping rule (not used here) or a rare
        # expired lease, and every candidate costs the statement its guards (the page's way then decides)
        first = 1 if answered else _FAST_CANDIDATES
        self.rest = candidates[first:]
        self.candidates = candidates[:first]
        token = secrets.token_hex(12)
        self.expires = now + ctx.reservation(done)
        # ``who``/``list``: the values inserted; ``l``: compared with a column (PostgreSQL types each parameter once)
        self.key: dict[str, Any] = {"who": participant_id, "list": list_id, "l": list_id, "now": now,
                                    "exp": self.expires}
        if list_id is not None and not answered:
            self.key.update(ctx.list_hold(now, ctx.reservation(done)))
        self.displays: dict[str, tuple[str, ...]] = {}
        self.values = []
        for k, (pos, task_id) in enumerate(self.candidates):
            task = ctx.tasks[task_id]
            self.displays[task_id] = display = display_order(ctx, participant_id, task)
            self.key[f"p{k}"], self.key[f"t{k}"], self.key[f"d{k}"], self.key[f"o{k}"], self.key[f"a{k}"] = (
                pos, task_id, json.dumps(display), k, ctx.assignment_id(task, token))
            self.values.append(f"(:p{k}, :t{k}, :d{k}, :o{k}, :a{k})")

    @property
    def tasks(self) -> list[str]:
        return [t for _, t in self.candidates]

    def statement(self) -> tuple[str, dict[str, Any]]:
        """The lease (with an answer, :data:`_LEASE_ANSWERED`: the list's hold was renewed by the answer)."""
        if self.answered:
            return _LEASE_ANSWERED, self.key
        listed = self.list_id is not None
        return _LEASE_FIRST.format(values=", ".join(self.values), position="c.pos" if listed else "NULL",
                                   list_steps=_LEASE_LIST_STEPS if listed else ""), self.key

    def leased(self, row: tuple[Any, ...] | None) -> AssignmentView | None:
        """What the statement leased (its returned row), or None; remembers the positions after it."""
        upcoming = self.ctx.upcoming
        upcoming.pop(self.participant_id, None)
        if row is None:
            return None
        aid, task_id = row
        if self.list_id is not None:
            after = self.candidates[self.tasks.index(task_id) + 1:]
            if after or self.rest:
                if len(upcoming) >= _HOLDING_MAX:
                    upcoming.clear()
                upcoming[self.participant_id] = (self.list_id, self.done, after + self.rest)
        return AssignmentView(aid, self.ctx.tasks[task_id], self.displays[task_id], self.expires,
                              _progress(self.ctx, self.done, self.list_id))


def lease_with_answer(ctx: StoreContext, participant_id: str, assignment_id: str, idempotency_key: str,
                      now: float) -> Lease | None:
    """PostgreSQL, ``list`` strategy: the lease of the participant's next task, sent in the round trip
    and the transaction of their answer (``idempotency_key`` for ``assignment_id``), from the positions of their
    list this process read last (:attr:`StoreContext.upcoming`); None when it has none.

    The statement leases only when the answer was stored, the participant still holds the list and has no other
    lease, the position is free and the task new to them; else nothing (and the page's way decides). Positions
    freed again before those read (an expired lease of theirs) wait until the participant's next page."""
    found = ctx.upcoming.pop(participant_id, None)
    if found is None or ctx.strategy is not None or ctx.watched:
        return None
    list_id, done, candidates = found
    lease = Lease(ctx, participant_id, candidates, list_id, now, done + 1, answered=True)
    lease.key.update({"jkey": idempotency_key, "jaid": assignment_id, "gp": participant_id})
    return lease


def _from_list(db: Sql, ctx: StoreContext, participant_id: str, list_id: str, now: float, done: int) -> AssignmentView | None:
    candidates = db.all(_LIST_CANDIDATES, {"l": list_id, "pid": participant_id})
    for position, task_id in candidates:  # a session admitted is served whole (closed tasks aside)
        if db.run(_TAKE, {"t": task_id}) == 1:
            return _create(db, ctx, participant_id, task_id, now, done, list_id, position)
    if not candidates:
        db.run(_LIST_DONE, {"l": list_id})
    return None


def _from_pool(conn: Connection, db: Sql, ctx: StoreContext, participant_id: str, now: float, done: int) -> AssignmentView | None:
    if done >= ctx.per_participant:
        return None
    if ctx.strategy is not None and ctx.strategy.same_worker and not _is_fixed_worker(conn, participant_id):
        return None
    groups = preferred_tasks(conn, ctx, now)
    if groups is None:
        candidates: Iterable[str] = [r[0] for r in db.all(_POOL_CANDIDATES, {"pid": participant_id})]
    else:  # a goal over K systems: labels still gathering votes first, then the most wanted pair's tasks
        started = [r[0] for r in db.all(_POOL_STARTED, {"pid": participant_id})]
        candidates = chain(started, (t for group in groups for t in _open_of(conn, group, participant_id)))
    for task_id in candidates:
        if task_id in ctx.watched and not has_room(db, ctx, task_id, now):
            if groups is not None:
                return None  # the goal's in-flight bound is shared by every pair: wait for evidence
            continue
        if db.run(_TAKE, {"t": task_id}) == 1:
            return _create(db, ctx, participant_id, task_id, now, done)
    return None


_POOL_STARTED = (
    "SELECT t.task_id FROM tasks t WHERE t.open = 1 AND t.closed = 0 AND t.kind = 'task' AND t.taken > 0 "
    "AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.participant_id = :pid AND a.task_id = t.task_id) "
    f"ORDER BY t.seq LIMIT {_CANDIDATES}"
)


def _open_of(conn: Connection, task_ids: list[str], participant_id: str) -> list[str]:
    """The open tasks among ``task_ids`` the participant has not had, in pool order (a few)."""
    if not task_ids:
        return []
    t, a = s.tasks.c, s.assignments.c
    mine = select(a.task_id).where(a.participant_id == participant_id)
    q = (select(t.task_id).where(t.task_id.in_(task_ids), t.open == 1, t.closed == 0, t.task_id.not_in(mine))
         .order_by(t.seq).limit(_CANDIDATES))
    return list(conn.execute(q).scalars())


def _is_fixed_worker(conn: Connection, participant_id: str) -> bool:
    """``fixed``: the first participant to ask becomes the one worker of the study."""
    m = s.meta.c
    holder = conn.execute(select(m.value).where(m.key == "fixed_worker")).scalar()
    if holder is None:
        conn.execute(insert(s.meta).values(key="fixed_worker", value=participant_id))
        return True
    return holder == participant_id
