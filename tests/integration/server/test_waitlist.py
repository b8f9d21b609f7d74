"""The waitlist: a participant who arrives while the stopping rule admits no session waits for a place.

In-process (httpx.ASGITransport) on SQLite, the ``list`` strategy, two sessions admitted at the start (W = 2):
``GET /api/v1/places`` says no place is open while both run, and one as soon as both are settled; the participant
who waited then gets a task from ``GET /api/v1/next``; after the decision no place can open (``finished``). The
pages show a newcomer the waitlist page (it polls, then opens their entry link again) when
``stopping.waitlist_seconds`` is above 0, and the page that says no place is open when it is 0. A quitter's place
opens by the heartbeat's reap, with no request for a task.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from humeval.server.openapi import openapi_spec
from humeval.server.recruitment import poll_seconds
from tests.integration.server.inprocess import drive_clock
from tests.integration.server.test_live_stopping import Client, decision, make_study

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _fresh_places(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``GET /api/v1/places`` reads the store (a process otherwise answers from a reading 0.25 s old)."""
    from humeval.server import api

    monkeypatch.setattr(api, "PLACES_FRESH", 0.0)


def _waitlist(study_root: Path, seconds: float) -> None:
    path = study_root / "humeval.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("min_in_flight: 1}", f"min_in_flight: 1, waitlist_seconds: {seconds:g}}}"),
                    encoding="utf-8")


async def work(c: Client, h: dict[str, str], prefer: str) -> None:
    """Answer every task of the participant's list for ``prefer``."""
    while (a := await c.next(h)) is not None:
        r = await c.submit(h, a["assignment_id"], c.answer(a["assignment_id"], prefer=prefer, spam=False))
        assert r.status_code == 201, r.text


def test_poll_interval() -> None:
    assert poll_seconds(600) == 15.0 and poll_seconds(4000) == 15.0  # at most 15 s
    assert poll_seconds(40) == 1.0 and poll_seconds(2) == 0.25  # waitlist / 40, at least 0.25 s


def test_a_waiting_participant_gets_the_place_that_opens(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", per_participant=10, checks=0, items=120)

    async def go() -> None:
        c = Client(study)
        try:
            heads = [await c.enter(f"P{i}") for i in range(3)]
            assert [await c.next(h) is not None for h in heads] == [True, True, False]  # W = 2: the third waits
            places = (await c.http.get("/api/v1/places")).json()  # no token needed
            assert places == {"open": 0, "finished": False, "waitlist_seconds": 600.0, "poll_seconds": 15.0}
            for h, prefer in zip(heads[:2], ("candidate", "baseline"), strict=True):  # both end: 10 each way
                await work(c, h, prefer)
            assert decision(c.store)["outcome"] == "continue" and decision(c.store)["n"] == 20
            places = (await c.http.get("/api/v1/places")).json()  # nothing pending: a place is open
            assert places["open"] == c.store.recruitment().wanted >= 1 and not places["finished"]
            assert await c.next(heads[2]) is not None  # the one who waited takes it
            await work(c, heads[2], "candidate")
            k = 0
            while decision(c.store)["outcome"] == "continue":  # newcomers while places open, until the decision
                assert (await c.http.get("/api/v1/places")).json()["open"] >= 1
                k += 1
                await work(c, await c.enter(f"N{k}"), "candidate")
            assert (await c.http.get("/api/v1/places")).json() | {"poll_seconds": 0} == {
                "open": 0, "finished": True, "waitlist_seconds": 600.0, "poll_seconds": 0}
        finally:
            await c.close()

    asyncio.run(go())


@pytest.mark.parametrize("seconds", [600, 0])
def test_the_entry_page_of_a_newcomer_with_no_place(tmp_path: Path, seconds: float) -> None:
    root = tmp_path / "study"
    study = make_study(root, per_participant=10, checks=0, items=120)
    _waitlist(root, seconds)

    async def go() -> None:
        c = Client(study.__class__.open(root))
        try:
            for i in range(2):
                assert await c.next(await c.enter(f"P{i}")) is not None
            page = await c.http.get("/?participant_id=P9", follow_redirects=False)
            assert page.status_code == 200 and 'data-reason="wait"' in page.text
            if seconds:
                assert 'id="waitlist" data-seconds="600.0" data-poll="15.0" data-retry="/?participant_id=P9"' in page.text
                assert "Please wait for a place" in page.text and "within 10 minutes at most" in page.text
                assert '<div id="waitlist-ended" hidden>' in page.text  # shown by the script when the wait ends
            else:
                assert 'id="waitlist"' not in page.text and "No place is open right now" in page.text
            assert c.store.participants() and "P9" not in {r["participant_id"] for r in c.store.participants()}
        finally:
            await c.close()

    asyncio.run(go())


def test_the_places_route_is_published(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", per_participant=10, checks=0, items=40)
    spec = openapi_spec(study.protocol)
    route = spec["paths"]["/api/v1/places"]["get"]
    assert "security" not in route and "Places" in spec["components"]["schemas"]
    assert set(spec["components"]["schemas"]["Places"]["required"]) == {"open", "finished", "waitlist_seconds",
                                                                       "poll_seconds"}


def test_a_quitters_place_opens_with_no_request_for_a_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the waitlist only reads the places: the heartbeat's reap (Store.areap) settles the participants who stopped
    from humeval.store import store as store_module

    clock = drive_clock(monkeypatch, store_module)
    study = make_study(tmp_path / "study", per_participant=10, checks=0, items=120)  # lease 600 s

    async def go() -> None:
        c = Client(study)
        try:
            heads = [await c.enter(f"Q{i}") for i in range(3)]
            for h, prefer in zip(heads[:2], ("candidate", "baseline"), strict=True):  # one answer each, then gone
                a = await c.next(h)
                assert (await c.submit(h, a["assignment_id"], c.answer(a["assignment_id"], prefer=prefer,
                                                                      spam=False))).status_code == 201
            assert await c.next(heads[2]) is None  # W = 2: waits
            clock.now += 601  # a lease of inactivity
            assert (await c.http.get("/api/v1/places")).json()["open"] == 0  # a read settles no one
            await c.store.areap()
            assert decision(c.store)["n"] == 2  # both settled as abandoned, their answers fed
            assert (await c.http.get("/api/v1/places")).json()["open"] >= 1
            assert await c.next(heads[2]) is not None
        finally:
            await c.close()

    asyncio.run(go())
