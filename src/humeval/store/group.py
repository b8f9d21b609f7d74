"""PostgreSQL: answers of one process committed together, one flush of the WAL for several.

An operation that is one batch of statements and its whole transaction (an answer with the
lease of the next task, :func:`humeval.store.submit.submit_judgement`) may be committed with
others: the batches waiting while one group is in flight go out as the next group, all their
statements one transaction in one round trip, on the connection of the operation that leads it
(the first to wait), and its commit reaches the disk once for all of them. Each operation is
answered only after that commit, so an acknowledged judgement is on disk as before; what
changes is the number of flushes (one per group, not one per answer) and of transactions.

The statements of a group run one after the other, each seeing what the earlier ones wrote, as
if the operations had run one after the other. When any of them fails (a lost race for an
idempotency key, a deadlock with another process's group), the whole group is rolled back and
each of its operations runs its batch again alone, in a transaction of its own, where a failure
is its own. Only batches that commit synchronously are grouped (a lease alone commits without
waiting for the disk, which a group would impose on the answers in it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["GroupCommit"]

#: a batch handed to the next leader: it runs the group
_LEAD = object()


class _Waiting:
    __slots__ = ("done", "rows", "steps")

    def __init__(self, steps: Sequence[Any]) -> None:
        self.steps = steps
        self.rows: object = None
        self.done = threading.Lock()
        self.done.acquire()


class GroupCommit:
    """The groups of one process (see the module docstring); ``most``: batches per group at most."""

    def __init__(self, most: int = 32) -> None:
        self.most = most
        self._lock = threading.Lock()
        self._queue: list[_Waiting] = []
        self._leading = False
        #: groups sent, the batches in them, and those of them that ran alone after their group failed
        self.stats = {"groups": 0, "batches": 0, "alone": 0}

    def run(self, steps: Sequence[Any], send: Callable[[list[Any]], list[Any]]) -> list[Any] | None:
        """Commit ``steps`` (statements, :data:`humeval.store.sql.Step`) with the batches waiting meanwhile; their
        results (one per statement), or None when the group failed
        (nothing of it stored: the caller runs its batch alone). ``send`` runs a batch as one transaction on the
        caller's connection (used when the caller leads the group)."""
        me = _Waiting(steps)
        with self._lock:
            self._queue.append(me)
            lead = not self._leading
            self._leading = True
        if not lead:
            me.done.acquire()  # a leader ran this batch in its group, or hands the lead to it
            if me.rows is not _LEAD:
                return me.rows  # type: ignore[return-value]
        with self._lock:
            group = self._queue[: self.most]
            del self._queue[: self.most]
        rows: list[Any] | None = None
        try:
            rows = send([step for w in group for step in w.steps])
        except Exception:  # noqa: BLE001, S110 - the group rolled back: each batch runs alone (and fails on its own)
            pass
        finally:
            self._hand_over(group, me, rows)
        return me.rows  # type: ignore[return-value]

    def _hand_over(self, group: list[_Waiting], me: _Waiting, rows: list[Any] | None) -> None:
        """Give each batch of the group its rows (None: run alone) and the lead to the first batch waiting."""
        k = 0
        for w in group:
            w.rows = None if rows is None else rows[k:k + len(w.steps)]
            k += len(w.steps)
        with self._lock:
            nxt = self._queue[0] if self._queue else None  # leads the next group (and stays in the queue)
            if nxt is not None:
                nxt.rows = _LEAD
            else:
                self._leading = False
            self.stats["groups"] += 1
            self.stats["batches"] += len(group)
            if rows is None:
                self.stats["alone"] += len(group)
        for w in group:
            if w is not me:
                w.done.release()
        if nxt is not None:
            nxt.done.release()
