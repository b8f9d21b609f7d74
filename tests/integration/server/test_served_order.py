"""One study of sorted, tied data through the real design, store and server (in-process, SQLite).

The data file puts the items where the baseline is preferred (P 0.8) first and those where
the candidate is preferred (P 0.8) after them: the systems tie over the items. Simulated
participants answer each pair task from its item's P. The watched comparison's tasks are
served in the recorded serving order (``lists/tasks.jsonl``, the watched lists), not in file
order, and the analysis replay of the export reaches the live decision.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from humeval.analysis.decisions import replay_decisions
from humeval.design import order_items
from humeval.files import write_jsonl
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusions, valid_judgements
from humeval.pipeline import run
from humeval.protocol.comparisons import watched_comparisons
from humeval.stages.design import read_items
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.integration.server.test_live_stopping import Client, decision

pytestmark = pytest.mark.timeout(180)

N_ITEMS = 60
PROTOCOL = """
version: 1
study: {name: sorted, seed: 30}
data: {files: [data/outputs.jsonl]}
systems: [baseline, candidate]
criteria:
  - {name: quality, type: 2afc, question: "Which is better?"}
  - {name: fluency, type: likert, question: "How fluent is it?"}
presentation: {setup: separate}
design: {judgements_per_item: 3, items_per_participant: 10, counterbalancing: latin-square, attention_checks: 1}
assignment: {strategy: list, lease_seconds: 600}
stopping: {rule: anytime, delta: 0.05, systems: [baseline, candidate]}
exclusion:
  - {rule: attention, max_failures: 0}
platform: {kind: local, completion_code: DONE-1}
"""


def test_sorted_tied_data_is_served_in_the_recorded_random_order_and_replays_to_the_live_decision(tmp_path: Path) -> None:
    root = tmp_path / "study"
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(N_ITEMS, seed=5))
    (root / "humeval.yaml").write_text(PROTOCOL, encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    selected = read_items(study)  # file order
    first_half = set(selected[: N_ITEMS // 2])
    comparisons = watched_comparisons(study.protocol, ["baseline", "candidate"])
    recorded = order_items(selected, study.protocol.study.seed, comparisons)
    tasks = study.read_tasks()
    assert list(dict.fromkeys(t.item_id for t in tasks)) == recorded != selected  # the design recorded the order
    lists = study.read_lists(tasks)
    watched_lists = [pl for pl in lists if pl.watched]
    assert watched_lists and all(pl.watched == ("quality",) for pl in watched_lists)
    planned = [t.task_id for pl in watched_lists for t in pl.tasks if t.kind == "task"]

    rng = np.random.default_rng(1)

    class Crowd(Client):
        """Answers a pair task from its item's P, a likert task with 3, every check correctly."""

        def answer(self, aid: str, *, prefer: str, spam: bool) -> str:
            task, display = self.task_of(aid)
            if task.kind == "attention":
                return str(task.expected)
            p_baseline = 0.8 if task.item_id in first_half else 0.2
            winner = "baseline" if rng.random() < p_baseline else "candidate"
            return "A" if display[0] == winner else "B"

        async def submit(self, h, aid, choice):  # type: ignore[override]
            task, _ = self.task_of(aid)
            self.keys += 1
            values = {c: (int(choice) if str(choice).isdigit() else 3) if c == "fluency" else choice for c in task.criteria}
            return await self.http.post("/api/v1/judgements", headers=h, json={
                "assignment_id": aid, "idempotency_key": f"key-{self.keys:08d}", "values": values})

    async def go() -> Crowd:
        c = Crowd(study)
        i = 0  # participants until the rule decides or every watched judgement is in (the watched lists come first)
        while decision(c.store)["outcome"] == "continue" and decision(c.store)["n"] < len(planned) and i < 1000:
            i += 1
            await c.work(f"P{i:04d}", prefer="")
        return c

    c = asyncio.run(go())
    try:
        live = decision(c.store)
        print(f"live decision: {live['outcome']} at n = {live['n']} of {len(planned)} watched judgements")
        frame = pd.DataFrame(c.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        fed = frame[frame["stop_seq"].notna()].sort_values("stop_seq")
        served = list(fed["task_id"])
        assert served == planned[: len(served)]  # the recorded order, list after list
        served_items = list(fed["item_id"])[:N_ITEMS]
        assert len(served) >= N_ITEMS // 2 and served_items != selected[: len(served_items)]  # not file order
        excluded = exclusions(frame, study.protocol, study.read_lists())
        kept = valid_judgements(frame, excluded)
        (replayed,) = replay_decisions(kept, study.protocol, ["baseline", "candidate"])
        assert (replayed["outcome"], replayed["n"]) == (live["outcome"], live["n"]), json.dumps(live)
    finally:
        asyncio.run(c.close())
