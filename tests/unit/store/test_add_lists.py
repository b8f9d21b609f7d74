"""Re-run lists added to a seeded store: caps raised, new attention checks, served to new participants."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select

from humeval.design.lists import add_attention_checks
from humeval.design.tasks import ParticipantList
from humeval.errors import StoreError
from humeval.store import Progress, Store
from humeval.store import schema as s
from tests.integration.server.studies import pairwise_study, template_study


@pytest.fixture
def rated(tmp_path: Path):
    study = template_study(tmp_path / "r", "rating", items=4)
    store = Store.open(study)
    store.prepare()
    yield study, store
    store.close()


def _caps(store: Store) -> dict[str, tuple[int, int]]:
    with store.read_engine.connect() as conn:
        return {r.task_id: (r.cap, r.open) for r in conn.execute(select(s.tasks.c.task_id, s.tasks.c.cap, s.tasks.c.open))}


def test_rerun_lists_raise_caps_add_checks_and_are_served(rated) -> None:
    study, store = rated
    tasks = [t for t in study.read_tasks() if t.kind == "task"]
    before = _caps(store)
    rerun = [ParticipantList("R1-0001", 1, [tasks[0], tasks[1]]), ParticipantList("R1-0002", 1, [tasks[0]])]
    protocol = study.protocol.model_copy(update={"design": study.protocol.design.model_copy(update={"attention_checks": 1})})
    checked = add_attention_checks(rerun, protocol, seed=3, first_index=10**6)
    assert [len(pl.tasks) for pl in checked] == [3, 2]
    assert store.add_lists(checked) == ["R1-0001", "R1-0002"]
    after = _caps(store)
    assert after[tasks[0].task_id][0] == before[tasks[0].task_id][0] + 2
    assert after[tasks[1].task_id][0] == before[tasks[1].task_id][0] + 1
    new_checks = [t.task_id for pl in checked for t in pl.tasks if t.kind == "attention"]
    assert len(new_checks) == 2 and all(after[c] == (1, 1) for c in new_checks)
    assert all(c not in before for c in new_checks)
    assert store.add_lists(checked) == []  # already there: nothing added twice
    assert _caps(store) == after

    async def take_all(pid: str) -> list[str]:
        await store.enter(pid, "local", {})
        seen = []
        while not isinstance(a := await store.next_assignment(pid), Progress):
            seen.append(a.task.task_id)
            values = {c: 1 for c in a.task.criteria}
            await store.submit(pid, a.assignment_id, f"k-{pid}-{len(seen)}", values, 5.0)
        return seen

    async def everyone() -> list[list[str]]:
        done = []
        for i in range(200):
            got = await take_all(f"P{i}")
            if not got:
                break
            done.append(got)
        return done

    served = asyncio.run(everyone())
    rerun_served = [got for got in served if set(got) & set(new_checks)]
    assert sorted(map(sorted, rerun_served)) == sorted(sorted(t.task_id for t in pl.tasks) for pl in checked)
    with store.read_engine.connect() as conn:
        assert conn.execute(select(s.lists.c.completed).where(s.lists.c.list_id.like("R1-%"))).scalars().all() == [1, 1]


def test_add_lists_refuses_an_unseeded_store_and_a_pool_strategy(tmp_path: Path) -> None:
    study = template_study(tmp_path / "u", "rating", items=4)
    store = Store.open(study)
    try:
        with store.write_engine.connect() as conn, conn.begin():
            from humeval.store.migrations import migrate

            migrate(conn)
        with pytest.raises(StoreError, match="not seeded"):
            store.add_lists([ParticipantList("R1-0001", 1, study.read_tasks()[:1])])
    finally:
        store.close()
    pool = pairwise_study(tmp_path / "p", items=4, strategy="one", stopping=False)
    store = Store.open(pool)
    try:
        store.prepare()
        with pytest.raises(StoreError, match="no participant lists"):
            store.add_lists([ParticipantList("R1-0001", 1, pool.read_tasks()[:1])])
    finally:
        store.close()
