"""The store on its own: validation, leases, caps across two writers, idempotency, tokens."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import inspect, select, text

from humeval.server.tokens import make_invite, make_token, read_invite, read_token
from humeval.store import Progress, Refusal, Store
from humeval.store import schema as s
from humeval.store.assign import reap
from humeval.store.migrations import MIGRATIONS, current_version, migrate
from tests.integration.server.studies import pairwise_study


@pytest.fixture
def store(tmp_path: Path) -> Store:
    study = pairwise_study(tmp_path / "s", items=6, strategy="one", per_participant=50, stopping=False, lease=10)
    st = Store.open(study)
    st.prepare()
    yield st
    st.close()


def test_prepare_is_idempotent_and_versioned(store: Store) -> None:
    assert store.prepare() is False
    with store.read_engine.connect() as conn:
        assert current_version(conn) == len(MIGRATIONS)
        assert conn.execute(select(s.tasks.c.cap)).scalars().all() == [1] * 6


def test_a_store_of_version_6_gets_the_index_of_leases_out_in_place_of_the_status_index(store: Store) -> None:
    with store.read_engine.begin() as conn:  # back to version 6: every assignment indexed by status
        conn.execute(text("DROP INDEX ix_assignments_leased"))
        conn.execute(text("CREATE INDEX ix_assignments_status ON assignments (status, expires_at)"))
        conn.execute(s.schema_version.delete().where(s.schema_version.c.version >= 7))
        assert current_version(conn) == 6
        assert migrate(conn) == len(MIGRATIONS)
        indexes = {i["name"]: i for i in inspect(conn).get_indexes("assignments")}
        assert "ix_assignments_status" not in indexes
        assert indexes["ix_assignments_leased"]["column_names"] == ["expires_at"]
        plan = " ".join(str(r) for r in conn.execute(text(
            "EXPLAIN QUERY PLAN SELECT assignment_id FROM assignments WHERE status = 'leased' AND expires_at < 1")))
        assert "ix_assignments_leased" in plan  # the reaper's query


def test_a_store_of_version_7_gets_its_watched_lists_marked(tmp_path: Path) -> None:
    store = Store.open(pairwise_study(tmp_path / "w", items=6))
    store.prepare()
    with store.read_engine.begin() as conn:  # back to version 7: lists without the ``watched`` column
        marked = dict(conn.execute(select(s.lists.c.list_id, s.lists.c.watched)).all())
        for name in ("ix_lists_free", "ix_lists_free_watched", "ix_lists_free_unwatched"):  # of version 9, on ``watched``
            conn.execute(text(f"DROP INDEX {name}"))
        conn.execute(text("ALTER TABLE lists DROP COLUMN watched"))
        conn.execute(s.schema_version.delete().where(s.schema_version.c.version >= 8))
        assert migrate(conn) == len(MIGRATIONS)
        assert dict(conn.execute(select(s.lists.c.list_id, s.lists.c.watched)).all()) == marked
    assert any(marked.values())
    store.close()


def test_a_store_of_version_8_gets_the_claim_indexes_in_place_of_the_old_ones(tmp_path: Path) -> None:
    store = Store.open(pairwise_study(tmp_path / "c", items=6))
    store.prepare()
    new = {"ix_lists_held", "ix_lists_free", "ix_lists_free_watched", "ix_lists_free_unwatched", "ix_lists_expiring"}
    with store.read_engine.begin() as conn:  # back to version 8: the lists' indexes of migration 5
        for name in new:
            conn.execute(text(f"DROP INDEX {name}"))
        conn.execute(text("CREATE INDEX ix_lists_holder ON lists (participant_id)"))
        conn.execute(text("CREATE INDEX ix_lists_unheld ON lists (list_id) WHERE participant_id IS NULL"))
        conn.execute(text("CREATE INDEX ix_lists_expiry ON lists (completed, expires_at)"))
        conn.execute(s.schema_version.delete().where(s.schema_version.c.version >= 9))
        assert current_version(conn) == 8
        assert migrate(conn) == len(MIGRATIONS)
        assert {i["name"] for i in inspect(conn).get_indexes("lists")} == new
        plan = " ".join(str(r) for r in conn.execute(text(
            "EXPLAIN QUERY PLAN SELECT list_id FROM lists WHERE participant_id IS NULL AND completed = 0 AND watched > 0 "
            "ORDER BY list_id LIMIT 1")))
        assert "ix_lists_free_watched" in plan and "TEMP B-TREE" not in plan  # a claim of a session
    store.close()


def test_expired_leases_are_reclaimed(store: Store) -> None:
    async def flow() -> None:
        await store.enter("P1", "local", {})
        await store.enter("P2", "local", {})
        a = await store.next_assignment("P1")
        assert not isinstance(a, Progress)
        taken = {a.task.task_id}
        for _ in range(5):
            b = await store.next_assignment("P2")
            assert not isinstance(b, Progress)
            taken.add(b.task.task_id)
            await store.submit("P2", b.assignment_id, f"key-{b.assignment_id}", {"quality": "A"})
        assert isinstance(await store.next_assignment("P2"), Progress)  # all 6 tasks taken or done
        store.write(lambda conn: reap(conn, time.time() + 11))  # P1's lease ran out
        c = await store.next_assignment("P2")
        assert not isinstance(c, Progress) and c.task.task_id == a.task.task_id
        late = store.submit("P1", a.assignment_id, "key-late-0001", {"quality": "B"})
        with pytest.raises(Refusal) as info:
            await late
        assert info.value.code == "lease_expired"

    asyncio.run(flow())
    assert store.event_count("lease_expired") == 1


def test_caps_hold_with_two_writers_on_one_file(store: Store) -> None:
    other = Store.open(store.study)  # a second "process": its own writer and connection
    try:
        async def grab(st: Store, pid: str) -> list[str]:
            await st.enter(pid, "local", {})
            got = []
            while not isinstance(a := await st.next_assignment(pid), Progress):
                got.append(a.task.task_id)
                await st.submit(pid, a.assignment_id, f"key-{pid}-{len(got):04d}", {"quality": "A"})
            return got

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda i: asyncio.run(grab(store if i % 2 else other, f"W{i}")), range(8)))
        done = [t for r in results for t in r]
        assert sorted(done) == sorted(set(done)) and len(done) == 6
    finally:
        other.close()


def test_tokens_are_signed() -> None:
    secret = b"k" * 32
    token = make_token(secret, "P1", "abc")
    assert read_token(secret, token).participant_id == "P1"
    assert read_token(b"x" * 32, token) is None
    assert read_token(secret, token[:-2] + "AA") is None
    assert read_token(secret, "v1.UDE.abc") is None
    assert read_invite(secret, make_invite(secret, "P9")) == "P9"
    assert read_invite(secret, make_invite(b"y" * 32, "P9")) is None


def test_an_assignment_id_names_its_task(store: Store) -> None:
    """The id handed out carries the task's number (hidden under the store's secret), so a submit can check its
    values before reading the store; an id without one (or a forged one) names no task, and the store's row stays
    what counts. An id of the earlier format (``<token>.<seq>``) is still read."""
    ctx = store.context
    for task in ctx.tasks.values():
        aid = ctx.assignment_id(task, "ab" * 12)
        assert len(aid) == 32 and aid.startswith("ab" * 12) and ctx.task_of(aid) is task
        assert ctx.task_of(f"{'ab' * 12}.{task.seq}") is task  # leased before an upgrade
    assert all(ctx.tasks.by_seq(t.seq) is t for t in ctx.tasks.values())
    # the same token under another secret hides another number: no task, or (rarely) another one
    other = replace(ctx, secret=b"another secret")
    assert other.assignment_id(task, "ab" * 12) != ctx.assignment_id(task, "ab" * 12)
    for bad in ("ab" * 12, f"{'ab' * 12}.", f"{'ab' * 12}.-1", f"{'ab' * 12}.{ctx.tasks.seqs}", "x.²", "x.1e3",
                "ab" * 16 + "0", "AB" * 16, "zz" * 16, ""):
        assert ctx.task_of(bad) is None, bad


def test_a_store_of_version_9_gets_the_hook_deliveries_and_the_entry_index(tmp_path: Path) -> None:
    store = Store.open(pairwise_study(tmp_path / "d", items=6))
    store.prepare()
    with store.read_engine.begin() as conn:  # back to version 9
        conn.execute(text("DROP TABLE hook_deliveries"))
        conn.execute(text("DROP INDEX ix_participants_created_at"))
        conn.execute(s.schema_version.delete().where(s.schema_version.c.version >= 10))
        assert migrate(conn) == len(MIGRATIONS) >= 10
        assert inspect(conn).has_table("hook_deliveries")
        assert "ix_participants_created_at" in {i["name"] for i in inspect(conn).get_indexes("participants")}
    assert store.first_delivery("k1", keep=600) and not store.first_delivery("k1", keep=600)  # a replay
    store.forget_delivery("k1")
    assert store.first_delivery("k1", keep=600)  # handled again after a failure
    store.close()
