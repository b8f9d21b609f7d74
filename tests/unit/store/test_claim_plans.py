"""A claim reads the first free list by an index at any size of study: the plans of the claim statements.

Each claim statement, for every kind of list a claim asks for (any, a watched session, the others), is planned on
a seeded store of 3,000 lists: the new list is the first entry of the partial index of its kind, read in list
order (no sort, no scan of the lists); a left list is a range of the expiry index (sorted: only the lists whose
reservation ran out). On SQLite, with and without statistics (``ANALYZE``); on PostgreSQL (if reachable), with the
values bound and as the generic plan of a prepared statement.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from humeval.store import Store
from humeval.store.assign import _ANY, _CLAIM, _FREE_LIST, _LEFT_LIST, _NEW_LIST
from humeval.store.sql import _for_sqlite, _positional
from humeval.study import StudyFolder
from tests.integration.server.studies import template_study

PG = "postgresql://postgres@127.0.0.1:5432/test"
#: the kinds of list a claim asks for, and the index of the free lists of each kind
GUARDS = {"AND watched >= 0 ": "ix_lists_free", "AND watched > 0 ": "ix_lists_free_watched", "AND watched = 0 ": "ix_lists_free_unwatched"}
PARAMS = {"pid": "P-new", "exp": 2e9, "now": 1.9e9, "free": 1}


#: the first half of the lists made sessions of a watched comparison: a claim of the others that walked the index of
#: every free list would pass them all
_HALF_WATCHED = "UPDATE lists SET watched = 1 WHERE list_id <= 'L1500'"


def statements() -> Iterator[tuple[str, str, bool, str]]:
    """(name, SQL, reads a left list, index of the new list) for each claim statement."""
    for guard, index in GUARDS.items():
        yield f"claim[{guard}]", _CLAIM[guard], True, index
        yield f"select[{guard}]", "SELECT " + _FREE_LIST.format(guard=guard), True, index  # SQLite before 3.35
        yield f"new[{guard}]", _NEW_LIST.format(guard=guard), False, index
        yield f"left[{guard}]", _LEFT_LIST.format(guard=guard), True, ""


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> StudyFolder:
    return template_study(tmp_path_factory.mktemp("plans") / "r", "rating", items=2000)  # 3,000 lists of 12


def _sqlite_plan(raw: object, sql: str) -> list[str]:
    return [row[3] for row in raw.execute("EXPLAIN QUERY PLAN " + _for_sqlite(sql), PARAMS)]  # type: ignore[attr-defined]


def check_sqlite_plans(raw: object) -> None:
    """Each claim statement's plan on the SQLite connection ``raw``."""
    for name, sql, left, index in statements():
        plan = _sqlite_plan(raw, sql)
        text = " | ".join(plan)
        if index:
            assert f"SCAN lists USING INDEX {index}" in plan, f"{name}: {text}"
        if left:
            assert "SEARCH lists USING INDEX ix_lists_expiring (expires_at>? AND expires_at<?)" in plan, f"{name}: {text}"
            # the one sort: the lists whose reservation ran out, read by their expiry
            assert text.count("TEMP B-TREE") == 1, f"{name}: {text}"
        else:
            assert "TEMP B-TREE" not in text, f"{name}: {text}"
        for step in plan:  # the lists are never walked whole: no scan without an index, nor of the key
            assert not re.fullmatch(r"SCAN lists( USING INDEX sqlite_autoindex_lists_1)?", step), f"{name}: {text}"


@pytest.mark.parametrize("analyzed", [False, True], ids=["no-statistics", "analyzed"])
def test_sqlite_claims_read_the_first_free_list_by_an_index(study: StudyFolder, tmp_path: Path, analyzed: bool) -> None:
    store = Store.open(study, str(tmp_path / "plans.db"))
    try:
        store.prepare()
        with store.write_engine.connect() as conn:
            raw = conn.connection.driver_connection
            assert raw.execute("SELECT count(*) FROM lists").fetchone()[0] >= 3000
            raw.execute(_HALF_WATCHED)
            if analyzed:
                raw.execute("ANALYZE")
            check_sqlite_plans(raw)
    finally:
        store.close()


def _pg_reachable() -> bool:
    try:
        import psycopg

        psycopg.connect(PG, connect_timeout=3).close()
    except Exception:  # noqa: BLE001 (the driver missing or the server down: skipped either way)
        return False
    return True


def _check_pg_plan(name: str, plan: str, left: bool, index: str) -> None:
    assert "Seq Scan on lists" not in plan, f"{name}:\n{plan}"
    if index:
        assert f"Index Scan using {index} on lists" in plan or f"Index Only Scan using {index} on lists" in plan, \
            f"{name}:\n{plan}"
    if left:
        assert re.search(r"(Index Scan using|Bitmap Index Scan on) ix_lists_expiring", plan), f"{name}:\n{plan}"
    else:
        assert "Sort" not in plan, f"{name}:\n{plan}"


def check_pg_plans(conn: object, cases: list[tuple[str, str, bool, str]]) -> None:
    """Each statement's plan on the psycopg connection ``conn``: with the values bound, and as the generic plan of a
    prepared statement."""
    for i, (name, sql, left, index) in enumerate(cases):
        text, names = _positional(sql)  # the store's own numbering of the named parameters
        positional = text.decode()
        values = [PARAMS[n] for n in names]
        bound = "\n".join(r[0] for r in conn.execute("EXPLAIN " + re.sub(r"\$(\d+)", lambda m: f"%(p{m[1]})s", positional),
                                                      {f"p{k + 1}": v for k, v in enumerate(values)}))
        _check_pg_plan(name, bound, left, index)
        # the plan a prepared statement settles on after five runs, when it is no dearer than theirs
        types = ", ".join("float8" if isinstance(v, float) else "int" if isinstance(v, int) else "text" for v in values)
        conn.execute(f"PREPARE q{i} {f'({types}) ' if types else ''}AS {positional}")
        conn.execute("SET plan_cache_mode = force_generic_plan")
        literal = ", ".join(repr(v) if not isinstance(v, str) else f"'{v}'" for v in values)
        generic = "\n".join(r[0] for r in conn.execute(f"EXPLAIN EXECUTE q{i}{f' ({literal})' if literal else ''}"))
        conn.execute("RESET plan_cache_mode")
        _check_pg_plan(f"{name} (generic)", generic, left, index)


@pytest.mark.postgres
def test_postgresql_claims_read_the_first_free_list_by_an_index(study: StudyFolder) -> None:
    if not _pg_reachable():
        pytest.skip(f"PostgreSQL is not reachable at {PG}")
    import psycopg

    schema = f"hv_plans_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    store = Store.open(study, f"{PG}?options=-csearch_path%3D{schema}")
    try:
        store.prepare()
        with psycopg.connect(PG, autocommit=True, options=f"-csearch_path={schema}") as conn:
            conn.execute(_HALF_WATCHED)
            conn.execute("ANALYZE lists")
            check_pg_plans(conn, statements())
    finally:
        store.close()
        with psycopg.connect(PG, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def test_the_claim_reads_a_left_list_first(study: StudyFolder, tmp_path: Path) -> None:
    """The bounded range keeps the rule: a list whose reservation ran out goes before the first list nobody holds."""
    store = Store.open(study, str(tmp_path / "left.db"))
    try:
        store.prepare()
        with store.write_engine.connect() as conn:
            raw = conn.connection.driver_connection
            raw.execute("UPDATE lists SET participant_id = 'gone', expires_at = 5 WHERE list_id = "
                        "(SELECT max(list_id) FROM lists)")
            first, last = raw.execute("SELECT min(list_id), max(list_id) FROM lists").fetchone()
            params = {**PARAMS, "now": time.time()}
            for guard in GUARDS:
                if guard == "AND watched > 0 ":
                    continue  # the rating template has no watched lists
                got = raw.execute(_for_sqlite("SELECT " + _FREE_LIST.format(guard=guard)), params).fetchone()[0]
                assert got == last, guard
            raw.execute("UPDATE lists SET expires_at = :f", {"f": params["now"] + 60})
            assert raw.execute(_for_sqlite("SELECT " + _FREE_LIST.format(guard=_ANY)), params).fetchone()[0] == first
            conn.rollback()
    finally:
        store.close()
