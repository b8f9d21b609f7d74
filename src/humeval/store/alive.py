"""The service's heartbeat: time when no process of the study ran is not counted as a participant's inactivity.

A participant is settled as abandoned, and a lease reclaimed, by the time that passed since they were last seen
(:func:`humeval.store.live.settle_abandoned`, :func:`humeval.store.assign.reap`). A restart of the server, or a
pause of the whole service, would otherwise count as their inactivity: a restart of 64 s abandoned a participant
who never paused, under a lease of 15 s. So every process that serves the study beats (:func:`beat`: the ``meta``
row ``alive``, the latest time any process was up), at its start and every :data:`ALIVE_EVERY` seconds from the
server's lifespan; a beat that finds the last one more than :data:`GAP` seconds old takes the time between them
as a downtime and moves by it, in a transaction of its own (once, whichever process beats first):

* the leases live at the last beat (``assignments.expires_at``) and the lists held then (``lists.expires_at``),
* the last activity (``participants.last_seen``) of the unfinished participants not yet inactive for a lease then,

and records a ``downtime`` event (from, seconds, what was moved). A process that beats reaps only while the last
beat is fresh (:func:`fresh`, a read: no lock is taken inside an operation), so that nothing is reclaimed for a
downtime before it was moved (a service paused whole, then resumed: the first requests wait for the first beat to
reap). A downtime is measured from the last beat, so it
is at most :data:`ALIVE_EVERY` longer than the real one: a participant never loses time to it. A store used
without a server (the CLI, a notebook) does not beat, and nothing is moved for it.
"""

from __future__ import annotations

import json
import time

from sqlalchemy import Connection

from humeval.store.context import StoreContext
from humeval.store.sql import sql_of

__all__ = ["ALIVE_EVERY", "GAP", "beat", "fresh"]

#: seconds between two beats of a serving process
ALIVE_EVERY = 2.0
#: a beat this much later than the last one (of any process) found the service down in between
GAP = 2 * ALIVE_EVERY

_FIRST = "INSERT INTO meta (key, value) VALUES ('alive', :value) ON CONFLICT (key) DO NOTHING"
_LAST = "SELECT value FROM meta WHERE key = 'alive'"
_SET = "UPDATE meta SET value = :value WHERE key = 'alive'"
_LEASES = "UPDATE assignments SET expires_at = expires_at + :gap WHERE status = 'leased' AND expires_at >= :last"
_LISTS = ("UPDATE lists SET expires_at = expires_at + :gap WHERE participant_id IS NOT NULL AND completed = 0 "
          "AND expires_at >= :last")
_SEEN = "UPDATE participants SET last_seen = last_seen + :gap WHERE completed_at IS NULL AND last_seen >= :cut"
_EVENT = "INSERT INTO events (at, kind, participant_id, data) VALUES (:now, 'downtime', NULL, :data)"


def beat(conn: Connection, ctx: StoreContext, now: float | None = None) -> float:
    """Record that the service is up now; after a downtime (the last beat more than :data:`GAP` seconds ago) move
    the live leases, held lists and recent activity by it. Returns the downtime moved (0.0 when none)."""
    now = time.time() if now is None else now
    db = sql_of(conn)
    if db.run(_FIRST, {"value": repr(now)}) == 1:
        return 0.0  # the study's first beat
    # PostgreSQL: the row locked, so that one process moves a downtime once
    last = float(db.scalar(_LAST + (" FOR UPDATE" if db.pg else "")))
    db.run(_SET, {"value": repr(max(last, now))})
    gap = now - last
    if gap <= GAP:
        return 0.0
    key = {"gap": gap, "last": last, "cut": last - ctx.lease_seconds}
    moved = {"leases": db.run(_LEASES, key), "lists": db.run(_LISTS, key), "participants": db.run(_SEEN, key)}
    db.run(_EVENT, {"now": now, "data": json.dumps({"from": last, "seconds": round(gap, 3), **moved})})
    return gap


def fresh(conn: Connection, now: float) -> bool:
    """Whether the last beat (of any process) is at most :data:`GAP` seconds old, or none was ever made: a reap
    may run (a read, no lock)."""
    last = sql_of(conn).scalar(_LAST)
    return last is None or now - float(last) <= GAP
