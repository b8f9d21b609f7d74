"""Fixtures: the store backends (SQLite file, PostgreSQL schema per test) and running servers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PG = "postgresql://postgres@127.0.0.1:5432/test"


def _pg_available() -> bool:
    import psycopg

    try:
        psycopg.connect(PG, connect_timeout=3).close()
    except psycopg.OperationalError:
        return False
    return True


@contextmanager
def pg_scratch(kind: str, prefix: str) -> Iterator[str]:
    """A fresh PostgreSQL ``SCHEMA`` or ``DATABASE`` named ``prefix`` + a random suffix, dropped afterwards;
    yields its name."""
    import psycopg

    if not _pg_available():
        pytest.fail(f"PostgreSQL is not reachable at {PG}")
    name = f"{prefix}{uuid.uuid4().hex[:12]}"
    drop = {"SCHEMA": f'DROP SCHEMA "{name}" CASCADE', "DATABASE": f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'}[kind]
    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f'CREATE {kind} "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(drop)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None (SQLite study.db) or a PostgreSQL URL whose search_path is a fresh schema, dropped afterwards."""
    if request.param == "sqlite":
        yield None
        return
    with pg_scratch("SCHEMA", "hv_") as schema:
        yield f"{PG}?options=-csearch_path%3D{schema}"
