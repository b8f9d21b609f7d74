"""Versioned migrations: each is a function applied once, recorded in ``schema_version``.

Migration 1 creates every table of :mod:`humeval.store.schema`; migration 2 adds the
tables of live stopping with exclusion (``watched_tasks``, ``pending``, ``settled``,
``fed``) to a store created before them (creating only missing tables); migration 3 adds
``bonuses`` (the ledger of platform bonuses); migration 4 adds ``outputs.format`` (an
output's own format, empty for the study's) and ``judgements.comment`` (optional free text); migration 5 indexes
``lists`` by holder and by expiry (claims and releases of lists without a scan); migration 6 adds the
indexes of the admin page's progress aggregates (:data:`TASK_PROGRESS_INDEXES`); migration 7 indexes only the
leases out by expiry (``ix_assignments_leased``, a partial index), not every assignment by status; migration 8 adds
``lists.watched`` (the list's watched pair tasks: sessions admitted by the stopping rule) and fills it; migration 9
replaces the lists' indexes of migration 5 by those of :mod:`humeval.store.schema`: partial indexes that hold
exactly the free lists of each kind a claim asks for, in list order, so that a claim reads one entry at any size
of study (``ix_lists_free*``), the held lists (``ix_lists_held``) and the unfinished ones by expiry
(``ix_lists_expiring``); migration 10 adds ``hook_deliveries`` (the signed platform deliveries received lately,
so that a replayed hook does nothing) and indexes ``participants.created_at`` (the entry guard counts the
participants who entered within a window). A later change appends a
function to :data:`MIGRATIONS`; a store newer than this humeval is refused. Migrations
run in one write transaction (PostgreSQL: under an advisory lock), so several processes
starting at once apply each migration once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Connection, inspect, select, text

from humeval.errors import StoreError
from humeval.store import schema

__all__ = ["MARK_WATCHED_LISTS", "MIGRATIONS", "TASK_PROGRESS_INDEXES", "current_version", "migrate"]


def _v1(conn: Connection) -> None:
    schema.metadata.create_all(conn)


def _v2(conn: Connection) -> None:
    new = [schema.watched_tasks, schema.pending, schema.settled, schema.fed]
    schema.metadata.create_all(conn, tables=new, checkfirst=True)


def _v3(conn: Connection) -> None:
    schema.metadata.create_all(conn, tables=[schema.bonuses], checkfirst=True)


def _v4(conn: Connection) -> None:
    columns = {c["name"] for c in inspect(conn).get_columns("outputs")}
    if "format" not in columns:
        conn.execute(text("ALTER TABLE outputs ADD COLUMN format VARCHAR(20) NOT NULL DEFAULT ''"))
    if "comment" not in {c["name"] for c in inspect(conn).get_columns("judgements")}:
        conn.execute(text("ALTER TABLE judgements ADD COLUMN comment TEXT NOT NULL DEFAULT ''"))


def _v5(conn: Connection) -> None:
    for ddl in ("CREATE INDEX IF NOT EXISTS ix_lists_holder ON lists (participant_id)",  # replaced by migration 9
                "CREATE INDEX IF NOT EXISTS ix_lists_unheld ON lists (list_id) WHERE participant_id IS NULL",
                "CREATE INDEX IF NOT EXISTS ix_lists_expiry ON lists (completed, expires_at)"):
        conn.execute(text(ddl))


#: the admin page's aggregates over the tasks (a study of 100,000 items has 600,000) read an index in
#: its order instead of sorting the table. SQLite: covering indexes (each aggregate one pass over an
#: index, no table lookups; a judgement rewrites two index entries). PostgreSQL aggregates with hash
#: tables and keeps its updates heap-only: there, only the page of items by ``item_id`` is indexed, on
#: columns that never change.
TASK_PROGRESS_INDEXES = {
    "sqlite": ("CREATE INDEX IF NOT EXISTS ix_tasks_item ON tasks (kind, item_id, cap, done)",
               "CREATE INDEX IF NOT EXISTS ix_tasks_progress ON tasks (kind, criteria, systems, cap, done, closed)"),
    "postgresql": ("CREATE INDEX IF NOT EXISTS ix_tasks_item ON tasks (kind, item_id)",),
}


def _v6(conn: Connection) -> None:
    for ddl in TASK_PROGRESS_INDEXES.get(conn.dialect.name, ()):
        conn.execute(text(ddl))


def _v7(conn: Connection) -> None:
    conn.execute(text("DROP INDEX IF EXISTS ix_assignments_status"))
    for index in schema.assignments.indexes:
        index.create(conn, checkfirst=True)


#: ``lists.watched``: how many of the list's tasks a stopping rule watches (seeding and re-run lists set it too)
MARK_WATCHED_LISTS = (
    "UPDATE lists SET watched = (SELECT count(*) FROM list_tasks lt JOIN watched_tasks w ON w.task_id = lt.task_id "
    "WHERE lt.list_id = lists.list_id) WHERE EXISTS (SELECT 1 FROM list_tasks lt JOIN watched_tasks w "
    "ON w.task_id = lt.task_id WHERE lt.list_id = lists.list_id)"
)


def _v8(conn: Connection) -> None:
    if "watched" not in {c["name"] for c in inspect(conn).get_columns("lists")}:
        conn.execute(text("ALTER TABLE lists ADD COLUMN watched INTEGER NOT NULL DEFAULT 0"))
    conn.execute(text(MARK_WATCHED_LISTS))


#: the lists' indexes of migration 5, replaced in migration 9
_CLAIM_INDEXES_V5 = ("ix_lists_holder", "ix_lists_unheld", "ix_lists_expiry")


def _v9(conn: Connection) -> None:
    for name in _CLAIM_INDEXES_V5:
        conn.execute(text(f"DROP INDEX IF EXISTS {name}"))
    for index in schema.lists.indexes:
        index.create(conn, checkfirst=True)


def _v10(conn: Connection) -> None:
    schema.metadata.create_all(conn, tables=[schema.hook_deliveries], checkfirst=True)
    for index in schema.participants.indexes:
        index.create(conn, checkfirst=True)


MIGRATIONS: list[Callable[[Connection], None]] = [_v1, _v2, _v3, _v4, _v5, _v6, _v7, _v8, _v9, _v10]
_LOCK_ID = 0x6875_6D65  # "hume"


def current_version(conn: Connection) -> int:
    """The highest applied migration (0 for an empty database)."""
    if not inspect(conn).has_table("schema_version"):
        return 0
    value = conn.execute(select(schema.schema_version.c.version).order_by(schema.schema_version.c.version.desc()).limit(1)).scalar()
    return int(value or 0)


def migrate(conn: Connection) -> int:
    """Apply missing migrations inside the caller's transaction; return the version reached."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_ID})
    have = current_version(conn)
    if have > len(MIGRATIONS):
        raise StoreError(
            f"the store is at schema version {have} but this humeval knows versions up to {len(MIGRATIONS)}; "
            "upgrade humeval"
        )
    for version in range(have + 1, len(MIGRATIONS) + 1):
        MIGRATIONS[version - 1](conn)
        conn.execute(schema.schema_version.insert().values(version=version, applied_at=time.time()))
    return len(MIGRATIONS)
