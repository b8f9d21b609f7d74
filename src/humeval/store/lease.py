"""A lease against a task's cap: taken, and ended when it is not answered (expired, withdrawn).

A task's ``taken`` counts its live leases and its judgements. The cap rule is written here
once: :data:`TAKE` reserves one unit only while ``taken < cap`` (the database applies the
conditional update atomically, so caps hold across processes), :data:`RELEASE` gives one back.
``open`` is what ``taken < cap`` says, stored for the pool's index (``ix_tasks_pool``) and
written by these two statements only (and set again where a cap is raised): SQLite's planner does not
take a partial index on ``taken < cap`` for the pool's read (at 100,000 items it read the 600,000 tasks
by another index and sorted them, 407 ms, against 0.4 ms). A take names its lease
(``taken_by``): :data:`LEASE`, sent after it in the same batch, acts only if the take was theirs,
so that a take and its lease are one round trip (the task's row stays locked until the commit, on PostgreSQL).
A place of a list is taken while an assignment of it is leased or done (:data:`FREE_PLACE`): a lease that ends
frees its place, and one answered after it expired takes it again, with nothing written but the assignment.
:func:`end_lease` is the one way a lease ends unanswered: its status changed (once, by the
first to change it), its unit given back, an event recorded.
"""

from __future__ import annotations

import json
from typing import Any

from humeval.store.sql import Sql

__all__ = ["EVENT", "FREE_PLACE", "LEASE", "RELEASE", "TAKE", "end_lease"]

_OPEN = "open = CASE WHEN taken {} < cap THEN 1 ELSE 0 END"
TAKE = (f"UPDATE tasks SET taken = taken + 1, taken_by = :aid, {_OPEN.format('+ 1')} "
        "WHERE task_id = :t AND taken < cap AND closed = 0")
#: the lease of a take (the statement before it in the batch), if it took a unit (its id and task are the row's);
#: it returns the task of the list's next place, if any
LEASE = ("INSERT INTO assignments (assignment_id, participant_id, task_id, list_id, position, display, status, "
         "created_at, expires_at) SELECT taken_by, :pid, task_id, :l, :pos, :display, 'leased', :now, :exp "
         "FROM tasks WHERE task_id = :t AND taken_by = :aid "
         "RETURNING (SELECT n.task_id FROM list_tasks n WHERE n.list_id = :l AND n.position = :pos + 1)")
#: a list's place (list ``{l}``, position ``{pos}``) is free: none of its assignments is leased or done
FREE_PLACE = ("NOT EXISTS (SELECT 1 FROM assignments o WHERE o.list_id = {l} AND o.position = {pos} "
              "AND o.status IN ('leased', 'done'))")
RELEASE = f"UPDATE tasks SET taken = taken - 1, {_OPEN.format('- 1')} WHERE task_id = :t"
EVENT = "INSERT INTO events (at, kind, participant_id, data) VALUES (:now, :kind, :pid, :data)"
_END = "UPDATE assignments SET status = :status WHERE assignment_id = :aid AND status = 'leased'"


def end_lease(db: Sql, status: str, lease: tuple[Any, ...], now: float, **data: Any) -> bool:
    """End the lease ``(assignment_id, task_id, participant_id)`` as ``status``
    (``expired``, ``withdrawn``) with the event ``lease_<status>``; False when it was not leased any more."""
    aid, task_id, pid = lease
    if db.run(_END, {"status": status, "aid": aid}) != 1:
        return False
    event = {"now": now, "kind": f"lease_{status}", "pid": pid,
             "data": json.dumps({"assignment_id": aid, "task_id": task_id, **data})}
    db.batch([(RELEASE, {"t": task_id}), (EVENT, event)])
    return True
