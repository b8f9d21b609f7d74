"""Fixtures: the store backends (SQLite file, PostgreSQL schema per test) and running servers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

PG = "postgresql://postgres@127.0.0.1:5432/test"


def _pg_available() -> bool:
    import psycopg

    try:
        psycopg.connect(PG, connect_timeout=3).close()
    except psycopg.OperationalError:
        return False
    return True


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None (SQLite study.db) or a PostgreSQL URL whose search_path is a fresh schema, dropped afterwards."""
    if request.param == "sqlite":
        yield None
        return
    import psycopg

    if not _pg_available():
        pytest.fail(f"PostgreSQL is not reachable at {PG}")
    schema = f"hv_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{PG}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
