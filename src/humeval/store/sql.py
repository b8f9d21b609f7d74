"""Hot-path SQL: fixed statements run on the driver connection, without per-call compilation.

The participant flow (enter, next, submit) runs a handful of statements per request. Built
with SQLAlchemy Core, each costs ~100-250 µs of Python (statement construction, cache key,
execution context, result processing); the same statement text run on the DBAPI cursor
costs a few µs on SQLite and one round trip on PostgreSQL (psycopg prepares repeated
statements on the server by itself). The statements are written once, with ``:name``
parameters, and converted to the driver's style on first use: ``FOR UPDATE`` clauses are
PostgreSQL's (row locks); SQLite drops them (its writer holds the database lock).

:meth:`Sql.batch` runs several statements in order, each seeing what the previous ones
wrote: one after the other on SQLite, in one round trip on PostgreSQL (libpq's pipeline
mode through psycopg's ``pgconn``, each statement prepared once per connection; see
:func:`_pg_pipeline`). A statement that needs what an earlier one chose finds it in SQL (a key generated
in Python beforehand, a subquery), not in Python, so one list of statements is the logic
of both stores.

Transactions: on SQLite the single writer (:mod:`humeval.store.writer`) begins and commits
(one transaction per batch of operations, a savepoint per operation). On PostgreSQL the
connection is in autocommit mode and the operation's executor (:mod:`humeval.store.pool`)
calls :meth:`Sql.begin`: ``BEGIN`` is sent with the first statement (no round trip of its
own), and ``batch(..., commit=True)`` sends ``COMMIT`` with the batch's last statement; a
batch that is the whole transaction (``BEGIN`` still pending, ``commit=True``) sends neither,
as the statements of a pipeline up to its Sync are one implicit transaction.

They run on the same driver connection as the SQLAlchemy :class:`~sqlalchemy.Connection`
of the operation, inside its transaction. Driver errors are re-raised as SQLAlchemy's
exceptions (``IntegrityError``, ``OperationalError``...) so that the executor retries or
re-runs an operation exactly as for Core statements.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from humeval.errors import StoreError

if TYPE_CHECKING:
    from humeval.store.group import GroupCommit

__all__ = ["SQL_INFO_KEY", "Rows", "Sql", "Step", "sql_of"]

_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_LOCKING = re.compile(r" FOR UPDATE(?: OF \w+)?(?: SKIP LOCKED)?")
_LITE: dict[str, str] = {}
SQL_INFO_KEY = "humeval_sql"

#: one statement of a batch: (SQL text with ``:name`` parameters, parameters)
Step = tuple[str, dict[str, Any] | None]


class Rows:
    """What one statement of a batch gave: rows changed and the rows it returned."""

    __slots__ = ("rowcount", "rows")

    def __init__(self, rowcount: int, rows: list[tuple[Any, ...]]) -> None:
        self.rowcount, self.rows = rowcount, rows

    @property
    def first(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    @property
    def scalar(self) -> Any:
        return self.rows[0][0] if self.rows else None


def _for_sqlite(sql: str) -> str:
    text = _LITE.get(sql)
    if text is None:
        text = _LITE[sql] = _LOCKING.sub("", sql)  # SQLite: the writer holds the database lock
    return text


class Sql:
    """Fixed statements on one driver connection (``pg``: PostgreSQL, else SQLite)."""

    __slots__ = ("_dialect", "_error", "cur", "durable", "group", "in_tx", "loader", "named",
                 "pending_begin", "pg", "prepared", "raw", "trips")

    def __init__(self, conn: Connection) -> None:
        raw = conn.connection.driver_connection
        if raw is None:  # SQLAlchemy: the pooled connection was invalidated or detached from its driver's
            raise StoreError(f"store: the {conn.dialect.name} connection has no driver connection (invalidated or "
                             "closed); open the store again")
        #: the driver's connection (sqlite3 or psycopg; untyped: the two share no interface)
        self.raw: Any = raw
        self._dialect = conn.dialect
        self.pg = conn.dialect.name == "postgresql"
        self._error: type[Exception] = conn.dialect.loaded_dbapi.Error
        self.cur = self.raw.cursor()
        #: PostgreSQL: a transaction was begun (``BEGIN`` not sent yet: it goes with the next statement)
        self.pending_begin = False
        #: PostgreSQL: a transaction begun by :meth:`begin` is open on the server
        self.in_tx = False
        #: the open transaction stored a judgement: its commit waits for the disk (set by the operation)
        self.durable = False
        #: round trips to the server so far (PostgreSQL; each batch is one)
        self.trips = 0
        #: PostgreSQL: the process's group commit (set by the pool that runs the operation), or None
        self.group: GroupCommit | None = None
        #: PostgreSQL: statements prepared on this connection (SQL text -> name) and the result loader
        self.prepared: dict[str, bytes] = {}
        self.loader: Any = None
        #: statements named on this connection so far (a name is never used twice, even for a statement whose
        #: PREPARE an aborted pipeline skipped and which is prepared again)
        self.named = 0

    def _raise(self, sql: str, params: Any, exc: Exception) -> None:
        raise DBAPIError.instance(sql, params, exc, self._error, dialect=self._dialect) from exc

    def _step(self, sql: str, params: dict[str, Any] | None) -> Rows:
        """One statement: on PostgreSQL a batch of its own (prepared, one round trip); on SQLite the cursor's."""
        if self.pg:
            return self.batch([(sql, params)])[0]
        try:
            cur = self.cur.execute(_for_sqlite(sql), params or {})
        except self._error as exc:
            self._raise(sql, params, exc)
        self.trips += 1
        rows = cur.fetchall() if cur.description else []  # (a RETURNING statement counts its rows as they are read)
        return Rows(cur.rowcount, rows)

    # -- transactions (PostgreSQL; the SQLite writer manages its own) -----------------------------
    def begin(self) -> None:
        """Start a transaction: ``BEGIN`` goes out with the next statement (PostgreSQL)."""
        if self.pg:
            self.pending_begin = True

    def flush_begin(self) -> None:
        """Send a pending ``BEGIN`` now (before a statement that does not go through this object)."""
        if self.pending_begin:
            self.pending_begin = False
            self.raw.execute("BEGIN")
            self.trips += 1
            self.in_tx = True

    def commit(self, *, last: bool = False) -> None:
        """Commit the open transaction (nothing to send when no statement ran since :meth:`begin`); a later
        statement begins the next one, unless ``last`` (the operation is over)."""
        if self.in_tx:
            self.in_tx = False
            self.raw.execute("COMMIT")
            self.trips += 1
        self.pending_begin = self.pg and not last
        self.durable = False

    def rollback(self) -> None:
        self.pending_begin = self.in_tx = self.durable = False
        if self.pg and self.raw.info.transaction_status != 0:  # psycopg: 0 = idle, no transaction open
            # on the libpq connection: psycopg answers a ROLLBACK of its own with DEALLOCATE ALL, which
            # would drop the statements this object prepared
            self.raw.pgconn.exec_(b"ROLLBACK")

    # -- statements ----------------------------------------------------------------------------
    def run(self, sql: str, params: dict[str, Any] | None = None) -> int:
        """Execute; the number of rows changed."""
        return self._step(sql, params).rowcount

    def one(self, sql: str, params: dict[str, Any] | None = None) -> tuple[Any, ...] | None:
        """The first row (the statement is read to its end) or None."""
        return self._step(sql, params).first

    def all(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return self._step(sql, params).rows

    def scalar(self, sql: str, params: dict[str, Any] | None = None) -> Any:
        return self._step(sql, params).scalar

    def batch(self, steps: Sequence[Step], *, commit: bool = False, group: bool = False) -> list[Rows]:
        """Run ``steps`` in order in the current transaction; what each gave.

        PostgreSQL: one round trip (with a pending ``BEGIN`` first and, with ``commit``, ``COMMIT``
        last, or neither when the batch is the whole transaction: then it is the implicit
        transaction libpq's pipeline Sync commits; after an error nothing later in the batch runs,
        and the transaction is left for the executor to roll back); a statement after a batch that
        committed begins the next transaction. ``group``: a whole transaction that commits synchronously
        may be committed with other operations' (:mod:`humeval.store.group`). SQLite: one statement after
        the other; ``commit`` is the writer's.
        """
        if not self.pg:
            return [self._step(sql, params) for sql, params in steps]
        begin = self.pending_begin
        # a whole transaction in one batch needs neither: the statements up to a pipeline's Sync run in
        # one implicit transaction, committed at the Sync (rolled back if one of them fails)
        whole = begin and commit
        if whole and group and self.group is not None and self.durable:
            grouped = self.group.run(steps, self._whole)
            if grouped is not None:
                self.trips += 1
                self.pending_begin, self.durable = True, False
                return grouped
        try:
            results = _pg_pipeline(self, steps, begin=begin and not whole, commit=commit and not whole)
        except self._error as exc:
            self.pending_begin = False
            self.in_tx = True  # left open (aborted): the executor rolls it back
            self._raise("; ".join(sql for sql, _ in steps), None, exc)
        self.trips += 1
        self.pending_begin = commit
        self.durable = self.durable and not commit
        self.in_tx = (self.in_tx or begin) and not commit
        return results

    def _whole(self, steps: list[Step]) -> list[Rows]:
        """PostgreSQL: ``steps`` as one transaction (a group's, :mod:`humeval.store.group`), on this connection."""
        return _pg_pipeline(self, steps, begin=False, commit=False)


# -- PostgreSQL: one round trip for a batch ------------------------------------------------------------------
# libpq's pipeline mode driven directly (psycopg's own pipeline costs a poll and a Python round per
# statement): every statement is prepared once per connection and then sent with text parameters,
# one Sync for the batch, one wait for the results.
_POSITIONAL: dict[str, tuple[bytes, tuple[str, ...]]] = {}
_INT8, _FLOAT8, _BOOL = 20, 701, 16


def _positional(sql: str) -> tuple[bytes, tuple[str, ...]]:
    found = _POSITIONAL.get(sql)
    if found is None:
        names: list[str] = []

        def number(m: re.Match[str]) -> str:
            if m.group(1) not in names:
                names.append(m.group(1))
            return f"${names.index(m.group(1)) + 1}"

        found = _POSITIONAL[sql] = (_PARAM.sub(number, sql).encode(), tuple(names))
    return found


def _encode(value: Any) -> tuple[bytes | None, int]:
    """A parameter as text, with its type (0: let the server infer it, as for strings)."""
    if value is None:
        return None, 0
    if isinstance(value, str):
        return value.encode(), 0
    if isinstance(value, bool):
        return (b"t" if value else b"f"), _BOOL
    if isinstance(value, int):
        return str(value).encode(), _INT8
    if isinstance(value, float):
        return repr(value).encode(), _FLOAT8
    return str(value).encode(), 0


def _pg_pipeline(db: Sql, steps: Sequence[Step], *, begin: bool, commit: bool) -> list[Rows]:
    """Send ``steps`` (within BEGIN/COMMIT when asked) in pipeline mode, one sync: one round trip."""
    from psycopg import pq
    from psycopg.errors import error_from_result

    pg = db.raw.pgconn
    sends = [(sql, *_bind(sql, params)) for sql, params in steps]  # everything encoded before the first byte is sent
    expect: list[int] = []  # per result: the step's index; -1 BEGIN or COMMIT; -2 a PREPARE
    new: list[str] = []  # statements prepared by this batch, in the order of their PREPARE results
    results: list[Any] = []
    pg.enter_pipeline_mode()
    try:
        _send(db, sends, expect, new, begin=begin, commit=commit)
        results = _receive(pg)
    finally:
        _forget_unprepared(db, new, [r for kind, r in zip(expect, results, strict=False) if kind == -2])
        try:
            if pg.pipeline_status != pq.PipelineStatus.OFF:
                pg.exit_pipeline_mode()
        except Exception:  # noqa: BLE001 - a broken connection: the error above says why
            pass
    error = next((r for r in results if r.status == pq.ExecStatus.FATAL_ERROR), None)
    if error is not None:
        if error.error_field(pq.DiagnosticField.SQLSTATE) == b"26000":
            db.prepared.clear()  # prepared statements dropped behind our back: prepare again (the operation is retried)
        raise error_from_result(error, encoding=db.raw.info.encoding)
    return _rows(db, len(steps), expect, results)


def _bind(sql: str, params: dict[str, Any] | None) -> tuple[bytes, list[bytes | None], list[int]]:
    """A statement's positional text, its encoded values and their type oids."""
    text, names = _positional(sql)
    encoded = [_encode(params[n]) for n in names] if names else []  # type: ignore[index]
    return text, [v for v, _ in encoded], [oid for _, oid in encoded]


def _send(db: Sql, sends: list[tuple[str, bytes, list[bytes | None], list[int]]], expect: list[int], new: list[str],
          *, begin: bool, commit: bool) -> None:
    """Queue BEGIN, each statement (prepared once per connection) and COMMIT, then the sync; flush it all."""
    pg = db.raw.pgconn
    if begin:
        pg.send_query_params(b"BEGIN", None)
        expect.append(-1)
    for i, (sql, text, values, oids) in enumerate(sends):
        name = db.prepared.get(sql)  # (a statement twice in a batch is prepared once)
        if name is None:
            db.named += 1
            name = db.prepared[sql] = f"humeval_{db.named}".encode()
            pg.send_prepare(name, text, param_types=oids)
            expect.append(-2)
            new.append(sql)
        pg.send_query_prepared(name, values)
        expect.append(i)
    if commit:
        pg.send_query_params(b"COMMIT", None)
        expect.append(-1)
    pg.pipeline_sync()
    while pg.flush() != 0:
        _wait(pg.socket, write=True)


def _receive(pg: Any) -> list[Any]:
    """Every result up to the sync, in order."""
    from psycopg import pq

    results: list[Any] = []
    while True:
        while pg.is_busy():
            _wait(pg.socket, write=False)
            pg.consume_input()
        r = pg.get_result()
        if r is None:
            continue  # the end of one statement's results
        if r.status == pq.ExecStatus.PIPELINE_SYNC:
            return results
        results.append(r)


def _forget_unprepared(db: Sql, new: list[str], prepares: list[Any]) -> None:
    """A PREPARE that did not succeed (an earlier statement failed, the connection broke) is sent again next time."""
    from psycopg import pq

    made = [r.status == pq.ExecStatus.COMMAND_OK for r in prepares]
    for sql, ok in zip(new, made + [False] * (len(new) - len(made)), strict=True):
        if not ok:
            db.prepared.pop(sql, None)


def _rows(db: Sql, n: int, expect: list[int], results: list[Any]) -> list[Rows]:
    """Each step's rows and row count, decoded as psycopg would."""
    from psycopg import pq
    from psycopg.adapt import Transformer

    tx = db.loader
    if tx is None:
        tx = db.loader = Transformer(db.raw)
    out = [Rows(0, [])] * n
    for kind, r in zip(expect, results, strict=True):
        if kind < 0:
            continue
        rows: list[tuple[Any, ...]] = []
        if r.status == pq.ExecStatus.TUPLES_OK and r.ntuples:
            tx.set_pgresult(r)
            rows = tx.load_rows(0, r.ntuples, tuple)
        count = r.command_tuples
        out[kind] = Rows(-1 if count is None else count, rows)
    return out


def _wait(fd: int, *, write: bool) -> None:
    import select

    if write:
        select.select([], [fd], [])
    else:
        select.select([fd], [], [])


def sql_of(conn: Connection) -> Sql:
    """The :class:`Sql` of the connection's current driver connection (made once per connection)."""
    info = conn.info
    db = info.get(SQL_INFO_KEY)
    if db is None or db.raw is not conn.connection.driver_connection:
        db = info[SQL_INFO_KEY] = Sql(conn)
    return db
