"""A participant whose session began ends with their completion code: pauses, quitters and restarts.

In-process (httpx.ASGITransport) on SQLite and PostgreSQL, the ``list`` strategy with a live stopping rule and a
short lease; the store's clock is driven (:class:`Clock`), and while the service "runs" it beats every second
(:meth:`humeval.store.store.Store.keep_alive`, what the server's lifespan does every
:data:`humeval.store.alive.ALIVE_EVERY` seconds). The rules checked (docs/collection.md, "Pauses, quitters and
restarts"):

* a participant inactive for longer than a lease while the service runs is settled as abandoned: the
  preregistered exclusion rules run on what they did and their kept outcomes are fed, exactly as for one who
  finished; the rest of their list goes to the next participant;
* coming back, they are not given another task (their judgements are final), a late answer is refused and not
  stored, and they get their completion code (the API's ``completed: true``, the HTML page's code screen);
* a time when no process of the study ran (a restart) does not count as inactivity: the leases and the
  participants' last activity are moved by it when the service starts again;
* a crowd with quitters and pausers reaches the decision with every returning participant's code, the
  judgements admitted but unused within the bound stated before launch, and the replay equal to the live
  decision.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pandas as pd
import pytest

from humeval.analysis.decisions import replay_decisions
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusions, valid_judgements
from humeval.stopping.admission import unused_bound
from humeval.store import alive as store_alive
from humeval.study import StudyFolder
from tests.integration.server.inprocess import Clock, InProcess, drive_clock, enter
from tests.integration.server.studies import pairwise_study

pytestmark = pytest.mark.timeout(300)
LEASE = 10
CODE = "DONE-42"
WATCHED = ("SELECT count(*) FROM judgements j JOIN watched_tasks w ON w.task_id = j.task_id "
           "WHERE j.revision = 0")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    yield drive_clock(monkeypatch, store_alive)


def running(clock: Clock, srv: InProcess, seconds: float) -> None:
    """``seconds`` pass while the service runs: its heartbeat beats every second."""
    for _ in range(int(seconds)):
        clock.now += 1.0
        srv.store.keep_alive()
    clock.now += seconds - int(seconds)


def study_of(tmp_path: Path, items: int = 60, exclusion: str = "") -> StudyFolder:
    return pairwise_study(tmp_path / "study", items=items, strategy="list", per_item=1, per_participant=10,
                          lease=LEASE, exclusion=exclusion)


class Participant:
    """One participant on the JSON API; answers prefer the candidate."""

    keys = 0

    def __init__(self, c: httpx.AsyncClient, srv: InProcess, pid: str, headers: dict[str, str]) -> None:
        self.c, self.srv, self.pid, self.h = c, srv, pid, headers

    @classmethod
    async def enter(cls, c: httpx.AsyncClient, srv: InProcess, pid: str) -> Participant:
        return cls(c, srv, pid, await enter(c, pid))

    async def next(self) -> dict[str, Any] | None:
        r = await self.c.get("/api/v1/next", headers=self.h)
        assert r.status_code in (200, 204), r.text
        return r.json() if r.status_code == 200 else None

    def choice(self, a: dict[str, Any]) -> str:
        """The candidate's side, as the store shows it to them."""
        display = self.srv.store.read(lambda conn: conn.exec_driver_sql(
            "SELECT display FROM assignments WHERE assignment_id = " + ("%(a)s" if "postgresql" in self.srv.store.url
                                                                       else ":a"), {"a": a["assignment_id"]}).scalar())
        return "A" if json.loads(display)[0] == "candidate" else "B"

    async def answer(self, a: dict[str, Any]) -> httpx.Response:
        Participant.keys += 1
        return await self.c.post("/api/v1/judgements", headers=self.h, json={
            "assignment_id": a["assignment_id"], "idempotency_key": f"key-{self.pid}-{Participant.keys:06d}",
            "values": {"quality": self.choice(a)}})

    async def answered(self, a: dict[str, Any]) -> None:
        r = await self.answer(a)
        assert r.status_code == 201, r.text

    async def work(self, tasks: int) -> dict[str, Any] | None:
        """Answer ``tasks`` tasks; the next one, leased and held."""
        for _ in range(tasks):
            a = await self.next()
            assert a is not None
            await self.answered(a)
        return await self.next()

    async def status(self) -> dict[str, Any]:
        r = await self.c.get("/api/v1/status", headers=self.h)
        assert r.status_code == 200, r.text
        return r.json()


def _code(body: dict[str, Any]) -> str | None:
    return body.get("completion", {}).get("code") if body["progress"]["completed"] else None


def test_a_participant_who_paused_past_the_lease_gets_their_code(tmp_path: Path, clock: Clock,
                                                                   db_url: str | None) -> None:
    srv = InProcess(study_of(tmp_path), db_url)

    async def body(c: httpx.AsyncClient) -> None:
        p = await Participant.enter(c, srv, "P")
        held = await p.work(2)
        assert held is not None
        running(clock, srv, LEASE + 4)  # a 14 s pause past the 10 s lease
        q = await Participant.enter(c, srv, "Q")
        assert await q.next() is not None  # someone else's request: the store reaps and settles the abandoned
        late = await p.answer(held)
        assert late.status_code == 409 and late.json()["error"]["code"] == "lease_expired", late.text
        assert "completion code" in late.json()["error"]["message"]
        assert srv.store.read(lambda conn: conn.exec_driver_sql(WATCHED).scalar()) == 2  # the late answer: not stored
        assert srv.store.stopping()[0]["n"] == 2  # their two outcomes reached the rule when they were settled
        assert await p.next() is None
        status = await p.status()
        assert status["progress"]["completed"] and status["progress"]["done"] == 2
        assert _code(status) == CODE
        # the HTML flow: the task page sends them to the code screen
        c.cookies.set("humeval_token", p.h["authorization"][7:])
        page = await c.get("/task", follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"] == "/done"
        done = await c.get("/done")
        assert done.status_code == 200 and CODE in done.text
        assert 'id="ended-early"' not in done.text  # away, not cut by a decision (there was none)
        c.cookies.clear()

    try:
        srv.run(body)
    finally:
        srv.close()


def test_the_derived_lease_and_a_pause_past_it(tmp_path: Path, clock: Clock) -> None:
    # no assignment.lease_seconds: 2 x the declared 10 lists' tasks x 20 s = 400 s, raised to the least, 600 s
    study = pairwise_study(tmp_path / "study", items=60, strategy="list", per_item=1, per_participant=10, lease=None,
                           seconds_per_task=20)
    srv = InProcess(study)
    assert study.protocol.assignment.lease_seconds is None and srv.store.context.lease_seconds == 600

    async def body(c: httpx.AsyncClient) -> None:
        p = await Participant.enter(c, srv, "P")
        held = await p.work(2)
        running(clock, srv, 590)  # within the lease: they continue
        assert (await p.answer(held)).status_code == 201
        held = await p.next()
        running(clock, srv, 604)  # past it
        q = await Participant.enter(c, srv, "Q")
        assert await q.next() is not None  # the store reaps and settles the abandoned
        late = await p.answer(held)
        assert late.status_code == 409 and late.json()["error"]["code"] == "lease_expired", late.text
        assert _code(await p.status()) == CODE and srv.store.stopping()[0]["n"] == 3

    try:
        srv.run(body)
    finally:
        srv.close()


def test_without_stopping_the_same_pause_gets_the_same_code(tmp_path: Path, clock: Clock) -> None:
    """The promise without a stopping rule, for comparison: the pauser's list goes on to the next participant, the
    late answer is refused, and the pauser gets their code; one whose list nobody took continues it."""
    study = pairwise_study(tmp_path / "study", items=60, strategy="list", per_item=1, per_participant=10,
                           lease=LEASE, stopping=False)
    srv = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        p, r = await Participant.enter(c, srv, "P"), await Participant.enter(c, srv, "R")
        held, kept = await p.work(2), await r.work(2)
        running(clock, srv, LEASE + 4)
        q = await Participant.enter(c, srv, "Q")
        assert await q.next() is not None  # Q continues a list left unfinished: the first one, P's
        late = await p.answer(held)
        assert late.status_code == 409 and late.json()["error"]["code"] == "lease_expired", late.text
        assert await p.next() is None and _code(await p.status()) == CODE
        await r.answered(kept)  # R's list is still theirs: the late answer is stored and they go on
        assert await r.next() is not None

    try:
        srv.run(body)
    finally:
        srv.close()


def test_a_page_participant_who_paused_reaches_the_code_screen(tmp_path: Path, clock: Clock) -> None:
    """The same pause through the pages: the late form is not stored, the next page is the code screen."""
    import re

    srv = InProcess(study_of(tmp_path))

    async def body(c: httpx.AsyncClient) -> None:
        await c.get("/", params={"participant_id": "H"})
        for _ in range(2):
            page = (await c.get("/task")).text
            aid = re.search(r'name="assignment_id" value="([^"]+)"', page).group(1)
            key = re.search(r'name="idempotency_key" value="([^"]+)"', page).group(1)
            r = await c.post("/task", data={"assignment_id": aid, "idempotency_key": key, "quality": "A"})
            assert r.status_code == 303
        page = (await c.get("/task")).text
        aid = re.search(r'name="assignment_id" value="([^"]+)"', page).group(1)
        key = re.search(r'name="idempotency_key" value="([^"]+)"', page).group(1)
        running(clock, srv, LEASE + 4)
        async with srv.client() as other:
            q = await Participant.enter(other, srv, "Q")
            assert await q.next() is not None
        r = await c.post("/task", data={"assignment_id": aid, "idempotency_key": key, "quality": "A"},
                         follow_redirects=True)
        assert r.status_code == 200 and CODE in r.text and str(r.url).endswith("/done")

    try:
        srv.run(body)
    finally:
        srv.close()


def test_a_restart_longer_than_the_lease_abandons_no_one(tmp_path: Path, clock: Clock, db_url: str | None) -> None:
    study = study_of(tmp_path)
    srv = InProcess(study, db_url)
    held: dict[str, Any] = {}

    async def before(c: httpx.AsyncClient) -> None:
        p = await Participant.enter(c, srv, "P")
        held["a"], held["h"] = await p.work(2), p.h
        r = await Participant.enter(c, srv, "R")  # answers once, then quits while the service runs
        await r.work(1)

    try:
        srv.run(before)
        running(clock, srv, 3)
    finally:
        srv.close()
    clock.now += 64  # the service is down for 64 s, far past the 10 s lease
    srv = InProcess(study, db_url)  # started again over the same store

    async def after(c: httpx.AsyncClient) -> None:
        q = await Participant.enter(c, srv, "Q")
        assert await q.next() is None  # a request after the start (the store reaps): P and R hold the two sessions
        p = Participant(c, srv, "P", held["h"])
        assert (await p.answer(held["a"])).status_code == 201  # their lease was moved by the downtime
        done = 3
        while (a := await p.next()) is not None:
            await p.answered(a)
            done += 1
        assert done == 10 and _code(await p.status()) == CODE
        # R's inactivity counts only while the service runs: settled (their outcome fed) a lease after the start
        settled = "SELECT participant_id FROM settled ORDER BY participant_id"
        assert [r[0] for r in srv.store.read(lambda conn: conn.exec_driver_sql(settled).all())] == ["P"]
        running(clock, srv, LEASE + 1)
        assert await q.next() is not None  # R's list given back: Q continues it
        assert [r[0] for r in srv.store.read(lambda conn: conn.exec_driver_sql(settled).all())] == ["P", "R"]
        assert srv.store.stopping()[0]["n"] == 11  # P's ten and R's one
        events = srv.store.read(lambda conn: conn.exec_driver_sql(
            "SELECT data FROM events WHERE kind = 'downtime'").all())
        assert len(events) == 1 and json.loads(events[0][0])["seconds"] == 64  # from the last beat to the start

    try:
        srv.run(after)
    finally:
        srv.close()


# -- a crowd with quitters and pausers ---------------------------------------------------------------------------
#: the crowd, dealt in a seeded order from decks of 20: 20 % quitters (stop after a random number of tasks, never
#: come back unless said so), 20 % pausers (away once for longer than the lease, then back), 15 % rushers (a median
#: below the min-time rule: excluded, and they favour the baseline), the rest honest (the candidate in 3 of 4)
DECK = ("quitter",) * 4 + ("pauser",) * 4 + ("rusher",) * 3 + ("honest",) * 9
ROUNDS = 1200


class Member(Participant):
    def __init__(self, c: httpx.AsyncClient, srv: InProcess, pid: str, headers: dict[str, str], kind: str,
                 turn: int) -> None:
        super().__init__(c, srv, pid, headers)
        self.kind, self.turn = kind, turn  # quitters quit, pausers pause, after ``turn`` tasks
        self.role = kind  # (``kind`` becomes ``gone`` or ``finished``)
        self.rng = np.random.default_rng(int(pid[1:]))
        self.lease: dict[str, Any] | None = None
        self.done = 0
        self.began = False  # a judgement stored, or a first task the decision withdrew
        self.wake: float | None = None
        self.paused = False

    def choice(self, a: dict[str, Any]) -> str:
        side = super().choice(a)  # the candidate's side: taken three times in four, a rusher takes the other
        flip = self.role == "rusher" or self.rng.random() >= 0.75
        return {"A": "B", "B": "A"}[side] if flip else side

    async def answer(self, a: dict[str, Any]) -> httpx.Response:
        Participant.keys += 1
        return await self.c.post("/api/v1/judgements", headers=self.h, json={
            "assignment_id": a["assignment_id"], "idempotency_key": f"key-{self.pid}-{Participant.keys:06d}",
            "values": {"quality": self.choice(a)}, "seconds": 0.5 if self.role == "rusher" else 6.0})


class Crowd:
    """Participants arriving as places open, acting once a round (a round is a second of service time)."""

    def __init__(self, srv: InProcess, clock: Clock, seed: int) -> None:
        self.srv, self.clock, self.rng = srv, clock, np.random.default_rng(seed)
        self.members: list[Member] = []
        self.deck: list[str] = []
        self.rounds = 0
        self.refused_late = 0
        self.decided_at: float | None = None
        self.judged_after = 0

    def decided(self) -> bool:
        return self.srv.store.stopping()[0]["outcome"] != "continue"

    async def arrive(self, c: httpx.AsyncClient) -> None:
        if not self.deck:
            self.deck = list(self.rng.permutation(DECK))
        kind = str(self.deck.pop())
        pid = f"P{len(self.members):03d}"
        m = Member(c, self.srv, pid, await enter(c, pid), kind, int(self.rng.integers(1, 10)))
        self.members.append(m)
        m.lease = await m.next()  # admitted with work, or told to wait (never began: they leave)

    def active(self) -> list[Member]:
        return [m for m in self.members if m.lease is not None and m.wake is None and m.kind != "gone"]

    async def act(self, m: Member) -> None:
        if m.kind == "quitter" and m.done == m.turn:
            m.kind = "gone"  # quits with a task held, and never comes back
            return
        if m.kind == "pauser" and m.done == m.turn and not m.paused:
            m.paused, m.wake = True, self.clock.now + LEASE + 4  # away past the lease, the task held
            return
        assert m.lease is not None
        r = await m.answer(m.lease)
        if r.status_code == 201:
            m.done += 1
            m.began = True
        else:
            assert r.status_code == 409 and r.json()["error"]["code"] in ("lease_expired", "lease_withdrawn"), r.text
            self.refused_late += 1
            m.began = m.began or r.json()["error"]["code"] == "lease_withdrawn"
        m.lease = await m.next()
        if m.lease is None:
            m.lease, m.kind = None, "finished" if m.kind != "gone" else m.kind

    async def play(self, c: httpx.AsyncClient, rounds: int) -> None:
        """Up to ``rounds`` rounds, until the rule decides."""
        for m in self.members:
            m.c, m.srv = c, self.srv  # (a new client and store after a restart: the tokens stay valid)
        for _ in range(rounds):
            if self.decided():
                return
            self.rounds += 1
            assert self.rounds <= ROUNDS, "collection stalled"
            wanted = self.srv.store.recruitment().wanted
            if wanted or not self.active():  # places open (or, nobody at work, someone comes to look)
                for _ in range(min(max(wanted, 1), 3)):
                    await self.arrive(c)
            for m in [m for m in self.members if m.wake is not None and m.wake <= self.clock.now]:
                m.wake = None  # back from the pause: answer the task held, then go on
            for m in self.active():
                await self.act(m)
                if self.decided() and self.decided_at is None:
                    self.decided_at = self.clock.now
            running(self.clock, self.srv, 1)

    async def finish(self, c: httpx.AsyncClient) -> None:
        """After the decision: those at work and those away come back; half the quitters come back late."""
        for m in self.members:
            m.c, m.srv = c, self.srv
            if m.kind == "gone" and int(m.pid[1:]) % 2:
                continue
            if m.lease is not None:
                r = await m.answer(m.lease)
                assert r.status_code in (201, 409), r.text
                self.judged_after += r.status_code == 201
                self.refused_late += r.status_code == 409
                m.began = m.began or r.status_code == 201 or r.json()["error"]["code"] == "lease_withdrawn"
            while (a := await m.next()) is not None:  # nothing watched is left: the lists are closed
                raise AssertionError(f"{m.pid} was given {a['assignment_id']} after the decision")
            status = await m.status()
            m.began = m.began or status["progress"]["done"] > 0
            if m.began:
                assert _code(status) == CODE, f"{m.pid} ({m.role}) began a session and ended without the code"


def _run_crowd(tmp_path: Path, clock: Clock, db_url: str | None, seed: int, restarts: tuple[int, ...]) -> Crowd:
    study = study_of(tmp_path, items=300, exclusion="[{rule: min-time, seconds: 2, scope: participant}]")
    srv = InProcess(study, db_url)
    comp = srv.store.context.comparisons["quality"]
    w = srv.store.context.session_sizes["quality"]
    stated = unused_bound(comp.sessions, w, comp.in_flight_bound(0))  # stated before launch
    assert stated == srv.store.recruitment().comparisons[0].unused_bound == 10  # W = 2, w = 10: (2 - 1) 10 + 1 - 1
    crowd = Crowd(srv, clock, seed)
    try:
        for at in restarts:  # play until the restart, stop the service past the lease, start it again
            srv.run(lambda c, at=at: crowd.play(c, at - crowd.rounds))
            assert not crowd.decided(), f"decided before the restart at round {at}"
            srv.close()
            clock.now += 3 * LEASE
            srv = crowd.srv = InProcess(study, db_url)
        srv.run(lambda c: crowd.play(c, ROUNDS))
        assert crowd.decided(), f"no decision in {crowd.rounds} rounds"
        downtimes = srv.store.read(lambda conn: conn.exec_driver_sql(
            "SELECT count(*) FROM events WHERE kind = 'downtime'").scalar())
        assert downtimes == len(restarts)
        srv.run(crowd.finish)
        live = srv.store.stopping()[0]
        frame = pd.DataFrame(srv.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        excluded = exclusions(frame, study.protocol, study.read_lists())
        record = replay_decisions(valid_judgements(frame, excluded), study.protocol, study.protocol.systems)[0]
        assert (record["outcome"], record["n"]) == (live["outcome"], live["n"]) and record["agrees_with_live"]
        assert live["outcome"] == "B"  # the candidate (system B) wins: the rushers who favour the baseline are excluded
        assert crowd.judged_after == 0  # nothing was stored after the decision
        # the kept judgements the decision did not use: within the bound stated before launch
        assert record["collected"] - record["n"] <= stated, (record["collected"], record["n"], stated)
        settled = srv.store.read(lambda conn: conn.exec_driver_sql("SELECT reason, excluded FROM settled").all())
        abandoned = [r for r in settled if r[0].startswith("abandoned")]
        rushers = {m.pid for m in crowd.members if m.role == "rusher" and m.began}
        assert set(excluded.loc[excluded["scope"] == "participant", "participant_id"]) == rushers
        assert abandoned and crowd.refused_late > 0  # quitters were settled; pausers (or the cut) came back late
        assert any(m.paused for m in crowd.members) and any(m.kind == "gone" for m in crowd.members)
        crowd.stats = {"places": sum(m.began for m in crowd.members), "n": live["n"], "kept": record["collected"],  # type: ignore[attr-defined]
                       "bound": stated, "abandoned": len(abandoned), "refused_late": crowd.refused_late,
                       "rounds": crowd.rounds}
        print(f"\ncrowd seed {seed}, restarts {restarts}: {crowd.stats}")  # type: ignore[attr-defined]
    finally:
        srv.close()
    return crowd


@pytest.mark.parametrize(("seed", "restarts"), [(1, ()), (2, ()), (3, ()), (4, (8, 20))])
def test_a_crowd_with_quitters_and_pausers_keeps_the_bound_and_every_code(tmp_path: Path, clock: Clock, seed: int,
                                                                          restarts: tuple[int, ...]) -> None:
    _run_crowd(tmp_path, clock, None, seed, restarts)


@pytest.mark.postgres
def test_a_crowd_with_quitters_pausers_and_two_restarts_on_postgres(tmp_path: Path, clock: Clock) -> None:
    from tests.integration.server.conftest import PG, pg_scratch

    with pg_scratch("SCHEMA", "hv_") as schema:
        _run_crowd(tmp_path, clock, f"{PG}?options=-csearch_path%3D{schema}", 4, (8, 20))


def test_a_service_paused_whole_reaps_only_after_its_beat(tmp_path: Path, clock: Clock) -> None:
    """A process that beats (the server) paused whole for 64 s, then resumed: a request that comes before its first
    beat reclaims nothing; the beat moves the downtime, and the participant's lease is theirs."""
    srv = InProcess(study_of(tmp_path))
    srv.store.keep_alive(beating=True)  # what the lifespan does: from now on, reaps wait for a fresh beat

    async def body(c: httpx.AsyncClient) -> None:
        p = await Participant.enter(c, srv, "P")
        held = await p.work(1)
        assert held is not None
        clock.now += 64  # the whole service paused (no beat), then resumed
        q = await Participant.enter(c, srv, "Q")
        await q.next()  # a request before the first beat: nothing is reaped
        leased = "SELECT status FROM assignments WHERE assignment_id = :a"
        assert srv.store.read(lambda conn: conn.exec_driver_sql(leased, {"a": held["assignment_id"]}).scalar()) == "leased"
        assert srv.store.keep_alive() == 64  # the first beat: the downtime moved
        running(clock, srv, 3)
        await q.next()  # a reap now: the lease was moved, not reclaimed
        await p.answered(held)
        assert srv.store.read(lambda conn: conn.exec_driver_sql("SELECT count(*) FROM settled").scalar()) == 0

    try:
        srv.run(body)
    finally:
        srv.close()


def test_the_server_beats_while_it_runs_idle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lifespan's heartbeat runs with no request at all (a beat every ALIVE_EVERY seconds, here 0.05): the app's
    ASGI lifespan driven by hand, as a server would."""
    from humeval.server import app as server_app

    monkeypatch.setattr(server_app, "ALIVE_EVERY", 0.05)
    srv = InProcess(study_of(tmp_path))

    def alive() -> float:
        return float(srv.store.read(lambda conn: conn.exec_driver_sql(
            "SELECT value FROM meta WHERE key = 'alive'").scalar()))

    started = alive()  # the app's start beat once

    async def main() -> float:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        sent: list[dict[str, Any]] = []
        await inbox.put({"type": "lifespan.startup"})

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        life = asyncio.create_task(srv.app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                                           inbox.get, send))
        beat = started
        deadline = time.monotonic() + 120  # until the lifespan beat once, however loaded the machine
        while (beat := alive()) <= started and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await inbox.put({"type": "lifespan.shutdown"})
        await life
        assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
        return beat

    assert asyncio.run(main()) > started
