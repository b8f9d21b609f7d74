"""A participant whose list holds only tasks the stopping rule closed takes the next free list."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlalchemy import select, update

from humeval.store import Progress, Store
from humeval.store import schema as s
from tests.integration.server.studies import template_study


def test_a_list_of_closed_tasks_is_passed_over(tmp_path: Path) -> None:
    study = template_study(tmp_path / "r", "rating", items=4)
    store = Store.open(study)
    try:
        store.prepare()
        with store.write_engine.connect() as conn, conn.begin():
            first = conn.execute(select(s.list_tasks.c.task_id).where(s.list_tasks.c.list_id == "L0001")).scalars().all()
            conn.execute(update(s.tasks).where(s.tasks.c.task_id.in_(first)).values(closed=1, open=0))

        async def flow() -> tuple[object, object]:
            await store.enter("P1", "local", {})
            got = await store.next_assignment("P1")
            await store.enter("P2", "local", {})
            return got, await store.next_assignment("P2")

        got, second = asyncio.run(flow())
        assert not isinstance(got, Progress), "a new participant was sent away while lists with open tasks remain"
        with store.read_engine.connect() as conn:
            lists = dict(conn.execute(select(s.lists.c.list_id, s.lists.c.participant_id)).all())
            done = dict(conn.execute(select(s.lists.c.list_id, s.lists.c.completed)).all())
        assert lists["L0002"] == "P1" and done["L0001"] == 1  # the closed list is done; P1 took the next one
        assert not isinstance(second, Progress) and lists["L0003"] == "P2"
    finally:
        store.close()
