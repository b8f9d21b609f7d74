"""Two tabs submit the same task at the same instant: one row is stored, on SQLite and on PostgreSQL.

Each tab posts the task form (its own idempotency key, as two open pages have) to a different
app over the same store, as two server processes would: the "still my task" check and the write
must be one transaction (a row lock on PostgreSQL, SQLite's write lock) for the second to find
the task answered. 30 races per store.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from humeval.server.app import create_app
from humeval.store import schema as s
from humeval.store.store import Store
from tests.integration.server.inprocess import InProcess
from tests.integration.server.studies import pairwise_study

pytestmark = pytest.mark.timeout(180)
RACES = 30


def test_two_tabs_store_one_row(tmp_path: Path, db_url: str | None) -> None:
    study = pairwise_study(tmp_path / "study", items=RACES, per_item=1, per_participant=1, stopping=False)
    first = InProcess(study, db_url)
    second_store = Store.open(study, db_url)  # a second server process: its own writer connection
    second = create_app(first.config, second_store)

    async def race(i: int) -> tuple[int, int]:
        jar = httpx.Cookies()
        transports = [httpx.ASGITransport(app=first.app, client=("127.0.0.1", 1)),
                      httpx.ASGITransport(app=second, client=("127.0.0.1", 2))]
        async with httpx.AsyncClient(transport=transports[0], base_url="http://testserver", cookies=jar) as a, \
                httpx.AsyncClient(transport=transports[1], base_url="http://testserver", cookies=jar) as b:
            assert (await a.get(f"/?participant_id=R{i:03d}")).status_code == 303
            b.cookies = a.cookies
            page = (await a.get("/task")).text
            aid = re.search(r'name="assignment_id" value="([^"]+)"', page).group(1)
            forms = [{"assignment_id": aid, "idempotency_key": f"form-{aid}-{tab}", "quality": "A"} for tab in "ab"]
            ra, rb = await asyncio.gather(a.post("/task", data=forms[0]), b.post("/task", data=forms[1]))
            return ra.status_code, rb.status_code

    async def main() -> list[tuple[int, int]]:
        return [await race(i) for i in range(RACES)]

    try:
        statuses = asyncio.run(main())
        j = s.judgements.c
        per_assignment = first.store.read(lambda c: c.execute(
            select(j.assignment_id, func.count()).group_by(j.assignment_id)).all())
        print(f"races: {RACES}; assignments with one row: {sum(n == 1 for _, n in per_assignment)}; "
              f"with two or more: {sum(n > 1 for _, n in per_assignment)}")
        assert all(st == (303, 303) for st in statuses), statuses  # both tabs go on to the next page
        assert len(per_assignment) == RACES and all(n == 1 for _, n in per_assignment), per_assignment
    finally:
        second_store.close()
        first.close()
