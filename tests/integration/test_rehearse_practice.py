"""A rehearsal of a study with practice items (``design.practice``): every simulated participant answers them first
(those who read as the item expects, first clickers the first output, spammers at random; those who take a list
given on after its holder was screened out too), and the exclusion counts
and the report say how many answered each and how many were right, as the exported judgements show."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from humeval.rehearsal import Population, rehearse
from tests.integration.server.test_live_feed import feed_study
from tests.integration.server.test_practice import PRACTICE


def test_the_rehearsal_answers_the_practice_and_counts_it(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study", items=80, per=4, attempts=2, design=PRACTICE)
    population = Population(spammer_share=0.4, first_share=0.3, straight_share=0.0, size=12)
    result = rehearse(study, kind="crowd", population=population, seed=3, concurrency=1)
    counts = json.loads((result.workspace / "exclusion.json").read_text())["practice"]
    frame = pd.read_json(result.workspace / "judgements.jsonl", lines=True)
    practice = frame[frame["kind"] == "practice"]
    first = practice[practice["item_id"] == "practice-1"]
    n = counts["participants"]
    # everyone practises first, those who took a list given on too
    assert len(first) == practice["participant_id"].nunique() == frame["participant_id"].nunique() == n > 0
    right = int((first["choice"] == "A").sum())
    assert counts["items"] == [
        {"item": 1, "criterion": "quality", "expected": "A", "answered": n, "right": right},
        {"item": 2, "criterion": "quality", "expected": None, "answered": n, "right": None}]
    assert 0 < right < n  # readers and first clickers answer A, some spammers B
    assert set(practice["system"]) == {"output-1"}
    report = (result.workspace / "report.md").read_text(encoding="utf-8")
    assert (f"Practice (2 item(s) first in every list, with feedback; judged by no rule and not analysed): {n} "
            f"participants answered practice items; {right} of {n} answers to the items that name an answer were "
            "right.") in report
    excluded = pd.read_json(result.workspace / "excluded.jsonl", lines=True) if (
        result.workspace / "excluded.jsonl").stat().st_size else pd.DataFrame(columns=["task_id"])
    assert not excluded["task_id"].astype(str).str.startswith("practice-").any()
    print(json.dumps(counts))
