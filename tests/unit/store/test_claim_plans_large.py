"""The claim's plans at the size of a study of 100,000 items (150,000 participant lists of 12), on a store of the
current schema whose ``lists`` are filled directly (no study is designed): each claim statement reads the first
free list of its kind by its partial index, as at 3,000 lists (``test_claim_plans.py``, whose checks these are).
SQLite without and with statistics (``ANALYZE``); PostgreSQL (if reachable) after ``ANALYZE`` (seeding runs it),
with the values bound and as the generic plan of a prepared statement."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from humeval.store.migrations import migrate
from tests.unit.store.test_claim_plans import (
    _pg_reachable,
    check_pg_plans,
    check_sqlite_plans,
    statements,
)

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
LISTS = 150_000
#: lists L000001 .. L150000, the first half sessions of a watched comparison, a few held and a few finished
_FILL = {
    "sqlite": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n}) "
              "INSERT INTO lists (list_id, round, size, completed, watched) SELECT printf('L%06d', i), 1, 12, 0, "
              "i <= {n} / 2 FROM n",
    "postgresql": "INSERT INTO lists (list_id, round, size, completed, watched) SELECT 'L' || lpad(i::text, 6, '0'), 1, "
                  "12, 0, (i <= {n} / 2)::int FROM generate_series(1, {n}) AS i",
}
_SOME_TAKEN = ("UPDATE lists SET participant_id = 'P' || list_id, expires_at = 2e9 WHERE list_id < 'L000100'",
               "UPDATE lists SET completed = 1 WHERE list_id BETWEEN 'L075000' AND 'L075100'")


def _fill(conn: object) -> None:
    conn.execute(text(_FILL[conn.dialect.name].format(n=LISTS)))  # type: ignore[attr-defined]
    for sql in _SOME_TAKEN:
        conn.execute(text(sql))  # type: ignore[attr-defined]


@pytest.mark.parametrize("analyzed", [False, True], ids=["no-statistics", "analyzed"])
def test_sqlite_claims_at_150000_lists(tmp_path: Path, analyzed: bool) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'large.db'}")
    try:
        with engine.begin() as conn:
            migrate(conn)
            _fill(conn)
            raw = conn.connection.driver_connection
            if analyzed:
                raw.execute("ANALYZE")
            assert raw.execute("SELECT count(*) FROM lists").fetchone()[0] == LISTS
            check_sqlite_plans(raw)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_postgresql_claims_at_150000_lists() -> None:
    if not _pg_reachable():
        pytest.skip("PostgreSQL is not reachable")
    import psycopg

    name = f"hv_large_{uuid.uuid4().hex[:12]}"
    admin_url = PG.replace("+psycopg", "")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{name}"')
    engine = create_engine(f"{PG}?options=-csearch_path%3D{name}")
    try:
        with engine.begin() as conn:
            migrate(conn)
            _fill(conn)
        with psycopg.connect(admin_url, autocommit=True, options=f"-csearch_path={name}") as conn:
            conn.execute("ANALYZE lists")
            check_pg_plans(conn, list(statements()))
    finally:
        engine.dispose()
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{name}" CASCADE')
