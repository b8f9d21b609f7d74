"""SQLite's single writer: every write of a process runs on one thread, in one transaction per batch.

Writes queue up while the previous batch commits; the next batch runs them one after the
other, each inside its own savepoint (a refused operation rolls back alone), and one
commit makes the whole batch durable (group commit: one fsync for many judgements).
Futures are resolved only after the commit returned, so nothing is acknowledged before
it is on disk. A batch that hits a lock timeout, a deadlock or a serialisation failure
is rolled back and retried; a unique-key race (two processes storing the same
idempotency key) re-runs the one operation, which then finds the stored row.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from humeval.errors import HumevalError, StoreError
from humeval.store.refusal import StoreUnwritable, disk_full
from humeval.store.sql import sql_of

__all__ = ["RETRIES", "Executor", "Writer", "retryable"]

T = TypeVar("T")
log = logging.getLogger("humeval.store")

MAX_BATCH = 64
RETRIES = 8
_SAVEPOINT = "SAVEPOINT humeval_op"
_ROLLBACK_TO = "ROLLBACK TO SAVEPOINT humeval_op"
_RELEASE = "RELEASE SAVEPOINT humeval_op"


class Executor:
    """What both executors of write operations share: their name in messages, the store's state of writing, the
    hook after a rollback, counts (committed transactions and the operations they carried)."""

    def __init__(self) -> None:
        self.stats = {"batches": 0, "operations": 0, "retries": 0}
        #: why the last write failed for lack of space (None once a write committed again)
        self.unwritable: str | None = None
        #: how the store is named in messages (set by the store: a file or a redacted URL)
        self.where = "the store"
        #: called after a transaction rolled back (the store drops what it cached from uncommitted work)
        self.on_rollback: Callable[[], None] | None = None

    def submit(self, fn: Callable[[Connection], T]) -> Future[T]:
        """Queue ``fn`` to run in a write transaction; its future resolves once committed."""
        raise NotImplementedError

    def run(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a write transaction and return its result once committed."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop taking operations; wait for those in flight."""
        raise NotImplementedError

    async def arun(self, fn: Callable[[Connection], T]) -> T:
        return await asyncio.wrap_future(self.submit(fn))

    def mark_unwritable(self, reason: str) -> None:
        self.unwritable = reason

    def _rolled_back(self) -> None:
        if self.on_rollback is not None:
            self.on_rollback()

    def _full(self, reason: str) -> StoreUnwritable:
        """The store cannot write for lack of space: one line for the operator (not a traceback per request)."""
        log.error("store: %s cannot write: %s", self.where, reason)
        self.unwritable = reason
        return StoreUnwritable(self.where, reason)


class Writer(Executor):
    """Serialises the write operations of one process (``fn(connection) -> result``); an operation's savepoint
    rolled back needs no hook: the next feed finds the cache ahead of the stored count and rebuilds, and no other
    process writes to this store."""

    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self._engine = engine
        self._queue: queue.SimpleQueue[tuple[Callable[[Connection], Any], Future[Any]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    # -- public -------------------------------------------------------------------
    def submit(self, fn: Callable[[Connection], T]) -> Future[T]:
        if self._closed:
            raise StoreError("the store is closed")
        self._start()
        fut: Future[T] = Future()
        self._queue.put((fn, fut))
        return fut

    def run(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a write transaction and return its result once committed."""
        return self.submit(fn).result()

    def close(self) -> None:
        self._closed = True
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._thread = None

    # -- the thread -----------------------------------------------------------------
    def _start(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="humeval-writer", daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        conn: Connection | None = None
        while True:
            first = self._queue.get()
            if first is None:
                break
            batch = [first]
            while len(batch) < MAX_BATCH:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._queue.put(None)
                    break
                batch.append(nxt)
            try:
                if conn is None or conn.closed or conn.invalidated:
                    conn = self._engine.connect()
                self._run_batch(conn, batch)
            except Exception as exc:  # the connection itself failed: fail the batch, reconnect
                self._rolled_back()
                reason = disk_full(exc)
                if reason is None:
                    log.exception("store writer: batch failed")
                    error: Exception = StoreError(f"the store could not commit: {exc}")
                else:
                    error = self._full(reason)
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(error)
                try:
                    if conn is not None:
                        conn.close()
                except Exception:  # noqa: BLE001 - closing a broken connection
                    pass
                conn = None
        if conn is not None:
            conn.close()

    def _run_batch(self, conn: Connection, batch: list[tuple[Callable[[Connection], Any], Future[Any]]]) -> None:
        for attempt in range(RETRIES):
            results: list[tuple[Future[Any], Any, BaseException | None]] = []
            try:
                with conn.begin():
                    for fn, fut in batch:
                        results.append((fut, *self._run_one(conn, fn)))
            except (OperationalError, DBAPIError) as exc:
                self._rolled_back()
                if not retryable(exc) or attempt == RETRIES - 1:
                    raise
                time.sleep(0.01 * (attempt + 1))
                if conn.invalidated:
                    raise
                continue
            if not any(isinstance(error, StoreUnwritable) for _, _, error in results):
                self.unwritable = None  # a write committed: the store can write again
            self.stats["batches"] += 1
            self.stats["operations"] += len(batch)
            for fut, value, error in results:
                if error is not None:
                    fut.set_exception(error)
                else:
                    fut.set_result(value)
            return

    def _run_one(self, conn: Connection, fn: Callable[[Connection], Any]) -> tuple[Any, BaseException | None]:
        db = sql_of(conn)  # savepoints as plain statements on the driver connection (cheap)

        def undo() -> None:
            db.run(_ROLLBACK_TO)
            db.run(_RELEASE)

        for _ in range(3):
            db.run(_SAVEPOINT)
            try:
                value = fn(conn)
            except IntegrityError:
                undo()
                continue  # a concurrent writer stored the same key: run again, it finds the row
            except HumevalError as exc:
                undo()
                return None, exc
            except (OperationalError, DBAPIError):
                raise
            except Exception as exc:  # a bug in an operation must not take the batch down
                undo()
                if (reason := disk_full(exc)) is not None:
                    return None, self._full(reason)
                log.exception("store writer: operation failed")
                return None, exc
            db.run(_RELEASE)
            return value, None
        return None, StoreError("a write kept conflicting with a concurrent one; try again")


def retryable(exc: DBAPIError) -> bool:
    """Whether the failure goes away when the transaction runs again (lock wait, deadlock, serialisation)."""
    text = str(exc.orig if exc.orig is not None else exc).lower()
    code = getattr(exc.orig, "sqlstate", None)
    return (
        "locked" in text
        or "busy" in text
        or "deadlock" in text
        or "could not serialize" in text
        or code in ("40001", "40P01", "55P03", "26000")  # 26000: a prepared statement was dropped
    )
