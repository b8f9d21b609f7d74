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
