"""The admin page of a large study: paginated item and participant tables, totals aggregated in SQL.

The per-criterion, per-system and per-item counts are checked against a count made
independently from the design (every task's cap is the number of lists holding it).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter

import httpx
import pytest

from humeval.server.admin import PAGE
from humeval.server.app import create_app
from humeval.server.config import ServerConfig
from humeval.store.sql import sql_of
from humeval.store.store import Store
from tests.integration.server.studies import template_study

ADMIN = "admin-token-for-admin-pages-0000"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    study = template_study(tmp_path_factory.mktemp("admin") / "study", "rating", items=130)
    store = Store.open(study)
    store.prepare()
    app = create_app(ServerConfig(study_dir=str(study.root), admin_token=ADMIN), store)
    yield study, store, app
    store.close()


def _get(app, *paths: str) -> list[httpx.Response]:
    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            await c.get("/admin", params={"token": ADMIN})  # sets the admin cookie
            return [await c.get(p) for p in paths]

    return asyncio.run(go())


def test_overview_counts_match_the_design(served) -> None:
    study, store, _ = served
    tasks = study.read_tasks()
    caps = Counter(t.task_id for pl in study.read_lists(tasks) for t in pl.tasks)
    want_item, want_system, want_criterion = Counter(), Counter(), Counter()
    for t in tasks:
        want_item[t.item_id] += caps[t.task_id]
        for s in t.systems:
            want_system[s] += caps[t.task_id]
        for c in t.criteria:
            want_criterion[c] += caps[t.task_id]
    full = store.overview()
    assert {k: v["wanted"] for k, v in full["items"].items()} == dict(want_item)
    assert {k: v["wanted"] for k, v in full["systems"].items()} == dict(want_system)
    assert {k: v["wanted"] for k, v in full["criteria"].items()} == dict(want_criterion)
    assert full["item_totals"] == {"items": 130, "complete": 0, "started": 0}
    page = store.overview(items_limit=PAGE, items_offset=PAGE)
    assert list(page["items"]) == sorted(want_item)[PAGE : 2 * PAGE]


def test_admin_page_shows_one_page_of_items(served) -> None:
    _, _, app = served
    first, second, last, bad = _get(app, "/admin", "/admin?items=1", "/admin?items=2", "/admin?items=x")
    assert first.status_code == second.status_code == last.status_code == 200
    pages = -(-130 // PAGE)
    assert f"page 1 of {pages}" in first.text and 'href="?items=1#items"' in first.text
    assert "130 items: 0 complete" in first.text
    rows = lambda r: len(re.findall(r"<tr><td>item-\d+</td>", r.text))  # noqa: E731
    assert rows(first) == rows(second) == PAGE and rows(last) == 130 - 2 * PAGE
    assert 'href="?items=1#items"' in last.text and "next</a>" not in last.text.split('id="items"')[1]
    assert bad.status_code == 400 and "page number" in bad.text


def test_item_totals_agree_with_a_count_of_the_judgements(tmp_path, db_url) -> None:
    """The item totals (counted from the items judged, on both stores) against a hand count: each item's judgements
    wanted from the design, its judgements done from the stored first answers; an item no judgement is wanted for
    (every cap 0) counts as complete, as its row in the page of items says."""
    from tests.integration.server.test_store_concurrency import _study

    study = _study(tmp_path / "study", items=20)  # 60 judgements in 6 lists of 10, each item once in 2 of them
    tasks = study.read_tasks()
    caps = Counter(t.task_id for pl in study.read_lists(tasks) for t in pl.tasks)
    item_of = {t.task_id: t.item_id for t in tasks}
    wanted = Counter()
    for t in tasks:
        wanted[t.item_id] += caps[t.task_id]
    store = Store.open(study, db_url)
    store.prepare()

    async def answer(pid: str, n: int) -> None:
        await store.enter(pid, "local", {})
        view = await store.next_assignment(pid)
        for k in range(n):
            view = (await store.submit(pid, view.assignment_id, f"{pid}-{k}", {"quality": "A"}, then_next=True)).next

    def expected(cap_zero: str | None = None) -> dict[str, int]:
        done = Counter(item_of[j["task_id"]] for j in store.judgements() if j["revision"] == 0)
        want = wanted | ({cap_zero: 0} if cap_zero else {})
        return {"items": len(want), "complete": sum(done[i] >= w for i, w in want.items()),
                "started": sum(done[i] > 0 for i in want)}

    try:
        seen = []
        for pid, n in [("P1", 3), ("P2", 10), ("P3", 10), ("P4", 10), ("P5", 10)]:
            asyncio.run(answer(pid, n))
            seen.append(store.overview()["item_totals"])
            assert seen[-1] == expected()
        assert seen[0]["started"] < seen[0]["items"] and 0 < seen[-1]["complete"] < seen[-1]["started"]
        half = next(i for i, v in sorted(store.overview()["items"].items()) if 0 < v["done"] < v["wanted"])
        store.write(lambda conn: sql_of(conn).run("UPDATE tasks SET cap = 0 WHERE item_id = :i", {"i": half}))
        full = store.overview()
        assert full["items"][half]["wanted"] == 0 and full["items"][half]["done"] > 0
        assert full["item_totals"] == expected(half) and full["item_totals"]["complete"] == seen[-1]["complete"] + 1
    finally:
        store.close()
