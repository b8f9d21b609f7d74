"""PostgreSQL: the write operations of a process run concurrently, each in its own transaction.

Every operation (``fn(connection) -> result``) takes a connection of the process's pool and
runs as one transaction (or, for an operation that commits on its way, a few) at READ
COMMITTED, several operations in flight at once on threads of their own. The connections are
in autocommit mode and the operation's statements carry ``BEGIN`` and ``COMMIT`` themselves
(:class:`~humeval.store.sql.Sql`; an operation that is one batch needs neither): an operation
written as batches of statements costs one round trip per batch. There is no savepoint: an
operation that is refused (a :class:`~humeval.errors.HumevalError`) or fails rolls its
transaction back alone. An operation that is one batch and its whole transaction (an answer with
the lease of the next task) may be committed with the others waiting meanwhile
(:mod:`humeval.store.group`).

Concurrency is the database's: row locks taken by the statements (``FOR UPDATE``; ``SKIP
LOCKED`` where any free row will do, as for claiming a list), conditional updates
(``taken < cap``) and unique keys. An operation that meets a deadlock, a serialisation
failure or a lock timeout is rolled back and run again; one that loses a unique-key race
(two requests storing the same idempotency key) is run again and finds the stored row.
Nothing is acknowledged before its ``COMMIT`` returned.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from humeval.errors import HumevalError, StoreError
from humeval.store.group import GroupCommit
from humeval.store.refusal import disk_full
from humeval.store.sql import sql_of
from humeval.store.writer import RETRIES, Executor, retryable

__all__ = ["PooledWriter"]

T = TypeVar("T")
log = logging.getLogger("humeval.store")


class PooledWriter(Executor):
    """Runs the write operations of one process on a pool of ``threads`` connections (PostgreSQL; every operation
    is its own transaction: ``batches`` = ``operations``)."""

    def __init__(self, engine: Engine, threads: int) -> None:
        super().__init__()
        self._engine = engine
        self._threads = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="humeval-pg")
        #: answers committed together (:mod:`humeval.store.group`)
        self.group = GroupCommit()
        self._closed = False

    def submit(self, fn: Callable[[Connection], T]) -> Future[T]:
        if self._closed:
            raise StoreError("the store is closed")
        return self._threads.submit(self.run, fn)

    def close(self) -> None:
        self._closed = True
        self._threads.shutdown(wait=True, cancel_futures=False)

    def run(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a transaction of its own (in the calling thread); its result once committed."""
        for attempt in range(RETRIES):
            try:
                with self._engine.connect() as conn:
                    db = sql_of(conn)
                    db.group = self.group
                    db.begin()
                    try:
                        value = fn(conn)
                        db.commit(last=True)
                    except BaseException:
                        try:
                            db.rollback()
                        except Exception:  # noqa: BLE001 - the connection broke: it is invalidated below
                            conn.invalidate()
                        self._rolled_back()
                        raise
            except IntegrityError:
                self.stats["retries"] += 1
                continue  # a concurrent operation stored the same key: run again, it finds the row
            except HumevalError:
                raise
            except DBAPIError as exc:
                if (retryable(exc) or exc.connection_invalidated) and attempt < RETRIES - 1:
                    self.stats["retries"] += 1
                    time.sleep(0.005 * (attempt + 1))
                    continue
                raise self._failed(exc) from exc
            except Exception as exc:
                if (reason := disk_full(exc)) is not None:
                    raise self._full(reason) from exc
                raise
            self.unwritable = None
            self.stats["batches"] += 1
            self.stats["operations"] += 1
            return value
        raise StoreError("a write kept conflicting with concurrent ones; try again")

    def _failed(self, exc: DBAPIError) -> Exception:
        if (reason := disk_full(exc)) is not None:
            return self._full(reason)
        log.exception("store: a write failed")
        return StoreError(f"the store could not commit: {exc.orig if exc.orig is not None else exc}")
