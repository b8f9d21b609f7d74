"""Database URLs and engines: SQLite in WAL mode (one writer at a time), or PostgreSQL (a pool).

SQLite writes start with ``BEGIN IMMEDIATE`` so that a transaction takes the write lock
up front (several server processes on one file queue on the lock instead of failing on
an upgrade), and commits are ``synchronous=FULL`` by default: a commit has reached the
disk (the WAL is fsynced) before a judgement is acknowledged. ``sqlite_sync="normal"``
(``humeval serve --sqlite-sync normal``) skips that fsync: in WAL mode a commit is then
written to the WAL file (the operating system's page cache) before it returns, so it
survives a crash or SIGKILL of the server process, but the last commits can be lost (the
database stays consistent) when the operating system crashes or the power fails. PostgreSQL URLs use the psycopg 3 driver; a
``?options=-csearch_path%3Dname`` query selects a schema.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from humeval.errors import StoreError
from humeval.store.sql import SQL_INFO_KEY

__all__ = ["SYNC_MODES", "database_url", "is_sqlite", "make_engines", "operation_engine", "redact_url"]

BUSY_TIMEOUT_MS = 30_000
SYNC_MODES = ("full", "normal")


def database_url(url: str | None, default_file: Path) -> str:
    """The SQLAlchemy URL for ``--db`` (a URL, a file path, or None for ``study.db``)."""
    if not url:
        return f"sqlite:///{Path(default_file).resolve()}"
    if url.startswith(("postgres://", "postgresql://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    if url.startswith(("sqlite:", "postgresql+psycopg:")):
        return url
    if "://" in url:
        raise StoreError(
            f"--db: unsupported database URL '{url.split('://', 1)[0]}://...'. "
            "Use a SQLite file path, sqlite:///path, or postgresql://user@host:port/database"
        )
    return f"sqlite:///{Path(url).resolve()}"


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def make_engines(url: str, *, readers: int = 4, sqlite_sync: str = "full") -> tuple[Engine, Engine]:
    """(writer engine with one connection, reader engine with a small pool)."""
    if sqlite_sync not in SYNC_MODES:
        raise StoreError(f"sqlite_sync: expected one of {', '.join(SYNC_MODES)}, got {sqlite_sync!r}")
    try:
        make_url(url)
    except Exception:  # sqlalchemy raises ArgumentError for garbage (and its message repeats the URL)
        raise StoreError(f"--db: cannot parse database URL {redact_url(url)!r}: expected sqlite:///<file> or "
                         "postgresql://user:password@host:port/database") from None
    if is_sqlite(url):
        return (_sqlite_engine(url, writer=True, sync=sqlite_sync),
                _sqlite_engine(url, writer=False, pool=readers, sync=sqlite_sync))
    kw: dict[str, Any] = {"pool_pre_ping": True}
    writer = create_engine(url, pool_size=1, max_overflow=1, **kw)
    reader = create_engine(url, pool_size=readers, max_overflow=2, **kw)
    return writer, reader


def operation_engine(url: str, size: int) -> Engine:
    """PostgreSQL: the pool the participant operations run on (:mod:`humeval.store.pool`).

    ``size`` connections in autocommit mode (each operation sends its own ``BEGIN`` and
    ``COMMIT`` with its statements), no ping before each use (a dropped connection fails the
    operation's first statement and the operation runs again on a new one), and a few more
    connections for the synchronous writes of admin actions while the pool is busy.
    """
    engine = create_engine(url, pool_size=size, max_overflow=4, isolation_level="AUTOCOMMIT", pool_recycle=3600)

    @event.listens_for(engine, "connect")
    def _generic_plans(dbapi_conn: Any, _record: Any) -> None:
        # the participant operations are prepared statements of a few index lookups each: planned once per
        # connection, not again at every execution (PostgreSQL's default may plan a statement again each time
        # it guesses its generic plan costlier, and planning the larger statements costs more than running them)
        dbapi_conn.execute("SET plan_cache_mode TO force_generic_plan")
        dbapi_conn.commit()  # (the driver began a transaction for it: a rollback would undo the setting)

    @event.listens_for(engine, "before_cursor_execute")
    def _begin_first(conn: Any, cursor: Any, statement: Any, parameters: Any, context: Any, executemany: Any) -> None:
        # a SQLAlchemy Core statement of a rarer path: the operation's pending BEGIN goes first
        db = conn.info.get(SQL_INFO_KEY)
        if db is not None and db.pending_begin:
            db.flush_begin()

    return engine


def _sqlite_engine(url: str, *, writer: bool, pool: int = 1, sync: str = "full") -> Engine:
    if sqlite3.sqlite_version_info < (3, 35):  # the store's statements return rows (RETURNING)
        raise StoreError(f"this Python's SQLite is {sqlite3.sqlite_version}; the store needs SQLite 3.35 or newer "
                         "(a newer Python, or --db postgresql://...)")
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
        pool_size=1 if writer else pool,
        max_overflow=0 if writer else 2,
    )

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (savepoints work)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=FULL" if sync == "full" else "PRAGMA synchronous=NORMAL")
        cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if writer else "BEGIN")

    return engine


#: query parameters of a database URL that carry a secret
_SECRET_PARAMS = ("password", "pass", "passwd", "pwd", "sslpassword", "token", "secret")


def redact_url(url: str) -> str:
    """``url`` without its secrets (for messages and the logbook): the password of the user part
    (which may itself contain ``@``) and secret query parameters (``?password=...``) become ``***``."""
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    authority, sep, tail = rest.partition("/")
    if "@" in authority:
        creds, host = authority.rsplit("@", 1)  # the host never holds '@'; a password may
        user, has_password, _ = creds.partition(":")
        authority = f"{user}{':***' if has_password else ''}@{host}"
    if "?" in tail:
        path, query = tail.split("?", 1)
        parts = [f"{k}=***" if k.lower() in _SECRET_PARAMS else f"{k}{eq}{v}"
                 for k, eq, v in (p.partition("=") for p in query.split("&"))]
        tail = f"{path}?{'&'.join(parts)}"
    return f"{scheme}://{authority}{sep}{tail}"
