"""Blocking store code run on an event loop without blocking it (PostgreSQL operations).

A store operation is ordinary blocking code (``fn(connection)``: statements, then Python, then
statements). :func:`run_on_loop` runs it on the event loop's thread, in a greenlet: wherever it
would wait for the database (:func:`wait_for`, called by the pipeline of
:mod:`humeval.store.sql` and by psycopg's one wait point, :class:`LoopConnection`), the greenlet
hands the wait to the loop and the loop serves other requests meanwhile. So several operations
of a process are in flight at once with no thread each, and no hand-off between threads: the
server's CPU per request, measured on PostgreSQL, was 0.2 ms lower per operation than with a
thread per operation (``benchmarks/bench_server.py``, see docs/collection.md).

Outside such a greenlet (a thread of an admin page, a tool) the same code blocks as usual.
Code run this way must not hold a lock that another operation of the loop takes while waiting for
the database: a ``threading`` lock does not exclude greenlets of one thread (the store's only
such lock, ``StoreContext.rules_lock``, guards a cache whose updates are serialised by a row lock
in the database).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
from greenlet import getcurrent, greenlet
from psycopg import waiting

__all__ = ["LoopConnection", "on_loop", "run_on_loop", "wait_for", "wait_socket"]

T = TypeVar("T")


class _Operation(greenlet):
    """A greenlet running blocking store code for :func:`run_on_loop` (its parent is the loop's task)."""


async def run_on_loop(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on this event loop's thread; its waits (:func:`wait_for`) are awaited on the loop."""
    op = _Operation(fn)
    request = op.switch(*args)
    while not op.dead:
        try:
            value = await request
        except BaseException:  # noqa: BLE001 - raised inside the operation, where it was waited for
            request = op.throw(*sys.exc_info())
        else:
            request = op.switch(value)
    return request  # type: ignore[no-any-return]


def on_loop() -> bool:
    """Whether the calling code runs in :func:`run_on_loop` (and so must not block the thread)."""
    return isinstance(getcurrent(), _Operation)


def wait_for(awaitable: Awaitable[T]) -> T:
    """Inside :func:`run_on_loop`: the loop awaits ``awaitable`` (serving others meanwhile); its result."""
    return getcurrent().parent.switch(awaitable)  # type: ignore[no-any-return]


def wait_socket(fd: int, *, write: bool) -> None:
    """Wait until ``fd`` is readable (or writable): on the loop inside :func:`run_on_loop`, else blocking."""
    if on_loop():
        wait_for(_ready(fd, write))
        return
    import select

    select.select([], [fd], []) if write else select.select([fd], [], [])


def _ready(fd: int, write: bool) -> asyncio.Future[None]:
    """A future of the running loop, done once ``fd`` is readable (or writable)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    add, remove = (loop.add_writer, loop.remove_writer) if write else (loop.add_reader, loop.remove_reader)

    def ready() -> None:
        if not done.done():
            done.set_result(None)

    add(fd, ready)
    done.add_done_callback(lambda _: remove(fd))  # also when cancelled
    return done


class LoopConnection(psycopg.Connection):  # type: ignore[type-arg]
    """psycopg's blocking connection whose waits, inside :func:`run_on_loop`, are awaited on the loop
    (every statement, commit and rollback of a psycopg connection waits through :meth:`wait`)."""

    def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:
        if on_loop():
            return wait_for(waiting.wait_async(gen, self.pgconn.socket))
        return super().wait(gen, *args, **kwargs)
