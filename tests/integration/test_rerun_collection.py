"""A short collection is completed by its re-run lists: collate deals them, `serve` adds them to the store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from humeval import run_stage
from humeval.pipeline import export_judgements, prepare_collection
from humeval.store import Progress, Store
from humeval.study import StudyFolder
from tests.integration.server.studies import pairwise_study


async def _answer(store: Store, pid: str, limit: int) -> int:
    """``pid`` enters and answers up to ``limit`` tasks (attention checks as expected); how many."""
    await store.enter(pid, "local", {})
    done = 0
    while done < limit:
        view = await store.next_assignment(pid)
        if isinstance(view, Progress):
            break
        value = view.task.expected if view.task.kind == "attention" else "A"
        await store.submit(pid, view.assignment_id, f"key-{view.assignment_id}", {"quality": value})
        done += 1
    return done


def _collation(study: StudyFolder) -> dict:
    run_stage(study, "collate", force=True)
    return json.loads((study.results_dir / "collation.json").read_text())


def test_rerun_lists_are_served_once_and_complete_the_design(tmp_path: Path) -> None:
    study = pairwise_study(tmp_path / "s", items=6, per_item=2, per_participant=6, stopping=False)
    lists = study.read_lists()
    assert prepare_collection(study) is True
    store = Store.open(study)
    try:
        asyncio.run(_answer(store, "P1", 100))  # one whole list
        asyncio.run(_answer(store, "P2", len(lists[1].tasks) // 2))  # half of the other, then gone
    finally:
        store.close()
    export_judgements(study)
    short = _collation(study)
    assert not short["complete"]
    rerun_file = study.state_dir / "keys" / "results.rerun-lists.jsonl"
    dealt = [json.loads(line) for line in rerun_file.read_text().splitlines()]
    missing = sum(len(pl["tasks"]) for pl in dealt)
    assert missing > 0

    assert prepare_collection(study) is False  # seeded before: only the re-run lists are added
    assert prepare_collection(study) is False  # and only once
    serve_entries = [json.loads(x) for x in study.logbook_file.read_text().splitlines() if '"serve"' in x]
    assert [e["summary"]["rerun_lists"] for e in serve_entries] == [0, len(dealt), 0]

    store = Store.open(study)
    try:
        answered = asyncio.run(_answer(store, "P3", 100))  # P2 still holds its list: P3 gets the re-run list
        assert answered == missing
        assert asyncio.run(_answer(store, "P4", 100)) == 0  # nothing more to hand out
    finally:
        store.close()
    export_judgements(study)
    assert _collation(study)["complete"]
