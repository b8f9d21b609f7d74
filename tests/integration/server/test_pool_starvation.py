"""Many new participants from many addresses cannot drain a study's lists (in-process, chosen peer addresses).

A study of 120 lists; the store's clock is driven (:class:`Clock`), so that a first reservation window
(300 s) passes at once. 250 entries from one IPv6 /64, then 250 entries from 250 IPv4 addresses of two
/24 networks, each asking for a task at once (a list claimed) and again whenever its reservation ran
out: the /64 is held to its network's share of the entry budget (a quarter of 30: 8), each /24 to its
wider network's share (half: 15), and every network together to the entry budget of a window (a quarter
of the places: 30); an entry that never answers is given two first leases, then nothing. At no time do
they hold more than half the lists, and a real participant who comes when many networks together spent
the budget of the window is told when to come back (503 with ``Retry-After`` within the window) and,
then, gets a task (tests/integration/server/test_entry_networks.py: while one network floods, a real
participant gets in at once).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from humeval.store import schema as s
from tests.integration.server.inprocess import Clock, InProcess, drive_clock
from tests.integration.server.studies import pairwise_study

LISTS = 120
WINDOW = 300


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    yield drive_clock(monkeypatch)


def _held(srv: InProcess, now: float, prefix: str) -> int:
    """Lists held now (reserved and not run out) by participants whose id starts with ``prefix``."""
    lc = s.lists.c
    return srv.store.read(lambda c: c.execute(select(func.count()).select_from(s.lists).where(
        lc.participant_id.like(f"{prefix}%"), lc.expires_at >= now, lc.completed == 0)).scalar_one())


async def _bot(c: httpx.AsyncClient, pid: str, tokens: dict[str, str]) -> int:
    r = await c.post("/api/v1/enter", json={"participant_id": pid})
    if r.status_code == 200:
        tokens[pid] = r.json()["token"]
        assert (await c.get("/api/v1/next", headers={"authorization": f"Bearer {tokens[pid]}"})).status_code == 200
    return r.status_code


async def _poll(c: httpx.AsyncClient, tokens: dict[str, str]) -> list[int]:
    """Every admitted bot asks for its task again (a new lease when the last one ran out)."""
    return [(await c.get("/api/v1/next", headers={"authorization": f"Bearer {t}"})).status_code for t in tokens.values()]


def test_entries_from_many_addresses_leave_a_real_participant_a_task(tmp_path: Path, clock: Clock) -> None:
    study = pairwise_study(tmp_path / "study", items=LISTS, strategy="list", per_item=1, per_participant=1,
                           stopping=False)
    srv = InProcess(study, first_lease_seconds=WINDOW)
    assert len(srv.store.context.list_sizes) == LISTS and srv.app.state.guard.limits.budget == LISTS // 4

    async def flood(peer_of: Any, prefix: str, tokens: dict[str, str], n: int = 250) -> list[int]:
        codes = []
        for k in range(n):
            async with srv.client(peer_of(k)) as c:
                codes.append(await _bot(c, f"{prefix}{k}", tokens))
        return codes

    async def real(c: httpx.AsyncClient, pid: str = "real-1") -> httpx.Response:
        return await c.post("/api/v1/enter", json={"participant_id": pid})

    async def real_task(c: httpx.AsyncClient, pid: str) -> int:
        r = await real(c, pid)
        assert r.status_code == 200, r.text
        return (await c.get("/api/v1/next", headers={"authorization": f"Bearer {r.json()['token']}"})).status_code

    def four(k: int) -> str:
        return f"198.51.{k // 200}.{k % 200 + 1}"

    try:
        v6: dict[str, str] = {}
        codes = srv.run(lambda _: flood(lambda k: f"2001:db8:7:9:{k:x}::1", "six", v6))
        assert codes.count(200) == 8 and codes.count(429) == 242  # the /64's share, counted as one network
        v4: dict[str, str] = {}
        codes = srv.run(lambda _: flood(four, "four", v4))
        # the first /24: its share (15); the second: what is left of the window's budget (30 - 8 - 15), then 503
        assert (codes[:200].count(200), codes[:200].count(429)) == (15, 185)
        assert (codes[200:].count(200), codes[200:].count(503)) == (7, 43)
        assert _held(srv, clock.now, "six") + _held(srv, clock.now, "four") == 30 <= LISTS // 2
        refused = srv.run(real, peer="203.0.113.9")  # a real participant now is told when to come back
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "entry_rate"
        assert 1 <= int(refused.headers["retry-after"]) <= WINDOW

        clock.now += WINDOW + 1  # the window passes: its budget is free again; the first leases ran out
        assert set(srv.run(lambda c: _poll(c, v6), peer="2001:db8:7:9::1")) == {200}  # a second lease each
        assert srv.run(lambda c: real_task(c, "real-1"), peer="203.0.113.9") == 200  # the real participant: a task
        more: dict[str, str] = {}
        codes = srv.run(lambda _: flood(four, "more", more, 40))
        assert codes.count(200) == 15 and codes.count(429) == 25  # one /24's share of the new window
        assert _held(srv, clock.now, "six") + _held(srv, clock.now, "more") == 23 <= LISTS // 2

        clock.now += WINDOW + 1
        assert set(srv.run(lambda c: _poll(c, v6), peer="2001:db8:7:9::1")) == {204}  # no third first lease
        assert _held(srv, clock.now, "six") == 0  # their lists given back at once
        assert srv.run(lambda c: real_task(c, "real-2"), peer="203.0.113.10") == 200
    finally:
        srv.close()
