"""Rehearsals of arena studies through the real server (``humeval serve``) and the back half to the report: battles
on recorded outputs, and live battles streamed from recorded endpoints with a model whose every battle fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from humeval.rehearsal import rehearse
from humeval.store import Store
from tests.integration.server.studies import arena_study, live_arena_study

pytestmark = pytest.mark.timeout(600)


def test_an_arena_on_recorded_outputs_rehearses_to_the_report(tmp_path: Path, shared_data: Path) -> None:
    study = arena_study(tmp_path / "arena", shared_data / "arena", per_participant=6)
    result = rehearse(study, kind="static", concurrency=2, timeout=300)
    assert result.judgements == result.judgements_required > 0
    report = (result.workspace / "report.md").read_text(encoding="utf-8")
    assert "Criteria: vote (battle)" in report and (result.workspace / "figures" / "vote-win-rates.png").is_file()
    # the leaderboard of three models: its figure beside the rankings, its table and its decision or "undecided"
    assert (result.workspace / "figures" / "vote-leaderboard.png").is_file()
    assert "Leaderboard (Davidson scores, percentile bootstrap over votes" in report
    assert "Leaderboard: decided" in report or "Leaderboard: undecided" in report
    results = json.loads((result.workspace / "results.json").read_text(encoding="utf-8"))
    board = results["criteria"]["vote"]["arena_board"]
    assert board["basis"] == "pooled" and board["fed"] + board["pending"] == result.judgements
    assert [r["rank_low"] for r in board["rows"]] == sorted(r["rank_low"] for r in board["rows"])
    assert all(r["ci_low"] <= r["score"] <= r["ci_high"] for r in board["rows"])


def test_a_live_arena_rehearses_and_never_counts_a_failed_battle(tmp_path: Path, shared_data: Path) -> None:
    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=3, per_participant=6,
                             failing="Alpaca (7B)")
    result = rehearse(study, kind="static", concurrency=2, timeout=300)
    store = Store.open(study, result.store)
    try:
        generations = store.generations()
        judged = store.judgements()
    finally:
        store.close()
    failed = {g["assignment_id"] for g in generations if g["error"]}
    assert failed and all("failing" in json.dumps([g["model"] for g in generations if g["assignment_id"] == a])
                          for a in failed)
    assert {j["assignment_id"] for j in judged}.isdisjoint(failed)
    assert all("failing" not in j["display"] for j in judged)
    assert result.judgements == len(judged) > 0
    assert "Criteria: vote (battle)" in (result.workspace / "report.md").read_text(encoding="utf-8")
    # collation finds the failed places short: the re-run lists hold them (the store leaves them out when it adds
    # the lists: a recorded answer too long fails again, tests/integration/server/test_live_battle.py)
    assert (result.workspace / "rerun" / "lists.csv").is_file()
    print(json.dumps({"judgements": result.judgements, "failed_battles": len(failed),
                      "generations": len(generations), "workspace": str(result.workspace)}))


def test_a_live_arena_with_typed_prompts_rehearses(tmp_path: Path, shared_data: Path) -> None:
    """Typed prompts: each simulated participant types a prompt the recorded models can answer (the data's three and
    four spare ones), the models answer that prompt, and the votes are exported with it."""
    import pandas as pd

    from humeval.arena.models import normalise_prompt
    from humeval.rehearsal.participants import prompts_to_type

    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=3, per_participant=6, spare=4,
                             prompt_rules="{typed: true, max_repeats: 100}")
    pool = prompts_to_type(study)
    assert len(pool) == 7
    result = rehearse(study, kind="static", concurrency=2, timeout=300)
    frame = pd.read_json(result.workspace / "judgements.jsonl", lines=True)
    votes = frame[frame["kind"] == "task"]
    assert len(votes) == result.judgements > 0
    assert (votes["prompt_source"] == "typed").all() and set(votes["prompt"].map(normalise_prompt)) <= set(pool)
    log = [json.loads(line) for line in study.logbook_file.read_text().splitlines()]
    summary = [e for e in log if e.get("stage") == "rehearse"][-1]["summary"]
    assert summary["typed_prompts"] >= result.judgements
