"""The schema's history: a store of every version, migrated to the last, is the store the schema declares.

A store of version N is built by applying the migrations up to N (a fresh store is version 0); migrated to the
last version, its tables, columns (name, type, nullability, default), primary keys, unique constraints and indexes
(name, columns, uniqueness, partial condition) equal those of a store created from :mod:`humeval.store.schema`
(with the dialect's :data:`~humeval.store.migrations.TASK_PROGRESS_INDEXES`, which the schema does not declare).
On SQLite and, if reachable, PostgreSQL.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, create_engine, inspect, text

from humeval.errors import StoreError
from humeval.store import schema
from humeval.store.migrations import MIGRATIONS, TASK_PROGRESS_INDEXES, current_version, migrate

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
VERSIONS = range(len(MIGRATIONS) + 1)


def _norm(value: Any) -> Any:
    """A default or index condition as text without the dialect's decorations (casts, quotes, parentheses)."""
    if value is None:
        return None
    out = re.sub(r"::[a-z ]+(\([0-9]+\))?", "", str(value))
    return re.sub(r"[()'\"\s]", "", out).lower()


def shape(conn: Connection) -> dict[str, Any]:
    """Every table's columns, keys and indexes, as inspected."""
    insp = inspect(conn)
    out: dict[str, Any] = {}
    for table in sorted(insp.get_table_names()):
        columns = {c["name"]: (str(c["type"]).split("(")[0] if conn.dialect.name == "postgresql" else str(c["type"]),
                               c["nullable"], _norm(c["default"]))
                   for c in insp.get_columns(table)}
        indexes = {i["name"]: (tuple(i["column_names"]), bool(i["unique"]),
                               _norm((i.get("dialect_options") or {}).get(f"{conn.dialect.name}_where")))
                   for i in insp.get_indexes(table)}
        if conn.dialect.name == "sqlite":  # the partial condition, from the index's own DDL
            for name, sql in conn.execute(text("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = :t "
                                               "AND sql IS NOT NULL"), {"t": table}):
                where = re.search(r"\bWHERE\b(.*)$", sql, re.DOTALL | re.IGNORECASE)
                indexes[name] = (*indexes[name][:2], _norm(where[1]) if where else None)
        uniques = sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(table))
        out[table] = {"columns": columns, "pk": insp.get_pk_constraint(table)["constrained_columns"],
                      "unique": uniques, "indexes": indexes}
    return out


def declared(conn: Connection) -> None:
    """The store the schema declares, created directly."""
    schema.metadata.create_all(conn)
    for ddl in TASK_PROGRESS_INDEXES.get(conn.dialect.name, ()):
        conn.execute(text(ddl))


def _pg_reachable() -> bool:
    try:
        import psycopg

        psycopg.connect(PG.replace("+psycopg", ""), connect_timeout=3).close()
    except Exception:  # noqa: BLE001 (the driver missing or the server down: skipped either way)
        return False
    return True


def _admin(sql: str) -> None:
    engine = create_engine(PG, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(sql))
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A factory of empty databases of one kind (each a new SQLite file, or a new PostgreSQL schema)."""
    engines: list[Engine] = []
    schemas: list[str] = []
    if request.param == "postgresql" and not _pg_reachable():
        pytest.skip(f"PostgreSQL is not reachable at {PG}")

    def make() -> Engine:
        if request.param == "sqlite":
            engine = create_engine(f"sqlite:///{tmp_path / f'{len(engines)}.db'}")
        else:
            name = f"hv_mig_{uuid.uuid4().hex[:12]}"
            schemas.append(name)
            _admin(f'CREATE SCHEMA "{name}"')
            engine = create_engine(f"{PG}?options=-csearch_path%3D{name}")
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.dispose()
    for name in schemas:
        _admin(f'DROP SCHEMA "{name}" CASCADE')


def test_a_store_of_every_version_migrates_to_the_declared_schema(database: Any) -> None:
    with database().begin() as conn:
        declared(conn)
        want = shape(conn)
    for version in VERSIONS:  # 0: a fresh store goes through the same history
        engine = database()
        with engine.begin() as conn:
            assert migrate(conn, to=version) == version and current_version(conn) == version
        with engine.begin() as conn:  # the old store, opened again by this humeval
            assert migrate(conn) == len(MIGRATIONS)
            assert [v for (v,) in conn.execute(text("SELECT version FROM schema_version ORDER BY version"))] == \
                list(range(1, len(MIGRATIONS) + 1))
            got = shape(conn)
        assert got == want, f"a store of version {version}, migrated"


def test_a_store_newer_than_this_humeval_is_refused(database: Any) -> None:
    with database().begin() as conn:
        migrate(conn)
        conn.execute(schema.schema_version.insert().values(version=len(MIGRATIONS) + 1, applied_at=0.0))
        with pytest.raises(StoreError, match=rf"schema version {len(MIGRATIONS) + 1} .* up to {len(MIGRATIONS)}"):
            migrate(conn)


def test_the_migrations_do_not_follow_the_schema(monkeypatch: pytest.MonkeyPatch, database: Any) -> None:
    """The history is fixed: a column added to the declared schema alone (no migration) makes the stores differ."""
    from sqlalchemy import Column, Integer

    with database().begin() as conn:
        migrate(conn)
        migrated = shape(conn)
    extra = Column("extra", Integer, nullable=True)
    schema.hook_deliveries.append_column(extra)
    try:
        with database().begin() as conn:
            declared(conn)
            assert shape(conn)["hook_deliveries"] != migrated["hook_deliveries"]
        with database().begin() as conn:
            migrate(conn)
            assert shape(conn) == migrated
    finally:
        schema.hook_deliveries._columns.remove(extra)


def test_migration_16_counts_the_typed_prompts_stored_before_it(database: Any) -> None:
    """A store of version 15 with typed prompts: the uses of each (by its key) are in ``prompt_uses`` after."""
    import json

    from humeval.hashing import sha256_json

    engine = database()
    with engine.begin() as conn:
        migrate(conn, to=15)
        prompts = [("a1", "Hello!", "typed"), ("a2", "hello", "typed"), ("a3", "Write a poem.", "typed"),
                   ("a4", "hello", "file")]  # a file prompt in a typed one's place is not a use
        for aid, prompt, source in prompts:
            conn.execute(text("INSERT INTO events (at, kind, participant_id, data) VALUES (0, 'battle_prompt', 'p', :d)"),
                         {"d": json.dumps({"assignment_id": aid, "id": aid, "text": prompt, "source": source})})
    with engine.begin() as conn:
        migrate(conn)
        uses = dict(conn.execute(text("SELECT prompt_key, uses FROM prompt_uses")).all())
    assert uses == {sha256_json("hello"): 2, sha256_json("write a poem"): 1}
