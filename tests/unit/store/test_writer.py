"""The single writer: group commit (many operations, one transaction) and per-operation savepoints."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from humeval.errors import HumevalError, StoreError
from humeval.store.engine import make_engines
from humeval.store.sql import sql_of
from humeval.store.writer import Writer


@pytest.fixture
def engines(tmp_path: Path):  # type: ignore[no-untyped-def]
    writer, reader = make_engines(f"sqlite:///{tmp_path / 'w.db'}")
    with writer.connect() as conn, conn.begin():
        conn.execute(text("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)"))
    yield writer, reader
    writer.dispose()
    reader.dispose()


def test_concurrent_writes_share_one_commit(engines) -> None:  # type: ignore[no-untyped-def]
    writer_engine, reader = engines
    w = Writer(writer_engine)
    started, release = threading.Event(), threading.Event()

    def blocker(conn):  # type: ignore[no-untyped-def]
        started.set()
        release.wait(10)
        sql_of(conn).run("INSERT INTO t (k, v) VALUES ('first', 0)")
        return "first"

    first = w.submit(blocker)
    assert started.wait(10)
    # while the writer is busy, 30 writes queue up: they must go into one (or very few) transactions
    futures = [w.submit(lambda conn, i=i: sql_of(conn).run("INSERT INTO t (k, v) VALUES (:k, :v)", {"k": f"k{i}", "v": i}))
               for i in range(30)]
    batches_before = w.stats["batches"]
    release.set()
    assert first.result(10) == "first"
    assert [f.result(10) for f in futures] == [1] * 30
    w.close()
    assert w.stats["operations"] == 31
    assert w.stats["batches"] - batches_before <= 2  # the blocked batch, then the 30 together
    with reader.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 31


def test_a_refused_operation_rolls_back_alone(engines) -> None:  # type: ignore[no-untyped-def]
    writer_engine, reader = engines
    w = Writer(writer_engine)
    started, release = threading.Event(), threading.Event()

    def blocker(conn):  # type: ignore[no-untyped-def]
        started.set()
        release.wait(10)

    def refused(conn):  # type: ignore[no-untyped-def]
        sql_of(conn).run("INSERT INTO t (k, v) VALUES ('refused', 1)")
        raise HumevalError("no")

    def duplicate(conn):  # type: ignore[no-untyped-def]
        sql_of(conn).run("INSERT INTO t (k, v) VALUES ('dup', 1)")
        sql_of(conn).run("INSERT INTO t (k, v) VALUES ('dup', 2)")  # IntegrityError each time: given up

    w.submit(blocker)
    assert started.wait(10)
    ok1 = w.submit(lambda conn: sql_of(conn).run("INSERT INTO t (k, v) VALUES ('a', 1)"))
    bad = w.submit(refused)
    dup = w.submit(duplicate)
    ok2 = w.submit(lambda conn: sql_of(conn).run("INSERT INTO t (k, v) VALUES ('b', 2)"))
    release.set()
    assert ok1.result(10) == 1 and ok2.result(10) == 1
    with pytest.raises(HumevalError):
        bad.result(10)
    with pytest.raises(StoreError):
        dup.result(10)
    w.close()
    with reader.connect() as conn:
        assert sorted(conn.execute(text("SELECT k FROM t")).scalars()) == ["a", "b"]


@pytest.mark.parametrize(("mode", "expected"), [("full", 2), ("normal", 1)])
def test_sqlite_sync_mode(tmp_path: Path, mode: str, expected: int) -> None:
    writer, reader = make_engines(f"sqlite:///{tmp_path / 's.db'}", sqlite_sync=mode)
    with writer.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == expected
    writer.dispose()
    reader.dispose()
    with pytest.raises(StoreError):
        make_engines(f"sqlite:///{tmp_path / 's.db'}", sqlite_sync="off")
