"""The waitlist is strictly first come, first served (:mod:`humeval.store.waitlist`), on SQLite and PostgreSQL.

In-process (httpx.ASGITransport), the ``list`` strategy, two sessions admitted at the start (W = 2), a waitlist of
600 s (a place is held 45 s for a waiter who stops asking). Hand-made burst: two participants take the places, four
arrive and wait (W0-W3, in that order), both sessions end so places open, and new arrivals come at that moment: the
places go to the waiters in their order and never to a new arrival while waiters are still asking. A waiter who
leaves (stops asking for longer than the hold) is passed over; the queue survives a restart of the store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from humeval.server.app import create_app
from humeval.server.config import ServerConfig
from humeval.server.tokens import make_ticket
from humeval.store import store as store_module
from humeval.store.store import Store
from humeval.store.waitlist import hold_seconds
from tests.integration.server.inprocess import drive_clock
from tests.integration.server.test_live_stopping import ADMIN, Client, make_study
from tests.integration.server.test_waitlist import work

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(autouse=True)
def _fresh_places(monkeypatch: pytest.MonkeyPatch) -> None:
    from humeval.server import api

    monkeypatch.setattr(api, "PLACES_FRESH", 0.0)


class DbClient(Client):
    def __init__(self, study: object, db: str | None) -> None:  # the participant API on the store ``db``
        self.store = Store.open(study, db)  # type: ignore[arg-type]
        self.store.prepare()
        app = create_app(ServerConfig(study_dir=str(self.store.study.root), admin_token=ADMIN, db=db), self.store)
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")
        self.keys = 0


async def _place(c: Client, pid: str) -> dict[str, object]:
    r = await c.http.get("/api/v1/places", params={"ticket": make_ticket(c.store.context.secret, pid)})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_hold_seconds() -> None:
    assert hold_seconds(600) == 45.0 and hold_seconds(40) == 10.0  # three polls, at least 10 s


def test_places_go_to_the_waiters_in_order_during_a_burst(tmp_path: Path, db_url: str | None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    clock = drive_clock(monkeypatch, store_module)
    study = make_study(tmp_path / "study", per_participant=10, checks=0, items=120)

    async def go() -> None:
        c = DbClient(study, db_url)
        try:
            first = [await c.enter(f"P{i}") for i in range(2)]
            assert [await c.next(h) is not None for h in first] == [True, True]
            waiters = {f"W{i}": await c.enter(f"W{i}") for i in range(4)}
            seen: list[httpx.Response] = []
            for h in waiters.values():
                clock.now += 1
                r = await c.http.get("/api/v1/next", headers=h)
                assert r.status_code == 204 and r.headers["Humeval-Reason"] == "wait"
                assert r.headers["Humeval-Ticket"] == make_ticket(c.store.context.secret, f"W{len(seen)}")
                seen.append(r)
            assert [(await _place(c, w))["position"] for w in waiters] == [1, 2, 3, 4]
            for h, prefer in zip(first, ("candidate", "baseline"), strict=True):  # both sessions end: places open
                await work(c, h, prefer)
            opened = c.store.recruitment().wanted
            assert 1 <= opened < len(waiters)
            # the burst: new arrivals come as the places open, and ask before the waiters do
            for k in range(3):
                assert await c.next(await c.enter(f"N{k}")) is None
            assert [(await _place(c, w))["yours"] for w in waiters] == [i < opened for i in range(4)]
            # the waiters behind the open places ask first: still nothing for them
            for w in list(waiters)[opened:]:
                assert await c.next(waiters[w]) is None
            got = [await c.next(waiters[w]) is not None for w in list(waiters)[:opened]]
            assert got == [True] * opened  # the places went to the earliest waiters
            rest = list(waiters)[opened:]
            assert [(await _place(c, w))["position"] for w in rest] == list(range(1, len(rest) + 1))
            # N0..N2 joined after W3 and stand behind it
            assert (await _place(c, "N0"))["position"] == len(rest) + 1
        finally:
            await c.close()

    asyncio.run(go())


def test_a_waiter_who_leaves_is_passed_over_and_the_queue_survives_a_restart(
        tmp_path: Path, db_url: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = drive_clock(monkeypatch, store_module)
    study = make_study(tmp_path / "study", per_participant=10, checks=0, items=120)

    async def go() -> None:
        c = DbClient(study, db_url)
        try:
            for i in range(2):
                assert await c.next(await c.enter(f"P{i}")) is not None
            for w in ("A", "B", "C"):
                clock.now += 1
                assert await c.next(await c.enter(w)) is None
            assert [(await _place(c, w))["position"] for w in "ABC"] == [1, 2, 3]
            clock.now += 30
            await _place(c, "B"), await _place(c, "C")  # A stopped asking
            clock.now += 20  # A last asked 50 s ago (> 45 s hold), B and C 20 s ago
            assert [(await _place(c, w))["position"] for w in "BC"] == [1, 2]
        finally:
            await c.close()
        c = DbClient(study, db_url)  # a restart: the queue is in the store
        try:
            assert [(await _place(c, w))["position"] for w in "BC"] == [1, 2]
            assert (await _place(c, "A"))["position"] == 3  # back after leaving: at the end
            assert (await c.http.get("/api/v1/places", params={"ticket": "w1.x.y"})).status_code == 422
            assert (await c.http.get("/api/v1/places", params={"ticket": "x" * 5000})).status_code == 422
        finally:
            await c.close()

    asyncio.run(go())
