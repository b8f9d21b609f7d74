"""PostgreSQL: the write operations of a process run concurrently, each in its own transaction.

Every operation (``fn(connection) -> result``) takes a connection of the process's pool and
runs as one transaction (or, for an operation that commits on its way, a few) at READ
COMMITTED, several operations in flight at once on the server's event loop (each in a
greenlet that yields to the loop while PostgreSQL works, no thread per operation). The connections are
in autocommit mode and the operation's statements carry ``BEGIN`` and ``COMMIT`` themselves
(:class:`~humeval.store.sql.Sql`; an operation that is one batch needs neither): an operation
written as batches of statements costs one round trip per batch. There is no savepoint: an
operation that is refused (a :class:`~humeval.errors.HumevalError`) or fails rolls its
transaction back alone.

Concurrency is the database's: row locks taken by the statements (``FOR UPDATE``; ``SKIP
LOCKED`` where any free row will do, as for claiming a list), conditional updates
(``taken < cap``) and unique keys. An operation that meets a deadlock, a serialisation
failure or a lock timeout is rolled back and run again; one that loses a unique-key race
(two requests storing the same idempotency key) is run again and finds the stored row.
Nothing is acknowledged before its ``COMMIT`` returned.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from humeval.errors import HumevalError, StoreError
from humeval.store.refusal import StoreUnwritable, disk_full
from humeval.store.sql import sql_of
from humeval.store.writer import RETRIES, retryable

__all__ = ["PooledWriter"]

T = TypeVar("T")
log = logging.getLogger("humeval.store")


class PooledWriter:
    """Runs the write operations of one process on a pool of connections (PostgreSQL).

    :meth:`arun` (the server's requests) runs an operation on the event loop
    (:func:`humeval.store.onloop.run_on_loop`: it waits for PostgreSQL through the loop), so up to
    ``size`` operations are in flight at once without a thread each. :meth:`run` runs one in the calling
    thread, blocking it (admin actions, the logbook of decisions, tools and tests).
    """

    def __init__(self, engine: Engine, size: int, loop_engine: Engine | None = None) -> None:
        self._engine = engine
        self._loop_engine = loop_engine
        #: at most ``size`` operations of one event loop in flight (the loop engine's connections)
        self._slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        self._size = size
        self._connected_once = False
        self._threads: ThreadPoolExecutor | None = None  # only for submit() without an event-loop engine
        self._closed = False
        #: committed operations (``batches`` = ``operations``: every operation is its own transaction)
        self.stats = {"batches": 0, "operations": 0, "retries": 0}
        #: why the last write failed for lack of space (None once a write committed again)
        self.unwritable: str | None = None
        #: how the store is named in messages (set by the store: a redacted URL)
        self.where = "the store"
        #: called after a transaction rolled back (the store drops what it cached from uncommitted work)
        self.on_rollback: Callable[[], None] | None = None

    def mark_unwritable(self, reason: str) -> None:
        self.unwritable = reason

    def submit(self, fn: Callable[[Connection], T]) -> Future[T]:
        """Run ``fn`` in a thread of the pool's own (for callers without an event loop)."""
        if self._closed:
            raise StoreError("the store is closed")
        if self._threads is None:
            self._threads = ThreadPoolExecutor(max_workers=self._size, thread_name_prefix="humeval-pg")
        return self._threads.submit(self.run, fn)

    async def arun(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a transaction of its own on the running event loop; its result once committed."""
        if self._closed:
            raise StoreError("the store is closed")
        if self._loop_engine is None:
            return await asyncio.wrap_future(self.submit(fn))
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = asyncio.Semaphore(self._size)
            self._slots = {loop: slots}  # one loop at a time (tests run several, one after the other)
        from humeval.store.onloop import run_on_loop  # psycopg: PostgreSQL stores only

        if not self._connected_once:
            # SQLAlchemy initialises the dialect on a pool's first connection under a thread lock: made here, in
            # the loop's thread before any operation runs on it (one of several greenlets of this thread holding
            # that lock while the others wait for it would wait forever)
            self._loop_engine.connect().close()
            self._connected_once = True
        async with slots:
            for attempt in range(RETRIES):
                try:
                    value = await run_on_loop(self._connected, fn)
                except BaseException as exc:  # decided by _failure: run again, or raise
                    delay = self._failure(exc, attempt)
                    if delay is None:
                        raise
                    await asyncio.sleep(delay)
                    continue
                return self._committed(value)
        raise StoreError("a write kept conflicting with concurrent ones; try again")

    def close(self) -> None:
        self._closed = True
        if self._threads is not None:
            self._threads.shutdown(wait=True, cancel_futures=False)

    def run(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a transaction of its own (in the calling thread); its result once committed."""
        for attempt in range(RETRIES):
            try:
                with self._engine.connect() as conn:
                    value = self._transaction(conn, fn)
            except BaseException as exc:  # decided by _failure: run again, or raise
                delay = self._failure(exc, attempt)
                if delay is None:
                    raise
                time.sleep(delay)
                continue
            return self._committed(value)
        raise StoreError("a write kept conflicting with concurrent ones; try again")

    def _connected(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` in a transaction on a connection of the event loop's pool (which has one free: see ``_slots``)."""
        assert self._loop_engine is not None
        with self._loop_engine.connect() as conn:
            return self._transaction(conn, fn)

    def _transaction(self, conn: Connection, fn: Callable[[Connection], T]) -> T:
        """``fn`` in one transaction on ``conn``: committed, or rolled back when it raises."""
        db = sql_of(conn)
        db.begin()
        try:
            value = fn(conn)
            db.commit()
        except BaseException:
            try:
                db.rollback()
            except Exception:  # noqa: BLE001 - the connection broke: it is invalidated below
                conn.invalidate()
            if self.on_rollback is not None:
                self.on_rollback()
            raise
        return value

    def _committed(self, value: T) -> T:
        self.unwritable = None
        self.stats["batches"] += 1
        self.stats["operations"] += 1
        return value

    def _failure(self, exc: BaseException, attempt: int) -> float | None:
        """After a failed attempt: seconds to wait before running the operation again, or None to raise
        (``exc`` itself, or the :class:`StoreError` it is replaced with, raised from here)."""
        if isinstance(exc, IntegrityError):
            self.stats["retries"] += 1
            return 0.0  # a concurrent operation stored the same key: run again, it finds the row
        if isinstance(exc, HumevalError) or not isinstance(exc, Exception):
            return None
        if isinstance(exc, DBAPIError):
            if (retryable(exc) or exc.connection_invalidated) and attempt < RETRIES - 1:
                self.stats["retries"] += 1
                return 0.005 * (attempt + 1)
            raise self._failed(exc) from exc
        if (reason := disk_full(exc)) is not None:
            raise self._full(reason) from exc
        return None

    def _full(self, reason: str) -> StoreUnwritable:
        log.error("store: %s cannot write: %s", self.where, reason)
        self.unwritable = reason
        return StoreUnwritable(self.where, reason)

    def _failed(self, exc: DBAPIError) -> Exception:
        if (reason := disk_full(exc)) is not None:
            return self._full(reason)
        log.exception("store: a write failed")
        return StoreError(f"the store could not commit: {exc.orig if exc.orig is not None else exc}")
