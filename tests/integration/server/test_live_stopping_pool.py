"""Pool strategies under live stopping: a label with an excluded voter is dropped, and the replay agrees.

``majority`` with three workers collects three votes per pair task and feeds the majority label once every
voter is settled. Participants who answer faster than the preregistered ``min-time``
threshold are excluded at settlement, so every label they voted on is dropped, never fed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import select

from humeval.analysis.decisions import replay_decisions
from humeval.files import write_jsonl
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusions, valid_judgements
from humeval.pipeline import run
from humeval.store import schema as s
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.integration.server.test_live_stopping import Client, decision

pytestmark = pytest.mark.timeout(180)

PROTOCOL = """
version: 1
study: {name: pool, seed: 13}
data: {files: [data/outputs.jsonl], properties: [slots]}
systems: [baseline, candidate]
criteria:
  - {name: quality, type: 2afc, question: "Which is better?", tie: true}
presentation: {setup: separate}
design: {judgements_per_item: 1, items_per_participant: 6, counterbalancing: none, attention_checks: 0}
assignment: {strategy: majority, workers: 3, lease_seconds: 600}
stopping: {rule: anytime, delta: 0.05, systems: [baseline, candidate], min_in_flight: MIN}
exclusion:
  - {rule: min-time, seconds: 2, scope: participant}
platform: {kind: local, completion_code: DONE-1}
"""


@pytest.mark.parametrize("min_in_flight", [1, 4])
def test_labels_with_an_excluded_voter_are_dropped_and_the_replay_agrees(tmp_path: Path, min_in_flight: int) -> None:
    # min_in_flight 1: a label waiting for its second voter must not hold the bound (it once did: no task was served)
    root = tmp_path / "study"
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(120, seed=5))
    (root / "humeval.yaml").write_text(PROTOCOL.replace("MIN", str(min_in_flight)), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))

    async def work(c: Client, pid: str, *, fast: bool) -> None:
        h = await c.enter(pid)
        while (a := await c.next(h)) is not None:
            c.keys += 1
            choice = c.answer(a["assignment_id"], prefer="baseline" if fast else "candidate", spam=False)
            r = await c.http.post("/api/v1/judgements", headers=h, json={
                "assignment_id": a["assignment_id"], "idempotency_key": f"key-{c.keys:08d}",
                "values": {"quality": choice}, "seconds": 0.5 if fast else 6.0})
            assert r.status_code in (201, 409), r.text  # 409: withdrawn at the decision

    async def go() -> Client:
        c = Client(study)
        i = 0
        while decision(c.store)["outcome"] == "continue" and i < 400:
            i += 1
            await work(c, f"P{i:03d}", fast=i % 4 == 0)  # every fourth participant rushes and favours the baseline
        return c

    c = asyncio.run(go())
    try:
        st = decision(c.store)
        assert st["outcome"] == "B"  # the candidate wins on the kept labels alone
        frame = pd.DataFrame(c.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        excluded = exclusions(frame, study.protocol, study.read_lists())
        rushed = set(excluded["participant_id"])
        assert rushed and all(int(p[1:]) % 4 == 0 for p in rushed)
        p = s.pending.c
        states = c.store.read(lambda conn: conn.execute(select(p.state, p.participants)).all())
        dropped = [set(json.loads(pids)) for state, pids in states if state == "dropped"]
        fed = [set(json.loads(pids)) for state, pids in states if state == "fed"]
        assert dropped and all(voters & rushed for voters in dropped)  # each dropped label had a rushed voter
        assert fed and not any(voters & rushed for voters in fed)  # no fed label had one
        assert len(fed) == st["n"]
        # the analysis replays the same decision from the export, after the same exclusion
        kept = valid_judgements(frame, excluded)
        replayed = replay_decisions(kept, study.protocol, ["baseline", "candidate"], study.read_tasks())[0]
        assert (replayed["outcome"], replayed["n"]) == ("B", st["n"])
        assert replayed["agrees_with_live"] is True
    finally:
        asyncio.run(c.close())
