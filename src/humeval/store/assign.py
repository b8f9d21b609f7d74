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
list in order (the first free place after the last one they were given, then the places freed behind
them); the labelling strategies serve the task pool in order, up to
``items_per_participant`` tasks per participant. An answer may carry the lease of the list's next
place in its own round trip (:func:`lease_after`).

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
from typing import Any, NamedTuple

from sqlalchemy import Connection, select

from humeval.design.tasks import Task
from humeval.store import schema as s
from humeval.store.alive import fresh
from humeval.store.context import RENEW_LIST, StoreContext
from humeval.store.lease import EVENT, FREE_PLACE, LEASE, TAKE, end_lease
from humeval.store.live import (
    SETTLED,
    SETTLED_ANY,
    admissions,
    has_room,
    open_waves,
    preferred_tasks,
    release_list,
    sessions_wanted,
    settle,
    settle_abandoned,
)
from humeval.store.participants import TOUCH
from humeval.store.records import AssignmentView, Progress
from humeval.store.refusal import Refusal
from humeval.store.sql import Rows, Sql, Step, sql_of

__all__ = [
    "FIRST_LEASES",
    "LeasePlan",
    "current_assignment",
    "display_order",
    "holds",
    "idle_reason",
    "lease_after",
    "looks",
    "next_assignment",
    "reap",
    "reap_due",
    "shown",
    "standing",
    "take",
]

REAP_EVERY = 2.0
#: leases a participant is given before their first answer (their reservations ran out before they answered)
FIRST_LEASES = 2
_CANDIDATES = 16


def display_order(ctx: StoreContext, participant_id: str, task: Task) -> tuple[str, ...]:
    """The systems in display order: a seeded shuffle per (study seed, participant, task); a practice item's outputs
    in the protocol's order (its expected answer names them so)."""
    systems = list(task.systems)
    if ctx.protocol.presentation.randomise_order and len(systems) > 1 and task.kind != "practice":
        key = f"{ctx.protocol.study.seed}|{participant_id}|{task.task_id}".encode()
        random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big")).shuffle(systems)
    return tuple(systems)


def take(db: Sql, task_id: str, assignment_id: str) -> bool:
    """Reserve one unit of the task's cap for the assignment; False when full or closed."""
    return db.run(TAKE, {"t": task_id, "aid": assignment_id}) == 1


def holds(db: Sql, participant_id: str, list_id: str) -> bool:
    """Whether the participant holds the list now."""
    return bool(db.scalar(_HOLDER, {"l": list_id}) == participant_id)


_EXPIRED = ("SELECT assignment_id, task_id, participant_id FROM assignments "
            "WHERE status = 'leased' AND expires_at < :now LIMIT 500")


def reap(conn: Connection, now: float) -> int:
    """Expire leases past their time; return how many were reclaimed."""
    db = sql_of(conn)
    return sum(end_lease(db, "expired", lease, now) for lease in db.all(_EXPIRED, {"now": now}))


#: a participant's standing: consent, completion (or settled: a live stopping rule took their work, final), list and
#: tasks done
_STANDING = ("SELECT consented_at, completed_at, list_id, (SELECT count(*) FROM assignments a WHERE a.participant_id = :pid "
             "AND a.status = 'done'), " + SETTLED_ANY + " FROM participants WHERE participant_id = :pid")


def standing(conn: Connection, ctx: StoreContext, participant_id: str, *, why: bool = False,
             ) -> tuple[bool, str | None, Progress]:
    """(consented, their list, their progress): tasks done out of their list (or their share of the pool),
    ``completed`` once they finished their work; ``why``: with the ``reason`` one who has done nothing has no list
    (the stopping rule's admission read)."""
    found = sql_of(conn).one(_STANDING, {"pid": participant_id}) or (None, None, None, 0, False)
    consented, completed, list_id, done, settled = found
    prog = _progress(ctx, int(done), list_id, completed is not None)
    if why and ctx.list_watched and list_id is None and prog.done == 0:
        prog = replace(prog, reason=idle_reason(conn, ctx))
    # one whose session began and was settled (abandoned, then back or not yet) has completed it: never refused the code
    return consented is not None, list_id, replace(prog, completed=completed is not None or (bool(settled) and done > 0))


def _progress(ctx: StoreContext, done: int, list_id: str | None, finished: bool = False) -> Progress:
    total = ctx.per_participant
    if ctx.strategy is None and list_id is not None:
        total = ctx.list_sizes.get(list_id) or total
    total = max(total, done)
    return Progress(done, total, finished=finished, completed=finished and done > 0)


# -- the hot path: fixed statements on the driver connection (see humeval.store.sql) --------
#: the participant's row, seen now (and locked on PostgreSQL: their operations queue on it)
_TOUCH_RETURNING = (TOUCH + " RETURNING consented_at, completed_at, list_id, "
                    "(SELECT l.participant_id FROM lists l WHERE l.list_id = participants.list_id)")
_MINE = "SELECT assignment_id, task_id, display, expires_at, status, created_at FROM assignments WHERE participant_id = :pid"
#: the participant and their assignments, in one statement (a page shown again)
_SEEN = ("SELECT p.consented_at, p.list_id, a.assignment_id, a.task_id, a.display, a.expires_at, a.status, a.created_at "
         "FROM participants p LEFT JOIN assignments a ON a.participant_id = p.participant_id WHERE p.participant_id = :pid")
_HOLDER = "SELECT participant_id FROM lists WHERE list_id = :l"
_MY_LIST = "(SELECT p.list_id FROM participants p WHERE p.participant_id = :pid)"
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
_SET_LIST = "UPDATE participants SET list_id = :l WHERE participant_id = :pid"
#: the places of a list left for the participant (its open tasks they have not had)
_LEFT_OF = ("FROM list_tasks lt JOIN tasks t ON t.task_id = lt.task_id WHERE lt.list_id = {l} AND "
            + FREE_PLACE.format(l="lt.list_id", pos="lt.position")
            + " AND t.closed = 0 AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.participant_id = :pid "
            "AND a.task_id = lt.task_id)")
#: the list's next task for the participant with room now (a full one may have room again later): the first place
#: after the last one they were given in the list, else the first (a place freed behind them is served at the list's end;
#: a list given on may have places before 0, the new holder's own lead-in, :func:`lead_in`)
_NEXT_OF = ("SELECT lt.position, lt.task_id " + _LEFT_OF + " AND t.taken < t.cap ORDER BY lt.position <= COALESCE("
            "(SELECT max(m.position) FROM assignments m WHERE m.participant_id = :pid AND m.list_id = {l}), "
            "-2147483648), lt.position LIMIT 1")
#: the next task of the list the participant just claimed (the one they hold, not done, reserved until ``:exp``)
_CLAIMED_NEXT = _NEXT_OF.format(l="(SELECT c.list_id FROM lists c WHERE c.participant_id = :pid AND c.completed = 0 "
                                  "AND c.expires_at = :exp LIMIT 1)")
_MY_NEXT = _NEXT_OF.format(l=_MY_LIST)
#: the list marked done when no place of it is left for the participant, with room or not
_LIST_SPENT = "UPDATE lists SET completed = 1 WHERE list_id = :l AND NOT EXISTS (SELECT 1 " + _LEFT_OF.format(l=":l") + ")"
_POOL_CANDIDATES = (
    "SELECT t.task_id FROM tasks t WHERE t.open = 1 AND t.closed = 0 AND t.kind = 'task' "
    "AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.participant_id = :pid AND a.task_id = t.task_id) "
    f"ORDER BY t.seq LIMIT {_CANDIDATES}"
)
_COMPLETED = "UPDATE participants SET completed_at = :now WHERE participant_id = :pid"
_WITHDRAWN = "SELECT 1 FROM assignments WHERE participant_id = :pid AND status = 'withdrawn' LIMIT 1"


#: PostgreSQL: a lease's commit returns before its WAL reaches the disk (a crash of the database server may
#: forget the last leases, never a judgement: a transaction that stored one, :attr:`Sql.durable`, commits in full)
_ASYNC_COMMIT = "SET LOCAL synchronous_commit TO OFF"


#: a take lost to another transaction between the read of the next task and its take (the operation reads again)
_LOST = object()


def _lease(db: Sql, ctx: StoreContext, participant_id: str, task_id: str, now: float, done: int,
           list_id: str | None = None, position: int | None = None, claimed: list[Step] | None = None) -> Any:
    """Take a unit of the task's cap and lease it to the participant, in one batch that commits (after ``claimed``,
    the statements that give them the list): the :class:`AssignmentView`, or :data:`_LOST` when the task had no
    room left (nothing leased)."""
    plan = LeasePlan(ctx, participant_id, task_id, now, done, list_id, position)
    first = ([(_ASYNC_COMMIT, None)] if db.pg and not db.durable else []) + (claimed or [])
    got = db.batch(first + plan.steps, commit=True)
    return plan.view if plan.leased(got[len(first):]) else _LOST


#: participants :attr:`StoreContext.upcoming` remembers before it starts again (~0.5 kB each; one forgotten costs
#: its next answer a round trip)
_UPCOMING_MAX = 20_000


class LeasePlan:
    """The statements of a lease (:data:`TAKE`, with ``guard`` and its ``params``, then :data:`LEASE`, which reads
    the task of a list's next place; of a list's place, the list's hold renewed) and the :attr:`view` of what they
    lease."""

    def __init__(self, ctx: StoreContext, participant_id: str, task_id: str, now: float, done: int,
                 list_id: str | None = None, position: int | None = None, guard: str = "", held: float = 0.0,
                 **params: Any) -> None:
        self.ctx, self.participant_id, self.list_id, self.position = ctx, participant_id, list_id, position
        task = ctx.tasks[task_id]
        display = display_order(ctx, participant_id, task)
        assignment_id = ctx.assignment_id(task, secrets.token_hex(12))
        expires = now + ctx.reservation(done)
        row = {"aid": assignment_id, "pid": participant_id, "t": task_id, "l": list_id, "pos": position,
               "display": json.dumps(display), "now": now, "exp": expires, **params}
        self.steps: list[Step] = [(TAKE + guard, row), (LEASE, row)]
        #: the list is held at least until then (renewed by a lease of this process); renewed when that is too soon
        self.held, self.hold = held, ctx.list_hold(now, ctx.reservation(done))
        if list_id is not None and self.hold["renew"] > held:
            self.steps.append((RENEW_LIST, {"l": list_id, **self.hold}))
        self.view = AssignmentView(assignment_id, task, display, expires, _progress(ctx, done, list_id))

    def leased(self, got: list[Rows], done: int | None = None) -> bool:
        """Whether the statements leased (``got``: what they gave; ``done``: the participant's tasks done, when the
        plan did not know them); a list's next place is remembered for the participant's answer (:func:`lease_after`)."""
        if got[1].rowcount != 1:
            return False
        if done is not None:
            self.view = replace(self.view, progress=_progress(self.ctx, done, self.list_id))
        if len(got) > 2:  # renewed: to the new hold, or it was held longer already
            self.held = self.hold["hold" if got[2].rowcount == 1 else "renew"]
        following = got[1].scalar
        if following is not None:
            upcoming = self.ctx.upcoming
            if len(upcoming) >= _UPCOMING_MAX:
                upcoming.clear()
            upcoming[self.participant_id] = (self.view, self.list_id, self.position + 1, following,  # type: ignore[operator,assignment]
                                             self.held)
        return True


#: the lease of the place after the one answered (:func:`lease_after`) is taken only when the answer is stored under
#: its key with its values (``:answered``: the assignment), the participant holds the list and has no live lease, the
#: place is free, after their last in the list (the next of :data:`_NEXT_OF`), and its task new to them
_AFTER_ANSWER = (
    " AND EXISTS (SELECT 1 FROM judgements j WHERE j.idempotency_key = :key AND j.assignment_id = :answered "
    "AND j.\"values\" = :values) AND EXISTS (SELECT 1 FROM lists WHERE list_id = :l AND participant_id = :pid "
    "AND completed = 0) AND NOT EXISTS (SELECT 1 FROM assignments m WHERE m.participant_id = :pid AND (m.task_id = :t "
    "OR (m.list_id = :l AND m.position >= :pos) OR (m.status = 'leased' AND m.expires_at >= :now))) AND "
    + FREE_PLACE.format(l=":l", pos=":pos"))


def _remembered(ctx: StoreContext, participant_id: str, assignment_id: str) -> tuple[Any, ...] | None:
    """What this process remembers of the participant's last lease (:attr:`StoreContext.upcoming`), if that lease
    is ``assignment_id``."""
    found = ctx.upcoming.get(participant_id)
    return found if found is not None and found[0].assignment_id == assignment_id else None


def shown(ctx: StoreContext, participant_id: str, assignment_id: str) -> tuple[Task, tuple[str, ...]] | None:
    """The task an assignment id names, with its outputs in the order the participant was shown them: remembered
    when this process gave them that lease last (:attr:`StoreContext.upcoming`), else read from the id (None when
    it names none). Only a hint: the store's row is what counts."""
    if (found := _remembered(ctx, participant_id, assignment_id)) is not None:
        return found[0].task, found[0].display
    task = ctx.task_of(assignment_id)
    return None if task is None else (task, display_order(ctx, participant_id, task))


def lease_after(ctx: StoreContext, participant_id: str, answered: str, now: float, **answer: Any) -> LeasePlan | None:
    """``list`` strategy, no stopping rule: the lease of the participant's next place, sent in the round trip of
    their answer to ``answered`` (its ``key`` and ``values``), when this process leased them ``answered`` and the list
    has a place after it (:attr:`StoreContext.upcoming`); None otherwise. It leases nothing when the place is not the
    list's next for them with room (:data:`_AFTER_ANSWER`): then :func:`next_assignment` decides."""
    found = _remembered(ctx, participant_id, answered)
    if found is None or ctx.strategy is not None or ctx.watched:
        return None
    del ctx.upcoming[participant_id]
    _, list_id, position, task_id, held = found
    return LeasePlan(ctx, participant_id, task_id, now, 1, list_id, position, _AFTER_ANSWER, held, answered=answered,
                     **answer)


class Claim(NamedTuple):
    """A list claimed for a participant: its next tasks for them with room (``(position, task_id)`` rows), and the
    statements that give it to them, sent with their first lease (none when they held it already)."""

    list_id: str
    following: list[tuple[Any, ...]]
    steps: list[Step]


def _claim_list(conn: Connection, ctx: StoreContext, participant_id: str, current: str | None, now: float,
                done: int) -> Claim | None:
    """A list claimed for a participant who holds none (``current``: the one they held before), with its first
    tasks for them; None when they may not have one or none is free.

    One list per participant: someone who judged tasks of a list and lost it (idle beyond
    its lease, it went to the next participant) gets no second list. A list is reserved for
    :meth:`StoreContext.reservation` seconds: briefly until the participant's first submit.
    A list holding watched pair tasks is a session the stopping rule admits
    (:func:`humeval.store.live.admissions`): taken first while it admits one, else another list.
    """
    db = sql_of(conn)
    if current is not None and done > 0:
        return None
    key = {"pid": participant_id, "exp": now + ctx.reservation(0), "now": now}
    for guard in _claimable(conn, ctx):
        got = db.batch([(_CLAIM[guard], key), (_CLAIMED_NEXT, key)])
        if (list_id := got[0].scalar) is not None:
            following = got[1].rows
            if lead_in(ctx) and _lead_again(db, ctx, str(list_id), participant_id):
                following = db.all(_CLAIMED_NEXT, key)
            event = {"now": now, "kind": "list_claimed", "pid": participant_id, "data": json.dumps({"list_id": list_id})}
            return Claim(str(list_id), following, [(_SET_LIST, {"l": list_id, "pid": participant_id}), (EVENT, event)])
    return None


def lead_in(ctx: StoreContext) -> int:
    """The places that open every list, which each participant who holds it answers for themselves: the practice
    items, then the qualification checks (``design.practice``, ``design.qualification``; positions 0 to this - 1)."""
    design = ctx.protocol.design
    return len(design.practice) + design.qualification if ctx.strategy is None else 0


#: a list given on (its lead-in answered by someone else): the lead-in's places (positions 0..lead - 1)
_LEAD = "SELECT position, task_id FROM list_tasks WHERE list_id = :l AND position >= 0 AND position < :lead ORDER BY position"
_LEAD_TAKEN = ("SELECT 1 FROM assignments WHERE list_id = :l AND position >= 0 AND position < :lead "
               "AND participant_id <> :pid AND status = 'done' LIMIT 1")
_FIRST_PLACE = "SELECT min(position) FROM list_tasks WHERE list_id = :l"
_LEAD_PLACE = "INSERT INTO list_tasks (list_id, position, task_id) VALUES (:l, :pos, :t)"
_LEAD_CAP = "UPDATE tasks SET cap = cap + 1, open = CASE WHEN closed = 0 THEN 1 ELSE open END WHERE task_id = :t"


def _lead_again(db: Sql, ctx: StoreContext, list_id: str, participant_id: str) -> bool:
    """A list given on after its holder answered its lead-in (:func:`lead_in`): the new holder gets places of their
    own for it, before the list's first place (negative positions, a unit of each task's cap more), so that they
    practise and qualify like anyone who starts a list, before any watched task. True when places were added."""
    lead = lead_in(ctx)
    params = {"l": list_id, "lead": lead, "pid": participant_id}
    if db.scalar(_LEAD_TAKEN, params) is None:
        return False
    places = db.all(_LEAD, params)
    first = min(0, int(db.scalar(_FIRST_PLACE, params) or 0))
    for k, (_, task_id) in enumerate(places):
        db.run(_LEAD_PLACE, {"l": list_id, "pos": first - len(places) + k, "t": task_id})
        db.run(_LEAD_CAP, {"t": task_id})
    return bool(places)


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


def current_assignment(conn: Connection, ctx: StoreContext, participant_id: str) -> AssignmentView | Progress:
    """The participant's live lease, read without writing anything (showing a page again); when they hold none
    (or are unknown, or must consent first), their next assignment (:func:`next_assignment`, which says why not)."""
    rows = sql_of(conn).batch([(_SEEN, {"pid": participant_id})], commit=True)[0].rows
    if rows and (rows[0][0] is not None or not ctx.protocol.presentation.consent):
        done, active, _ = _mine([r[2:] for r in rows if r[2] is not None], time.time())
        if active is not None:
            return _held(ctx, active, done, rows[0][1])
    return next_assignment(conn, ctx, participant_id)


def _held(ctx: StoreContext, active: tuple[Any, ...], done: int, list_id: str | None) -> AssignmentView:
    """The live lease ``active`` (a row of :data:`_MINE`) as the participant is shown it."""
    return AssignmentView(active[0], ctx.tasks[active[1]], tuple(json.loads(active[2])), active[3],
                          _progress(ctx, done, list_id))


def looks(ctx: StoreContext, participant_id: str, now: float) -> list[Step]:
    """The reads a next assignment starts from, in one round trip (an answer sends them with its own read): the
    participant's row (seen now, locked on PostgreSQL: their operations queue on it) with who holds their list,
    their few assignments, for the ``list`` strategy their list's next task for them with room, and whether they were settled
    when a stopping rule watches."""
    key = {"pid": participant_id, "now": now}
    steps: list[Step] = [(_TOUCH_RETURNING, key), (_MINE, key)]
    if ctx.strategy is None:
        steps.append((_MY_NEXT, key))
    if ctx.watched:
        steps.append((SETTLED, key))
    return steps


def next_assignment(conn: Connection, ctx: StoreContext, participant_id: str, *,
                    seen: list[Rows] | None = None) -> AssignmentView | Progress:
    """The participant's current or next assignment, or their final progress when nothing is left.

    ``seen``: what :func:`looks` read already, in this transaction."""
    now = time.time()
    reap_due(conn, ctx, now)
    db = sql_of(conn)
    for _ in range(_ATTEMPTS):
        got = seen if seen is not None else db.batch(looks(ctx, participant_id, now))
        found = _next(conn, db, ctx, participant_id, got, now)
        if found is not _LOST:
            return found  # type: ignore[no-any-return]
        seen = None  # a take lost to another transaction (which committed first): read again
    raise Refusal("busy", "the tasks were taken by others meanwhile; ask again", status=503)


def reap_due(conn: Connection, ctx: StoreContext, now: float) -> None:
    """Every :data:`REAP_EVERY` seconds in a process, with an operation that may lease: the leases that ran out are
    reclaimed and the participants who abandoned their sessions settled (in a process that beats, only while the
    last beat is fresh: a downtime is moved before anything is reclaimed for it, :mod:`humeval.store.alive`)."""
    if now - ctx.last_reap > REAP_EVERY:
        if ctx.heartbeat and not fresh(conn, now):
            return  # the service was down (or paused): the next beat moves the downtime, then a reap runs
        ctx.last_reap = now
        reap(conn, now)
        settle_abandoned(conn, ctx, now)
        open_waves(conn, ctx, now)


#: reads of a next assignment: a take lost between the read and the take (rare) makes the operation read again
_ATTEMPTS = 4


def _next(conn: Connection, db: Sql, ctx: StoreContext, participant_id: str, got: list[Rows], now: float) -> Any:
    p = got[0].first
    if p is None:
        raise Refusal("unknown_participant", "this token names no participant of this study; enter again", status=401)
    consented_at, completed_at, list_id, holder = p
    if ctx.protocol.presentation.consent and consented_at is None:
        raise Refusal("consent_required", "the participant has not given consent yet (POST /api/v1/consent)", status=403)
    done, active, lapsed = _mine(got[1].rows, now)  # the participant's few assignments
    if active is not None:
        return _held(ctx, active, done, list_id)
    if done == 0 and lapsed >= FIRST_LEASES:  # reserved twice and never answered: no third reservation
        release_list(db, participant_id)
        return replace(_progress(ctx, 0, list_id, finished=True), reason="closed")
    if ctx.watched and got[-1].first is not None:  # settled: their judgements are final
        final = _progress(ctx, done, list_id, finished=True)
        if completed_at is not None:  # (one whose first task the decision withdrew has done nothing, and completed)
            return replace(final, completed=True)
        if final.completed:  # abandoned, and back: their session ends with its code
            db.run(_COMPLETED, {"pid": participant_id, "now": now})
        return final
    spent: list[Step] = []
    if ctx.strategy is None:
        held = list_id is not None and holder == participant_id
        claim = Claim(list_id, got[2].rows, []) if held else _claim_list(conn, ctx, participant_id, list_id, now, done)
        view = _from_list(db, ctx, participant_id, claim, now, done)
        while view is None and claim is not None and done == 0 and db.run(*_spent(claim.list_id, participant_id)) == 1:
            # the list held only tasks the stopping rule closed: one who has done nothing yet takes the next free list
            claim = _claim_list(conn, ctx, participant_id, None, now, done)
            view = _from_list(db, ctx, participant_id, claim, now, done)
        if view is None and claim is not None:
            list_id = claim.list_id
            if done > 0:  # (one who has done nothing had the list's statement run by the loop's test)
                spent = [_spent(list_id, participant_id)]
    else:
        view = _from_pool(conn, db, ctx, participant_id, now, done)
    if view is not None:
        return view
    return _nothing_left(conn, db, ctx, participant_id, done, list_id, completed_at is not None, now, spent)


def _nothing_left(conn: Connection, db: Sql, ctx: StoreContext, participant_id: str, done: int, list_id: str | None,
                  marked: bool, now: float, spent: list[Step]) -> Progress:
    """A participant left with nothing (``spent``: their list marked done if no place of it is left for them):
    marked completed and settled, or (a stopping rule may admit them later) given back their list."""
    final = _progress(ctx, done, list_id, finished=True)
    key = {"pid": participant_id, "now": now}
    if done == 0 and ctx.watched and db.one(_WITHDRAWN, key) is not None:
        final = replace(final, completed=True)  # the rule decided during their first task: a session, paid whole
    steps = spent + ([(_COMPLETED, key)] if final.completed and not marked else [])
    if steps:  # with no stopping rule the operation's last statements: with its commit
        db.batch(steps, commit=not ctx.watched)
    if final.completed:
        settle(conn, ctx, participant_id, now)
    elif ctx.watched and ctx.strategy is None:
        release_list(db, participant_id)
        return replace(final, reason=idle_reason(conn, ctx))
    return final


def _mine(rows: Iterable[tuple[Any, ...]], now: float) -> tuple[int, tuple[Any, ...] | None, int]:
    """(tasks done, the live lease made first, leases that ran out) from the participant's assignments."""
    done = lapsed = 0
    active = None
    for row in rows:
        status = row[4]
        if status == "done":
            done += 1
        elif status == "expired" or (status == "leased" and row[3] < now):
            lapsed += 1
        elif status == "leased" and (active is None or row[5] < active[5]):
            active = row
    return done, active, lapsed


def _from_list(db: Sql, ctx: StoreContext, participant_id: str, claim: Claim | None, now: float, done: int) -> Any:
    """A lease of the claimed list's next task for the participant with room (a session admitted is served whole,
    closed tasks aside); None when no list was claimed or none of its tasks has room (:data:`_LOST` when its room
    was taken meanwhile)."""
    if claim is None:
        return None
    if not claim.following:
        if claim.steps:
            db.batch(claim.steps)  # a list claimed with no task for them now: theirs all the same
        return None
    position, task_id = claim.following[0]
    return _lease(db, ctx, participant_id, task_id, now, done, claim.list_id, position, claim.steps)


def _spent(list_id: str, participant_id: str) -> Step:
    """The statement that marks the list done when no place of it is left for the participant."""
    return _LIST_SPENT, {"l": list_id, "pid": participant_id}


def _from_pool(conn: Connection, db: Sql, ctx: StoreContext, participant_id: str, now: float, done: int) -> Any:
    if done >= ctx.per_participant:
        return None
    if ctx.strategy is not None and ctx.strategy.same_worker and not _is_fixed_worker(db, participant_id):
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
        return _lease(db, ctx, participant_id, task_id, now, done)
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


_FIXED_WORKER = "INSERT INTO meta (key, value) VALUES ('fixed_worker', :pid) ON CONFLICT (key) DO NOTHING"
_WORKER = "SELECT value FROM meta WHERE key = 'fixed_worker'"


def _is_fixed_worker(db: Sql, participant_id: str) -> bool:
    """``fixed``: the first participant to ask becomes the one worker of the study."""
    return bool(db.batch([(_FIXED_WORKER, {"pid": participant_id}), (_WORKER, None)])[1].scalar == participant_id)
