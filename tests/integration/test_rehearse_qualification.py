"""A rehearsal of a study with two attempts at each qualification check (``design.qualification_attempts: 2``):
its crowd's spammers and first clickers answer a failed check again as they answered it first (the server asks for
the second attempt), and the exclusion counts say who passed, passed with a second attempt and failed, as the
exported judgements show."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from humeval.rehearsal import Population, rehearse
from tests.integration.server.test_live_feed import feed_study


def test_the_rehearsal_asks_for_second_attempts_and_counts_them(tmp_path: Path) -> None:
    study = feed_study(tmp_path / "study", items=80, per=4, attempts=2)
    population = Population(spammer_share=0.4, first_share=0.3, straight_share=0.0, size=20)
    result = rehearse(study, kind="crowd", population=population, seed=3, concurrency=1)
    summary = json.loads((result.workspace / "exclusion.json").read_text())["qualification"]
    frame = pd.read_json(result.workspace / "judgements.jsonl", lines=True)
    asked = {t.task_id: t.expected for pl in study.read_lists() for t in pl.tasks if t.kind == "attention"}
    checks = frame[frame["kind"] == "attention"].assign(failed=lambda f: f["choice"] != f["task_id"].map(asked))
    per = checks.groupby("participant_id").agg(failed=("failed", "any"), retried=("revision", "max"))
    assert summary == {"participants": len(per), "passed": int((~per["failed"]).sum()),
                       "passed_retried": int((~per["failed"] & (per["retried"] > 0)).sum()),
                       "failed": int(per["failed"].sum()), "retried": int((per["retried"] > 0).sum())}
    assert summary["passed_retried"] > 0 and summary["failed"] > 0  # some spammers guess right the second time
    report = (result.workspace / "report.md").read_text(encoding="utf-8")
    assert (f"Qualification (the first 2 attention check(s) of every list, 2 attempt(s) at each): "
            f"{summary['participants']} participants answered it; {summary['passed']} passed "
            f"({summary['passed_retried']} of them with a second attempt at a check), {summary['failed']} failed; "
            f"{summary['retried']} answered a check again.") in report
    print(json.dumps(summary))
    log = [json.loads(line) for line in study.logbook_file.read_text().splitlines()]
    rehearsal = [e for e in log if e.get("stage") == "rehearse"][-1]["summary"]
    assert rehearsal["retried"] == int((checks["revision"] > 0).sum()) > 0
