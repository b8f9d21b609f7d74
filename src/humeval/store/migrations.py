"""Versioned migrations: each is fixed DDL (or a data step) applied once, recorded in ``schema_version``.

The history starts from the first schema (the baseline, version 1: the tables as the first
store of 2026-11-21 had them, written out here as DDL). Each later change is a migration appended to
:data:`MIGRATIONS`, written out in full too: no migration reads :mod:`humeval.store.schema`, so that editing the
schema later cannot change what an earlier migration did. A fresh store and an old one go through the same
history: the baseline, then every migration after the store's version, in order; a test migrates a store of
every version to the current one on SQLite and PostgreSQL and compares it with the tables, columns and indexes
:mod:`humeval.store.schema` declares (``tests/unit/store/test_migrations.py``).

No store is older than the baseline: it is the first schema (the cut-off is the first store; nothing is
squashed), so every store since is migrated, none refused as too old. A store newer than this humeval is refused
with a :class:`StoreError` naming both versions (upgrade humeval).

The migrations: 1, the baseline; 2 adds the tables of live stopping with exclusion (``watched_tasks``,
``pending``, ``settled``, ``fed``); 3 adds ``bonuses`` (the ledger of platform bonuses); 4 adds
``outputs.format`` (an output's own format, empty for the study's) and ``judgements.comment`` (optional free
text); 5 indexes ``lists`` by holder and by expiry; 6 adds the indexes of the admin page's progress aggregates
(:data:`TASK_PROGRESS_INDEXES`); 7 indexes only the leases out by expiry (``ix_assignments_leased``, a partial
index), not every assignment by status; 8 adds ``lists.watched`` (the list's watched pair tasks: sessions
admitted by the stopping rule) and fills it; 9 replaces the lists' indexes of migration 5 by partial indexes
that hold exactly the free lists of each kind a claim asks for, in list order, so that a claim reads one entry
at any size of study (``ix_lists_free*``), the held lists (``ix_lists_held``) and the unfinished ones by expiry
(``ix_lists_expiring``); 10 adds ``hook_deliveries`` (the signed platform deliveries received lately, so that a
replayed hook does nothing) and indexes ``participants.created_at`` (the entry guard counts the participants who
entered within a window); 11 adds ``tasks.taken_by``; 12 reads a list's taken places from the assignments; 13 drops
``tasks.done``; 14 adds ``participants.network`` and ``participants.wide_network`` (the keys of the client's
networks, by which the entry guard counts the new participants of one network within a window) with their indexes;
15 adds ``generations`` (an arena's streamed answers, each with its record and failure); 16 adds ``prompt_uses``
(the uses of each typed prompt, shared by every server process) and fills it from the typed prompts stored; 17 adds
``waves`` and ``wave_outcomes`` (the confirmation wave of a decided pair, ``stopping.drift_check: wave``).

Stores created before the history was written out ran migration 1 as the schema of their day, so a table,
column or index of a later migration may already be there: each migration creates only what is missing
(``IF NOT EXISTS``, a column added only when absent) and converges on the same store. Migrations run in one
write transaction (PostgreSQL: under an advisory lock), so several processes starting at once apply each
migration once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from sqlalchemy import Connection, inspect, select, text

from humeval.errors import StoreError
from humeval.store import schema

__all__ = ["MARK_WATCHED_LISTS", "MIGRATIONS", "TASK_PROGRESS_INDEXES", "current_version", "migrate"]

#: ``{serial}``: an integer key the database numbers (SQLite: an ``INTEGER`` primary key is the row id)
_SERIAL = {"sqlite": "INTEGER", "postgresql": "SERIAL"}

_V1 = (
    """CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at FLOAT NOT NULL,
        PRIMARY KEY (version))""",
    """CREATE TABLE IF NOT EXISTS meta ("key" VARCHAR(64) NOT NULL, value TEXT NOT NULL, PRIMARY KEY ("key"))""",
    """CREATE TABLE IF NOT EXISTS outputs (item_id VARCHAR(200) NOT NULL, system VARCHAR(200) NOT NULL,
        output TEXT NOT NULL, input TEXT NOT NULL, "references" TEXT NOT NULL, PRIMARY KEY (item_id, system))""",
    """CREATE TABLE IF NOT EXISTS tasks (seq INTEGER NOT NULL, task_id VARCHAR(400) NOT NULL,
        item_id VARCHAR(200) NOT NULL, systems TEXT NOT NULL, criteria TEXT NOT NULL, family VARCHAR(16) NOT NULL,
        kind VARCHAR(16) NOT NULL, expected TEXT NOT NULL, text TEXT NOT NULL, repeat_of VARCHAR(400) NOT NULL,
        cap INTEGER NOT NULL, taken INTEGER NOT NULL, done INTEGER NOT NULL, open INTEGER NOT NULL,
        closed INTEGER NOT NULL, PRIMARY KEY (seq), UNIQUE (task_id))""",
    "CREATE INDEX IF NOT EXISTS ix_tasks_pool ON tasks (open, closed, seq)",
    """CREATE TABLE IF NOT EXISTS lists (list_id VARCHAR(64) NOT NULL, round INTEGER NOT NULL, size INTEGER NOT NULL,
        participant_id VARCHAR(200), expires_at FLOAT, completed INTEGER NOT NULL, PRIMARY KEY (list_id))""",
    """CREATE TABLE IF NOT EXISTS list_tasks (list_id VARCHAR(64) NOT NULL, position INTEGER NOT NULL,
        task_id VARCHAR(400) NOT NULL, assignment_id VARCHAR(64), PRIMARY KEY (list_id, position))""",
    """CREATE TABLE IF NOT EXISTS participants (participant_id VARCHAR(200) NOT NULL, platform VARCHAR(32) NOT NULL,
        params TEXT NOT NULL, list_id VARCHAR(64), created_at FLOAT NOT NULL, consented_at FLOAT, completed_at FLOAT,
        last_seen FLOAT NOT NULL, PRIMARY KEY (participant_id))""",
    """CREATE TABLE IF NOT EXISTS sessions (session_id VARCHAR(64) NOT NULL, participant_id VARCHAR(200) NOT NULL,
        created_at FLOAT NOT NULL, user_agent VARCHAR(300) NOT NULL, PRIMARY KEY (session_id))""",
    "CREATE INDEX IF NOT EXISTS ix_sessions_participant_id ON sessions (participant_id)",
    """CREATE TABLE IF NOT EXISTS assignments (assignment_id VARCHAR(64) NOT NULL, participant_id VARCHAR(200) NOT NULL,
        task_id VARCHAR(400) NOT NULL, list_id VARCHAR(64), position INTEGER, display TEXT NOT NULL,
        status VARCHAR(16) NOT NULL, created_at FLOAT NOT NULL, expires_at FLOAT NOT NULL, completed_at FLOAT,
        PRIMARY KEY (assignment_id), CONSTRAINT uq_assignment_participant_task UNIQUE (participant_id, task_id))""",
    "CREATE INDEX IF NOT EXISTS ix_assignments_status ON assignments (status, expires_at)",
    "CREATE INDEX IF NOT EXISTS ix_assignments_task ON assignments (task_id)",
    """CREATE TABLE IF NOT EXISTS judgements (id {serial} NOT NULL, idempotency_key VARCHAR(128) NOT NULL,
        assignment_id VARCHAR(64) NOT NULL, participant_id VARCHAR(200) NOT NULL, task_id VARCHAR(400) NOT NULL,
        list_id VARCHAR(64) NOT NULL, kind VARCHAR(16) NOT NULL, item_id VARCHAR(200) NOT NULL, display TEXT NOT NULL,
        "values" TEXT NOT NULL, seconds FLOAT, revision INTEGER NOT NULL, submitted_at FLOAT NOT NULL,
        PRIMARY KEY (id), UNIQUE (idempotency_key))""",
    "CREATE INDEX IF NOT EXISTS ix_judgements_assignment_id ON judgements (assignment_id)",
    """CREATE TABLE IF NOT EXISTS outcomes (comparison VARCHAR(200) NOT NULL, n INTEGER NOT NULL,
        task_id VARCHAR(400) NOT NULL, outcome INTEGER NOT NULL, successes INTEGER NOT NULL, estimate FLOAT NOT NULL,
        threshold_a FLOAT NOT NULL, threshold_b FLOAT NOT NULL, at FLOAT NOT NULL, PRIMARY KEY (comparison, n))""",
    """CREATE TABLE IF NOT EXISTS stopping (comparison VARCHAR(200) NOT NULL, rule VARCHAR(64) NOT NULL,
        delta FLOAT NOT NULL, system_a VARCHAR(200) NOT NULL, system_b VARCHAR(200) NOT NULL, n INTEGER NOT NULL,
        successes INTEGER NOT NULL, outcome VARCHAR(16) NOT NULL, estimate FLOAT, threshold_a FLOAT,
        threshold_b FLOAT, reason TEXT NOT NULL, decided_at FLOAT, logged INTEGER NOT NULL, PRIMARY KEY (comparison))""",
    """CREATE TABLE IF NOT EXISTS events (id {serial} NOT NULL, at FLOAT NOT NULL, kind VARCHAR(32) NOT NULL,
        participant_id VARCHAR(200), data TEXT NOT NULL, PRIMARY KEY (id))""",
)

_V2 = (
    """CREATE TABLE IF NOT EXISTS watched_tasks (comparison VARCHAR(200) NOT NULL, task_id VARCHAR(400) NOT NULL,
        PRIMARY KEY (comparison, task_id))""",
    "CREATE INDEX IF NOT EXISTS ix_watched_tasks_task ON watched_tasks (task_id)",
    """CREATE TABLE IF NOT EXISTS pending (id {serial} NOT NULL, comparison VARCHAR(200) NOT NULL,
        task_id VARCHAR(400) NOT NULL, outcome INTEGER NOT NULL, assignments TEXT NOT NULL, participants TEXT NOT NULL,
        state VARCHAR(16) NOT NULL, at FLOAT NOT NULL, PRIMARY KEY (id))""",
    """CREATE TABLE IF NOT EXISTS settled (participant_id VARCHAR(200) NOT NULL, at FLOAT NOT NULL,
        excluded INTEGER NOT NULL, excluded_tasks TEXT NOT NULL, reason TEXT NOT NULL, PRIMARY KEY (participant_id))""",
    """CREATE TABLE IF NOT EXISTS fed (comparison VARCHAR(200) NOT NULL, assignment_id VARCHAR(64) NOT NULL,
        seq INTEGER, at FLOAT NOT NULL, PRIMARY KEY (comparison, assignment_id))""",
)

_V3 = (
    """CREATE TABLE IF NOT EXISTS bonuses (platform_study VARCHAR(64) NOT NULL, participant_id VARCHAR(200) NOT NULL,
        submission_id VARCHAR(64) NOT NULL, amount_cents INTEGER NOT NULL, state VARCHAR(16) NOT NULL,
        bulk_id VARCHAR(64), created_at FLOAT NOT NULL, updated_at FLOAT NOT NULL, detail TEXT NOT NULL,
        PRIMARY KEY (platform_study, participant_id))""",
)


def _ddl(*statements: str) -> Callable[[Connection], None]:
    """A migration of fixed statements (``{serial}``: the dialect's numbered key)."""
    def run(conn: Connection) -> None:
        for ddl in statements:
            conn.execute(text(ddl.format(serial=_SERIAL[conn.dialect.name])))
    return run


def _add_column(conn: Connection, table: str, column: str, ddl: str) -> None:
    """``ALTER TABLE table ADD COLUMN column ddl`` unless the column is there (a store of that day has it)."""
    if column not in {c["name"] for c in inspect(conn).get_columns(table)}:
        conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {ddl}"))


def _drop_column(conn: Connection, table: str, column: str) -> None:
    """``ALTER TABLE table DROP COLUMN column`` if the column is there."""
    if column in {c["name"] for c in inspect(conn).get_columns(table)}:
        conn.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))


def _v4(conn: Connection) -> None:
    _add_column(conn, "outputs", "format", "VARCHAR(20) NOT NULL DEFAULT ''")
    _add_column(conn, "judgements", "comment", "TEXT NOT NULL DEFAULT ''")


_V5 = ("CREATE INDEX IF NOT EXISTS ix_lists_holder ON lists (participant_id)",  # replaced by migration 9
       "CREATE INDEX IF NOT EXISTS ix_lists_unheld ON lists (list_id) WHERE participant_id IS NULL",
       "CREATE INDEX IF NOT EXISTS ix_lists_expiry ON lists (completed, expires_at)")


#: the admin page's aggregates over the tasks (a study of 100,000 items has 600,000) read an index in
#: its order instead of sorting the table. SQLite: covering indexes (each aggregate one pass over an
#: index, no table lookups; a judgement rewrites two index entries). PostgreSQL aggregates with hash
#: tables and keeps its updates heap-only: there, only the page of items by ``item_id`` is indexed, on
#: columns that never change.
_V6 = {
    "sqlite": ("CREATE INDEX IF NOT EXISTS ix_tasks_item ON tasks (kind, item_id, cap, done)",
               "CREATE INDEX IF NOT EXISTS ix_tasks_progress ON tasks (kind, criteria, systems, cap, done, closed)"),
    "postgresql": ("CREATE INDEX IF NOT EXISTS ix_tasks_item ON tasks (kind, item_id)",),
}
#: since migration 13, without ``tasks.done`` (the judgements done are counted from the assignments): on SQLite,
#: indexes that an answer no longer rewrites, and the answered assignments by task, which the counts read (an answer
#: adds its entry). Not on PostgreSQL, which counts with hash joins: there, with that index, the answers' own
#: statements ran slower (which plans changed was not examined)
TASK_PROGRESS_INDEXES = {
    "sqlite": ("CREATE INDEX IF NOT EXISTS ix_tasks_item ON tasks (kind, item_id, cap)",
               "CREATE INDEX IF NOT EXISTS ix_tasks_progress ON tasks (kind, criteria, systems, cap, closed)",
               "CREATE INDEX IF NOT EXISTS ix_assignments_done ON assignments (task_id) WHERE status = 'done'"),
    "postgresql": _V6["postgresql"],
}


def _v6(conn: Connection) -> None:
    for ddl in _V6.get(conn.dialect.name, ()):
        conn.execute(text(ddl))


_V7 = ("DROP INDEX IF EXISTS ix_assignments_status",
       "CREATE INDEX IF NOT EXISTS ix_assignments_leased ON assignments (expires_at) WHERE status = 'leased'")


#: ``lists.watched``: how many of the list's tasks a stopping rule watches (seeding and re-run lists set it too)
MARK_WATCHED_LISTS = (
    "UPDATE lists SET watched = (SELECT count(*) FROM list_tasks lt JOIN watched_tasks w ON w.task_id = lt.task_id "
    "WHERE lt.list_id = lists.list_id) WHERE EXISTS (SELECT 1 FROM list_tasks lt JOIN watched_tasks w "
    "ON w.task_id = lt.task_id WHERE lt.list_id = lists.list_id)"
)


def _v8(conn: Connection) -> None:
    _add_column(conn, "lists", "watched", "INTEGER NOT NULL DEFAULT 0")
    conn.execute(text(MARK_WATCHED_LISTS))


_FREE = "participant_id IS NULL AND completed = 0"
_V9 = ("DROP INDEX IF EXISTS ix_lists_holder", "DROP INDEX IF EXISTS ix_lists_unheld", "DROP INDEX IF EXISTS ix_lists_expiry",
       "CREATE INDEX IF NOT EXISTS ix_lists_held ON lists (participant_id) WHERE participant_id IS NOT NULL",
       f"CREATE INDEX IF NOT EXISTS ix_lists_free ON lists (list_id) WHERE {_FREE} AND watched >= 0",
       f"CREATE INDEX IF NOT EXISTS ix_lists_free_watched ON lists (list_id) WHERE {_FREE} AND watched > 0",
       f"CREATE INDEX IF NOT EXISTS ix_lists_free_unwatched ON lists (list_id) WHERE {_FREE} AND watched = 0",
       "CREATE INDEX IF NOT EXISTS ix_lists_expiring ON lists (expires_at) WHERE completed = 0")

_V10 = ("CREATE TABLE IF NOT EXISTS hook_deliveries (delivery VARCHAR(64) NOT NULL, at FLOAT NOT NULL, PRIMARY KEY (delivery))",
        "CREATE INDEX IF NOT EXISTS ix_participants_created_at ON participants (created_at)")




def _v11(conn: Connection) -> None:
    _add_column(conn, "tasks", "taken_by", "VARCHAR(64)")


def _v12(conn: Connection) -> None:
    """A list's place is taken while one of its assignments is leased or done, read from the assignments."""
    _drop_column(conn, "list_tasks", "assignment_id")
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_assignments_place ON assignments (list_id, position)"))


def _v13(conn: Connection) -> None:
    """``tasks.done`` dropped: an answer writes no task row, and the judgements done are counted from the assignments
    done, by task (SQLite: its indexes of the column are made again without it)."""
    if conn.dialect.name == "sqlite":
        conn.execute(text("DROP INDEX IF EXISTS ix_tasks_item"))
        conn.execute(text("DROP INDEX IF EXISTS ix_tasks_progress"))
    _drop_column(conn, "tasks", "done")
    for ddl in TASK_PROGRESS_INDEXES.get(conn.dialect.name, ()):
        conn.execute(text(ddl))


def _v14(conn: Connection) -> None:
    """The keys of a participant's networks at entry (NULL for those who entered before), indexed by network and time."""
    _add_column(conn, "participants", "network", "VARCHAR(64)")
    _add_column(conn, "participants", "wide_network", "VARCHAR(64)")
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_participants_network ON participants (network, created_at)"))
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_participants_wide_network ON participants (wide_network, created_at)"))


_V15 = ("CREATE TABLE IF NOT EXISTS generations (id {serial} NOT NULL, assignment_id VARCHAR(64) NOT NULL, "
        "participant_id VARCHAR(200) NOT NULL, task_id VARCHAR(400) NOT NULL, side INTEGER NOT NULL, "
        "model VARCHAR(200) NOT NULL, error VARCHAR(32) NOT NULL, at FLOAT NOT NULL, record TEXT NOT NULL, "
        "PRIMARY KEY (id))",
        "CREATE INDEX IF NOT EXISTS ix_generations_assignment_id ON generations (assignment_id)")

_V17 = ("CREATE TABLE IF NOT EXISTS waves (comparison VARCHAR(200) NOT NULL, side INTEGER NOT NULL, size INTEGER NOT NULL, "
        "opens_at FLOAT NOT NULL, state VARCHAR(16) NOT NULL, opened_at FLOAT, closed_at FLOAT, n INTEGER NOT NULL, "
        "wins INTEGER NOT NULL, flagged INTEGER, PRIMARY KEY (comparison))",
        "CREATE TABLE IF NOT EXISTS wave_outcomes (comparison VARCHAR(200) NOT NULL, assignment_id VARCHAR(64) NOT NULL, "
        "seq INTEGER NOT NULL, outcome INTEGER NOT NULL, at FLOAT NOT NULL, PRIMARY KEY (comparison, assignment_id))")


def _v16(conn: Connection) -> None:
    """The uses of each typed prompt, counted from the ``battle_prompt`` events stored before (a data step)."""
    import json
    from collections import Counter

    from humeval.arena.prompts import prompt_key
    from humeval.hashing import sha256_json

    conn.execute(text("CREATE TABLE IF NOT EXISTS prompt_uses (prompt_key VARCHAR(64) NOT NULL, uses INTEGER NOT NULL, "
                      "PRIMARY KEY (prompt_key))"))
    if conn.execute(text("SELECT COUNT(*) FROM prompt_uses")).scalar():
        return  # filled already (a store that ran this migration's DDL as its schema)
    rows = (json.loads(d) for (d,) in conn.execute(text("SELECT data FROM events WHERE kind = 'battle_prompt'")))
    uses = Counter(sha256_json(prompt_key(str(p["text"]))) for p in rows if p.get("source") == "typed")
    if uses:
        conn.execute(text("INSERT INTO prompt_uses (prompt_key, uses) VALUES (:k, :n)"),
                     [{"k": k, "n": n} for k, n in uses.items()])


MIGRATIONS: Sequence[Callable[[Connection], None]] = (
    _ddl(*_V1), _ddl(*_V2), _ddl(*_V3), _v4, _ddl(*_V5), _v6, _ddl(*_V7), _v8, _ddl(*_V9), _ddl(*_V10), _v11, _v12,
    _v13, _v14, _ddl(*_V15), _v16, _ddl(*_V17),
)
_LOCK_ID = 0x6875_6D65  # "hume"


def current_version(conn: Connection) -> int:
    """The highest applied migration (0 for an empty database)."""
    if not inspect(conn).has_table("schema_version"):
        return 0
    value = conn.execute(select(schema.schema_version.c.version).order_by(schema.schema_version.c.version.desc()).limit(1)).scalar()
    return int(value or 0)


def migrate(conn: Connection, *, to: int | None = None) -> int:
    """Apply the missing migrations (up to version ``to``, default the last) inside the caller's transaction;
    return the version reached."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_ID})
    have, last = current_version(conn), len(MIGRATIONS) if to is None else to
    if have > len(MIGRATIONS):
        raise StoreError(
            f"the store is at schema version {have} but this humeval knows versions up to {len(MIGRATIONS)}; "
            "upgrade humeval"
        )
    for version in range(have + 1, last + 1):
        MIGRATIONS[version - 1](conn)
        conn.execute(schema.schema_version.insert().values(version=version, applied_at=time.time()))
    return max(have, last)
