"""New participants are budgeted per network first: a flood from one network leaves a real participant a task.

In-process (httpx.ASGITransport with chosen peer addresses), on SQLite and PostgreSQL. A study of 120 one-task
lists: the entry budget of a first-lease window (300 s) is a quarter of the places, B = 30; one client network
(an IPv4 address, an IPv6 /64) may take a quarter of B (8) and one wider network (/24, /48) half of it (15).
250 scripted entries from one address, from one /64 and from 250 addresses of one /24 each run while a real
participant from another network enters: the flood is held to its network's share, the rest refused with 429
``too_many_new_participants`` (nothing stored), and the real participant gets a task. The store keeps the networks
as keys under its secret, never the addresses.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from humeval.store import schema as s
from humeval.store.participants import network_key
from humeval.study import StudyFolder
from tests.integration.server.inprocess import InProcess, assert_error
from tests.integration.server.studies import pairwise_study

pytestmark = pytest.mark.timeout(300)
LISTS = 120
BUDGET = LISTS // 4  # the default entry budget of a window: a quarter of the places
REAL = "198.51.100.1"
FLOODS: dict[str, tuple[Callable[[int], str], int]] = {
    "one address": (lambda k: "203.0.113.9", math.ceil(BUDGET / 4)),
    "one /64": (lambda k: f"2001:db8:7:9:{k:x}::1", math.ceil(BUDGET / 4)),
    "250 addresses of one /24": (lambda k: f"203.0.113.{k + 1}", math.ceil(BUDGET / 2)),
}


def _study(tmp_path: Path) -> StudyFolder:
    return pairwise_study(tmp_path / "study", items=LISTS, strategy="list", per_item=1, per_participant=1,
                          stopping=False)


async def _bot(app_client: Callable[[str], httpx.AsyncClient], peer: str, pid: str) -> httpx.Response:
    async with app_client(peer) as c:
        r = await c.post("/api/v1/enter", json={"participant_id": pid})
        if r.status_code == 200:
            n = await c.get("/api/v1/next", headers={"authorization": f"Bearer {r.json()['token']}"})
            assert n.status_code == 200, n.text
        return r


@pytest.mark.parametrize("flood", list(FLOODS))
def test_a_flood_from_one_network_leaves_a_real_participant_a_task(tmp_path: Path, db_url: str | None,
                                                                   flood: str) -> None:
    srv = InProcess(_study(tmp_path), db_url)
    peer_of, share = FLOODS[flood]
    guard = srv.app.state.guard
    assert (guard.limits.budget, guard.limits.per_network, guard.limits.per_wide) == (BUDGET, 8, 15)

    async def run() -> tuple[list[httpx.Response], httpx.Response]:
        answered = 0
        midway = asyncio.Event()

        async def bot(k: int) -> httpx.Response:
            nonlocal answered
            r = await _bot(srv.client, peer_of(k), f"bot{k:03d}")
            answered += 1
            if answered == 50:
                midway.set()
            return r

        async def real() -> httpx.Response:
            await asyncio.wait_for(midway.wait(), timeout=120)  # the flood is running (50 of its 250 answered)
            async with srv.client(REAL) as c:
                entered = await c.post("/api/v1/enter", json={"participant_id": "real-1"})
                assert entered.status_code == 200, entered.text
                return await c.get("/api/v1/next", headers={"authorization": f"Bearer {entered.json()['token']}"})

        *bots, task = await asyncio.gather(*(bot(k) for k in range(250)), real())
        return bots, task

    try:
        bots, task = asyncio.run(run())
        assert task.status_code == 200 and task.json()["assignment_id"], task.text  # the real participant: a task
        codes = [r.status_code for r in bots]
        assert codes.count(200) == share and codes.count(429) == 250 - share, sorted(set(codes))
        refused = next(r for r in bots if r.status_code == 429)
        assert_error(refused, 429, "too_many_new_participants")
        assert 1 <= int(refused.headers["retry-after"]) <= 300
        assert srv.count(s.participants) == share + 1  # the refused stored nothing
        # the next real participant, from a third network, still gets in
        assert srv.run(lambda c: _bot(srv.client, "192.0.2.77", "real-2"), peer="192.0.2.77").status_code == 200
    finally:
        srv.close()


def test_networks_are_stored_as_keys_under_the_stores_secret(tmp_path: Path) -> None:
    srv = InProcess(_study(tmp_path))
    try:
        for peer, pid in (("203.0.113.9", "a"), ("203.0.113.10", "b"), ("2001:db8:7:9::1", "c"), ("127.0.0.1", "local")):
            assert srv.run(lambda c, pid=pid: c.post("/api/v1/enter", json={"participant_id": pid}), peer=peer).status_code == 200
        pc = s.participants.c
        got = srv.store.read(lambda c: c.execute(select(pc.participant_id, pc.network, pc.wide_network)).all())
        rows = {pid: (net, wide) for pid, net, wide in got}
        secret = srv.store.context.secret
        assert rows["a"] == (network_key(secret, "203.0.113.9/32"), network_key(secret, "203.0.113.0/24"))
        assert rows["b"][0] != rows["a"][0] and rows["b"][1] == rows["a"][1]  # another address of the same /24
        assert rows["c"] == (network_key(secret, "2001:db8:7:9::/64"), network_key(secret, "2001:db8:7::/48"))
        assert rows["local"] == (None, None)  # the server's own machine is counted by no network
        assert network_key(b"another study's secret", "203.0.113.9/32") != rows["a"][0]
        srv.close()
        stored = Path(srv.study.db_file).read_bytes() + b"".join(
            p.read_bytes() for p in Path(srv.study.db_file).parent.glob(Path(srv.study.db_file).name + "-*"))
        assert b"203.0.113" not in stored and b"2001:db8" not in stored  # no address, in any page of the store
    finally:
        srv.close()


def test_a_returning_participant_is_not_counted_by_their_network(tmp_path: Path) -> None:
    srv = InProcess(_study(tmp_path), new_per_address=2)
    try:
        async def body(c: httpx.AsyncClient) -> list[int]:
            codes = [(await c.post("/api/v1/enter", json={"participant_id": pid})).status_code for pid in ("p1", "p2", "p3")]
            return codes + [(await c.post("/api/v1/enter", json={"participant_id": "p1"})).status_code]

        assert srv.run(body, peer="203.0.113.9") == [200, 200, 429, 200]
    finally:
        srv.close()
