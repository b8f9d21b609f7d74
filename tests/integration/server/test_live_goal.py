"""A 5-system ``goal: best`` study through the real server: adaptive pair choice, eliminations recorded
as they happen, one decision, leases withdrawn, and the replay from the export reaching the same answer.

In-process (httpx.ASGITransport) on SQLite with four participants working at once; each answers
from a Bradley-Terry model (seeded), so the best system is known.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select

from humeval.analysis.decisions import replay_decisions
from humeval.files import write_jsonl
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusions, valid_judgements
from humeval.lock import lock_study
from humeval.pipeline import run, run_stage
from humeval.store import schema as s
from humeval.study import StudyFolder

from .test_live_stopping import ADMIN, Client

pytestmark = pytest.mark.timeout(240)
SYSTEMS = ["s1", "s2", "s3", "s4", "s5"]
STRENGTH = {"s1": -0.5, "s2": 0.0, "s3": 1.5, "s4": -1.0, "s5": 0.3}  # s3 is the best

PROTOCOL = """
version: 1
study: {name: goal, seed: 11}
data: {files: [data/outputs.jsonl]}
systems: [s1, s2, s3, s4, s5]
criteria:
  - {name: quality, type: 2afc, question: "Which is better?", tie: false}
presentation: {setup: separate}
design: {judgements_per_item: 1, items_per_participant: 12, counterbalancing: none, attention_checks: 0}
assignment: {strategy: one, lease_seconds: 600}
stopping: {rule: anytime, delta: 0.05, goal: best, min_in_flight: 4}
platform: {kind: local, completion_code: DONE-1}
"""


def make_study(root: Path, items: int = 120, strategy: str = "one") -> StudyFolder:
    rows = [{"item_id": f"item-{i:03d}", "system": sy, "output": f"{sy} says {i}", "input": f"input {i}"}
            for i in range(items) for sy in SYSTEMS]
    write_jsonl(root / "data" / "outputs.jsonl", rows)
    (root / "humeval.yaml").write_text(PROTOCOL.replace("strategy: one", f"strategy: {strategy}"), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return StudyFolder.open(root)


class BTClient(Client):
    def __init__(self, study: StudyFolder, seed: int) -> None:
        super().__init__(study)
        self.rng = np.random.default_rng(seed)

    def choose(self, aid: str) -> str:
        _, display = self.task_of(aid)
        p_first = 1 / (1 + np.exp(STRENGTH[display[1]] - STRENGTH[display[0]]))
        return "A" if self.rng.random() < p_first else "B"

    async def bt_work(self, pid: str) -> int:
        h = await self.enter(pid)
        n = 0
        while (a := await self.next(h)) is not None:
            r = await self.submit(h, a["assignment_id"], self.choose(a["assignment_id"]))
            assert r.status_code in (201, 409), r.text  # 409: a lease withdrawn at the decision
            n += 1
        return n


def _events(c: Client) -> list[tuple[str, dict[str, Any]]]:
    e = s.events.c
    rows = c.store.read(lambda conn: conn.execute(select(e.kind, e.data).order_by(e.id)).all())
    return [(k, json.loads(d)) for k, d in rows]


def collect_until_decided(study: StudyFolder, *, max_waves: int) -> BTClient:
    """Waves of four simulated participants at once through the in-process server, until the goal decides."""

    async def go() -> BTClient:
        c = BTClient(study, seed=3)
        wave = 0
        while c.store.stopping()[0]["outcome"] == "continue" and wave < max_waves:
            await asyncio.gather(*(c.bt_work(f"P{wave:03d}-{k}") for k in range(4)))
            wave += 1
        return c

    return asyncio.run(go())


def test_five_systems_goal_best_through_the_server(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", items=120)  # enough tasks for the closest duel (s3 against s4)

    c = collect_until_decided(study, max_waves=60)
    try:
        st = c.store.stopping()[0]
        assert st["outcome"] == "decided", st
        events = _events(c)
        decisions = [d for k, d in events if k == "decision"]
        assert len(decisions) == 1 and decisions[0]["answer"] == ["s3"] and decisions[0]["goal"] == "best"
        eliminated = [d["system"] for k, d in events if k == "goal_eliminated"]
        assert sorted(eliminated) == ["s1", "s2", "s4", "s5"]  # each recorded once, as it happened
        # adaptive choice: pairs with the best system get most of the judgements
        frame = pd.DataFrame(c.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        tasks = frame[frame["kind"] == "task"]
        with_best = ((tasks["system"] == "s3") | (tasks["system_b"] == "s3")).mean()
        assert with_best > 0.5  # uniform pair sampling would give 4/10
        # position randomised and recorded: s3 shown first and second
        assert set(tasks.loc[(tasks["system"] == "s3") | (tasks["system_b"] == "s3"), "system"].eq("s3")) == {True, False}
        # the replay from the exported judgements reaches the same answer at the same n
        kept = valid_judgements(frame, exclusions(frame, study.protocol, study.read_lists()))
        (rec,) = replay_decisions(kept, study.protocol, SYSTEMS)
        assert rec["outcome"] == "decided" and rec["decision"] == ["s3"]
        assert rec["n"] == st["n"] and rec["agrees_with_live"]
        # nothing is served after the decision
        h = asyncio.run(c.enter("LATE"))
        assert asyncio.run(c.next(h)) is None
        # the admin page shows the live leaderboard and the decisions over time
        board = c.store.leaderboards()["quality"]
        assert board["answer"] == ["s3"] and board["rows"][0]["system"] == "s3"
        assert [e["system"] for e in board["events"] if e["kind"] == "eliminated"] == eliminated

        async def admin() -> str:
            r = await c.http.get(f"/admin?token={ADMIN}")
            assert r.status_code == 303
            c.http.cookies.update(r.cookies)
            page = await c.http.get("/admin")
            assert page.status_code == 200
            return page.text

        page = asyncio.run(admin())
        assert "goal best over 5 systems" in page and "decided: s3" in page and "s1 eliminated" in page
        # beside the goal's direct rank sets: the scores and the votes per pair, no pooled card (pairs chosen by the goal)
        assert 'id="board-quality"' in page and "rank set (direct statements)" in page
        assert page.count('<tr data-system="') == 2 * 5 and 'id="pair-votes-quality"' in page
        assert 'id="leaderboard-quality"' not in page
    finally:
        asyncio.run(c.close())


def test_the_pipeline_reports_the_leaderboard_and_the_decisions_over_time(tmp_path: Path) -> None:
    """After collection: export, collate, analyze and report on the goal study (the rest of the pipeline)."""
    study = make_study(tmp_path / "study")

    c = collect_until_decided(study, max_waves=60)
    live = c.store.stopping()[0]
    asyncio.run(c.close())
    for stage in ("export", "collate", "exclude", "analyze", "report"):  # the stages after collection
        run_stage(study, stage)
    results = study.results()
    res = results.criteria["quality"]
    assert res.stopping.decision == ["s3"] and res.stopping.n == live["n"]
    lb = res.leaderboard
    assert lb.leader == "s3" and lb.rows[0].system == "s3" and lb.rows[0].rank_low == 1
    assert [r.in_contention for r in lb.rows] == [True, False, False, False, False]
    # no other system's anytime-valid interval vs the leader reaches above 0
    assert all(r.vs_leader_high is not None and r.vs_leader_high <= 0 for r in lb.rows[1:])
    assert lb.cost.uniform_expected > lb.cost.spent
    report = (study.root / "results" / "report.md").read_text(encoding="utf-8")
    assert "Leaderboard (goal best)" in report and "decisions-over-time" in report
    assert "identified the best system, s3" in report


@pytest.mark.parametrize("strategy", ["max3", "list"])
def test_other_labelling_strategies_decide_and_replay(tmp_path: Path, strategy: str) -> None:
    """max3 (labels of two or three votes, adaptive pair choice) and list (lists in order, no pair choice)."""
    study = make_study(tmp_path / "study", strategy=strategy)

    c = collect_until_decided(study, max_waves=80)
    try:
        st = c.store.stopping()[0]
        assert st["outcome"] == "decided" and "['s3']" in st["reason"]
        frame = pd.DataFrame(c.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        kept = valid_judgements(frame, exclusions(frame, study.protocol, study.read_lists()))
        (rec,) = replay_decisions(kept, study.protocol, SYSTEMS)
        assert rec["decision"] == ["s3"] and rec["n"] == st["n"] and rec["agrees_with_live"]
        assert sum(1 for k, _ in _events(c) if k == "decision") == 1
    finally:
        asyncio.run(c.close())


def test_real_server_with_four_workers(tmp_path: Path, db_url: str | None) -> None:
    """The same study through a real ``humeval serve``, four participants at a time: 4 worker processes on
    PostgreSQL, the one process SQLite takes (``serve`` refuses more on SQLite)."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from tests.integration.server.server import ADMIN as SERVER_ADMIN
    from tests.integration.server.server import ServerProcess

    study = make_study(tmp_path / "study", items=150)  # enough tasks per pair for the hardest duel
    server = ServerProcess(study.root, db_url, workers=4 if db_url else 1).start()

    def participant(pid: str, seed: int) -> int:
        rng = np.random.default_rng(seed)
        n = 0
        with httpx.Client(base_url=server.url, timeout=30) as c:
            r = c.post("/api/v1/enter", json={"participant_id": pid})
            h = {"authorization": f"Bearer {r.json()['token']}"}
            while (r := c.get("/api/v1/next", headers=h)).status_code == 200:
                a = r.json()
                first, second = (o.split(" says ")[0] for o in a["outputs"])  # the display order, as shown
                choice = "A" if rng.random() < 1 / (1 + np.exp(STRENGTH[second] - STRENGTH[first])) else "B"
                n += 1
                c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                                                               "idempotency_key": f"{pid}-{n:06d}", "values": {"quality": choice}})
        return n

    try:
        with httpx.Client(base_url=server.url) as c, ThreadPoolExecutor(4) as pool:
            status = {"stopping": [{"outcome": "continue"}]}
            wave = 0
            while status["stopping"][0]["outcome"] == "continue" and wave < 60:
                list(pool.map(participant, [f"W{wave:03d}-{k}" for k in range(4)], [wave * 4 + k for k in range(4)]))
                status = c.get("/api/v1/admin/status", headers={"authorization": f"Bearer {SERVER_ADMIN}"}).json()
                wave += 1
            st = status["stopping"][0]
            assert st["outcome"] == "decided" and "['s3']" in st["reason"]
            page = c.get(f"/admin?token={SERVER_ADMIN}", follow_redirects=True).text
            assert "decided: s3" in page and "eliminated" in page
    finally:
        server.stop()
    run_stage(study, "export", options={"db": db_url} if db_url else None)
    for stage in ("collate", "exclude", "analyze"):
        run_stage(study, stage)
    rec = study.results().criteria["quality"].stopping
    assert rec is not None and rec.decision == ["s3"] and rec.n == st["n"] and rec.agrees_with_live
