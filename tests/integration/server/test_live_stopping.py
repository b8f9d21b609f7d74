"""Live stopping agrees with the preregistered back half and stops collecting when it decides.

In-process (httpx.ASGITransport) on SQLite: participants who fail an attention check never
reach the rule, the export's ``stop_seq`` replays to the stored decision, open leases of a
decided comparison are withdrawn, and judgements in flight stay within the bound.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from sqlalchemy import select

from humeval.files import write_jsonl
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusions, valid_judgements
from humeval.pipeline import run
from humeval.protocol.comparisons import Comparison
from humeval.server.app import create_app
from humeval.server.config import ServerConfig
from humeval.stopping import get_rule
from humeval.store import schema as s
from humeval.store.store import Store
from humeval.study import StudyFolder
from humeval.templates import generate_outputs

pytestmark = pytest.mark.timeout(120)
ADMIN = "admin-token-for-tests-000000"

PROTOCOL = """
version: 1
study: {{name: live, seed: 11}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?", tie: true}}
presentation: {{setup: separate}}
design: {{judgements_per_item: 1, items_per_participant: {per_participant}, counterbalancing: none, attention_checks: {checks}}}
assignment: {{strategy: {strategy}, lease_seconds: 600}}
stopping: {{rule: anytime, delta: 0.05, systems: [{systems}], min_in_flight: {min_in_flight}}}
exclusion:
  - {{rule: attention, max_failures: 0}}
platform: {{kind: local, completion_code: DONE-1}}
"""


def make_study(root: Path, *, strategy: str = "list", per_participant: int = 4, checks: int = 1,
               systems: str = "baseline, candidate", items: int = 80, min_in_flight: int = 1) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(items, seed=5))
    (root / "humeval.yaml").write_text(PROTOCOL.format(strategy=strategy, per_participant=per_participant,
                                                      checks=checks, systems=systems, min_in_flight=min_in_flight), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    return study


class Client:
    """The participant API in-process; answers read the display order from the store."""

    def __init__(self, study: StudyFolder) -> None:
        self.store = Store.open(study)
        self.store.prepare()
        app = create_app(ServerConfig(study_dir=study.root, admin_token=ADMIN), self.store)
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")
        self.keys = 0

    async def enter(self, pid: str) -> dict[str, str]:
        r = await self.http.post("/api/v1/enter", json={"participant_id": pid})
        assert r.status_code == 200, r.text
        return {"authorization": f"Bearer {r.json()['token']}"}

    async def next(self, h: dict[str, str]) -> dict[str, Any] | None:
        r = await self.http.get("/api/v1/next", headers=h)
        assert r.status_code in (200, 204), r.text
        return r.json() if r.status_code == 200 else None

    def task_of(self, aid: str) -> tuple[Any, list[str]]:
        a = s.assignments.c
        row = self.store.read(lambda c: c.execute(select(a.task_id, a.display).where(a.assignment_id == aid)).one())
        import json

        return self.store.context.tasks[row.task_id], json.loads(row.display)

    def answer(self, aid: str, *, prefer: str, spam: bool) -> str:
        task, display = self.task_of(aid)
        if task.kind == "attention":
            right = str(task.expected)
            return ("B" if right == "A" else "A") if spam else right
        return "A" if display[0] == prefer else "B"

    async def submit(self, h: dict[str, str], aid: str, choice: str) -> httpx.Response:
        self.keys += 1
        return await self.http.post("/api/v1/judgements", headers=h, json={
            "assignment_id": aid, "idempotency_key": f"key-{self.keys:08d}", "values": {"quality": choice}})

    async def work(self, pid: str, *, prefer: str, spam: bool = False) -> int:
        h = await self.enter(pid)
        n = 0
        while (a := await self.next(h)) is not None:
            r = await self.submit(h, a["assignment_id"], self.answer(a["assignment_id"], prefer=prefer, spam=spam))
            assert r.status_code == 201, r.text
            n += 1
        return n

    async def close(self) -> None:
        await self.http.aclose()
        self.store.close()


def decision(store: Store) -> dict[str, Any]:
    return store.stopping()[0]


def replay(frame: pd.DataFrame, system_a: str) -> tuple[str, int]:
    """The analysis replay's contract: the rule on the stop_seq rows of kept judgements, in order."""
    fed = frame[frame["stop_seq"].notna()].sort_values("stop_seq")
    rule = get_rule("anytime", 0.05)
    d = None
    for sys_shown, sys_b, choice in zip(fed["system"], fed["system_b"], fed["choice"], strict=True):
        winner = sys_shown if choice == "A" else sys_b
        d = rule.update(1 if winner == system_a else 0)
        if d.decided:
            break
    assert d is not None
    return d.outcome if d.decided else "continue", int(d.n)


def test_attention_failures_never_reach_the_rule_and_stop_seq_replays_the_decision(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study")

    async def go() -> Client:
        c = Client(study)
        i = 0
        while decision(c.store)["outcome"] == "continue" and i < 60:
            i += 1
            spam = i % 3 == 0  # spammers fail the attention check and favour the baseline
            await c.work(f"P{i:03d}", prefer="baseline" if spam else "candidate", spam=spam)
        return c

    c = asyncio.run(go())
    try:
        st = decision(c.store)
        assert st["outcome"] == "B" and st["system_a"] == "baseline"  # the candidate wins: only honest votes
        frame = pd.DataFrame(c.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        excluded = exclusions(frame, study.protocol, study.read_lists())
        spammers = set(excluded["participant_id"])
        assert spammers and all(int(p[1:]) % 3 == 0 for p in spammers)
        fed = frame[frame["stop_seq"].notna()]
        assert not set(fed["participant_id"]) & spammers  # no excluded participant's judgement was fed
        assert sorted(fed["stop_seq"]) == list(range(1, st["n"] + 1))
        kept = valid_judgements(frame, excluded)
        assert len(kept[kept["stop_seq"].notna()]) == st["n"]
        assert replay(kept, st["system_a"]) == ("B", st["n"])
        # the spammers' judgements of pair tasks are stored and exported, just never fed
        spam_pairs = frame[frame["participant_id"].isin(spammers) & (frame["kind"] == "task")]
        assert len(spam_pairs) > 0 and spam_pairs["stop_seq"].isna().all()
    finally:
        asyncio.run(c.close())


def test_before_the_fix_a_spammer_would_have_counted(tmp_path: Path) -> None:
    """The same first participants: a spammer's pair judgement is held, not fed, until they are settled."""
    study = make_study(tmp_path / "study")

    async def go() -> tuple[Client, int]:
        c = Client(study)
        h = await c.enter("S1")
        a = await c.next(h)
        assert a is not None
        r = await c.submit(h, a["assignment_id"], c.answer(a["assignment_id"], prefer="baseline", spam=True))
        assert r.status_code == 201
        held = decision(c.store)["n"]
        await c.work("S1", prefer="baseline", spam=True)  # the rest, failing the attention check
        return c, held

    c, held = asyncio.run(go())
    try:
        assert held == 0  # not fed while the participant could still fail a check
        assert decision(c.store)["n"] == 0  # excluded at settlement: never fed
        settled = c.store.read(lambda conn: conn.execute(select(s.settled)).all())
        assert [(r.participant_id, r.excluded) for r in settled] == [("S1", 1)] and "attention" in settled[0].reason
    finally:
        asyncio.run(c.close())


def test_open_leases_are_withdrawn_at_the_decision_and_refused_cleanly(tmp_path: Path) -> None:
    # stopping.min_in_flight: 10 leaves room for many leases, so some are open at the decision
    study = make_study(tmp_path / "study", strategy="one", per_participant=1, checks=0, min_in_flight=10)

    async def go() -> None:
        c = Client(study)
        try:
            await c.work("P000", prefer="candidate")  # n = 1: the bound is max(10, ceil(0.05 * 1)) = 10
            waiting = []
            for i in range(6):  # leases held, not yet answered
                h = await c.enter(f"W{i}")
                a = await c.next(h)
                assert a is not None
                waiting.append((h, a["assignment_id"]))
            i = 0
            while decision(c.store)["outcome"] == "continue":
                i += 1
                assert i < 60
                await c.work(f"P{i:03d}", prefer="candidate")
            st = decision(c.store)
            assert st["outcome"] == "B"
            leased = c.store.read(lambda conn: conn.execute(
                select(s.assignments.c.status).where(s.assignments.c.participant_id.like("W%"))).scalars().all())
            assert leased == ["withdrawn"] * 6
            for h, aid in waiting:
                r = await c.submit(h, aid, "A")
                assert r.status_code == 409 and r.json()["error"]["code"] == "lease_withdrawn"
                assert await c.next(h) is None  # nothing left: the completion page
            assert decision(c.store)["n"] == st["n"]  # nothing was fed after the decision
            stored = {j["participant_id"] for j in c.store.judgements()}
            assert not any(p.startswith("W") for p in stored)
            assert c.store.event_count("lease_withdrawn") == 6
        finally:
            await c.close()

    asyncio.run(go())


def test_in_flight_bound_holds(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", strategy="one", per_participant=3, checks=0)

    async def go() -> None:
        c = Client(study)
        try:
            h1 = await c.enter("P1")
            a = await c.next(h1)
            assert a is not None
            h2 = await c.enter("P2")
            assert await c.next(h2) is None  # bound max(1, ceil(0.05 * 0)) = 1: P1's lease holds it
            r = await c.submit(h1, a["assignment_id"], c.answer(a["assignment_id"], prefer="candidate", spam=False))
            assert r.status_code == 201
            assert decision(c.store)["n"] == 0  # P1 is not settled yet: held, and still in flight
            assert await c.next(h1) is None  # P1 has no room either: settled, their outcome fed
            assert decision(c.store)["n"] == 1
            h3 = await c.enter("P3")
            assert await c.next(h3) is not None
            assert await c.next(h1) is None  # a settled participant gets nothing more
        finally:
            await c.close()

    asyncio.run(go())
    comparison = Comparison("q", "A", "B", "anytime", 0.05)
    assert [comparison.in_flight_bound(n) for n in (0, 1, 20, 21, 40, 41)] == [1, 1, 1, 2, 2, 3]
    wider = Comparison("q", "A", "B", "anytime", 0.05, in_flight_share=0.1, min_in_flight=4)
    assert [wider.in_flight_bound(n) for n in (0, 40, 41, 100)] == [4, 4, 5, 10]


def test_two_systems_with_empty_stopping_systems_are_watched(tmp_path: Path) -> None:
    study = make_study(tmp_path / "two", systems="")
    store = Store.open(study)
    try:
        store.prepare()
        assert [(r["system_a"], r["system_b"]) for r in store.stopping()] == [("baseline", "candidate")]
    finally:
        store.close()


def test_the_admin_page_says_what_exclusion_did_live(tmp_path: Path) -> None:
    """Participants who fail the attention check leave the rule at n = 0: the admin page says the rules excluded
    them (before, it said only 'collecting after n = 0 outcomes')."""
    study = make_study(tmp_path / "study")

    async def go() -> tuple[Client, str]:
        c = Client(study)
        for i in range(3):
            await c.work(f"S{i}", prefer="baseline", spam=True)
        await c.work("H0", prefer="candidate")
        r = await c.http.get(f"/admin?token={ADMIN}", follow_redirects=True)
        assert r.status_code == 200, r.text
        return c, r.text

    c, page = asyncio.run(go())
    try:
        overview = c.store.exclusion_overview()
        settled = c.store.read(lambda conn: conn.execute(select(s.settled)).all())
        excluded = sum(r.excluded for r in settled)  # hand count from the settled rows
        assert overview == {"settled": len(settled), "abandoned": 0, "excluded": excluded, "judgements_excluded": 0,
                            "by_rule": {"attention": 3}} and excluded == 3 and len(settled) == 4
        assert '<span id="excluded-participants">3</span> of <span id="settled-participants">4</span>' in page
        assert "<td>attention</td><td>3</td>" in page
    finally:
        asyncio.run(c.close())
