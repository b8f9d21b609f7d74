"""Hot-path SQL: fixed statements run on the driver connection, without per-call compilation.

The participant flow (enter, next, submit) runs a handful of statements per request. Built
with SQLAlchemy Core, each costs ~100-250 µs of Python (statement construction, cache key,
execution context, result processing); the same statement text run on the DBAPI cursor
costs a few µs on SQLite and one round trip on PostgreSQL (psycopg prepares repeated
statements on the server by itself). The statements are written once, with ``:name``
parameters, and converted to the driver's style on first use.

They run on the same driver connection as the SQLAlchemy :class:`~sqlalchemy.Connection`
of the writer, inside its transaction and savepoints. Driver errors are re-raised as
SQLAlchemy's exceptions (``IntegrityError``, ``OperationalError``...) so that the writer
retries or re-runs an operation exactly as for Core statements.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

__all__ = ["Sql", "sql_of"]

_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_PG: dict[str, str] = {}
_LITE: dict[str, str] = {}
_INFO_KEY = "humeval_sql"

#: SQLite 3.35 added ``RETURNING``; older libraries take a second statement instead
SQLITE_RETURNING = sqlite3.sqlite_version_info >= (3, 35)


def _for_pg(sql: str) -> str:
    text = _PG.get(sql)
    if text is None:
        text = _PG[sql] = _PARAM.sub(r"%(\1)s", sql)
    return text


def _for_sqlite(sql: str) -> str:
    text = _LITE.get(sql)
    if text is None:
        text = _LITE[sql] = sql.replace(" FOR UPDATE", "")  # SQLite: the writer holds the database lock
    return text


class Sql:
    """Fixed statements on one driver connection (``pg``: PostgreSQL, else SQLite)."""

    __slots__ = ("_convert", "_dialect", "_error", "cur", "pg", "raw", "returning")

    def __init__(self, conn: Connection) -> None:
        self.raw = conn.connection.driver_connection
        self._dialect = conn.dialect
        self.pg = conn.dialect.name == "postgresql"
        self.returning = self.pg or SQLITE_RETURNING
        self._convert = _for_pg if self.pg else _for_sqlite
        self._error: type[Exception] = conn.dialect.loaded_dbapi.Error
        self.cur = self.raw.cursor()

    def _execute(self, sql: str, params: dict[str, Any] | None) -> Any:
        try:
            self.cur.execute(self._convert(sql), params or {})
        except self._error as exc:
            raise DBAPIError.instance(sql, params, exc, self._error, dialect=self._dialect) from exc
        return self.cur

    def run(self, sql: str, params: dict[str, Any] | None = None) -> int:
        """Execute; the number of rows changed."""
        return int(self._execute(sql, params).rowcount)

    def one(self, sql: str, params: dict[str, Any] | None = None) -> tuple[Any, ...] | None:
        """The first row (the statement is read to its end) or None."""
        rows = self._execute(sql, params).fetchall()
        return rows[0] if rows else None

    def all(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return list(self._execute(sql, params).fetchall())

    def scalar(self, sql: str, params: dict[str, Any] | None = None) -> Any:
        row = self.one(sql, params)
        return None if row is None else row[0]

    def insert_id(self, sql: str, params: dict[str, Any]) -> int:
        """Run an INSERT and return the new row's integer key (``sql`` ends ``RETURNING id``)."""
        if self.returning:
            return int(self.one(sql, params)[0])  # type: ignore[index]
        return int(self._execute(sql.rsplit(" RETURNING ", 1)[0], params).lastrowid)


def sql_of(conn: Connection) -> Sql:
    """The :class:`Sql` of the connection's current driver connection (made once per connection)."""
    info = conn.info
    db = info.get(_INFO_KEY)
    if db is None or db.raw is not conn.connection.driver_connection:
        db = info[_INFO_KEY] = Sql(conn)
    return db
