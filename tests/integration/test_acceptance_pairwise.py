"""The pairwise template end to end through the real server: the rule decides, collation is complete,
the report states decision, n and savings, and the analysis replay's n equals the live n."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from humeval import logbook
from humeval.files import read_json
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.rehearsal import rehearse
from humeval.study import StudyFolder
from humeval.templates import init_study


def test_pairwise_template_rehearsal_decides_and_the_back_half_agrees(tmp_path: Path):
    init_study(tmp_path / "s", "pairwise", items=30)
    study = StudyFolder.open(tmp_path / "s")
    lock_study(study)
    list(run(study))
    result = rehearse(study, kind="normal", timeout=240)
    live = [e for e in logbook.read(study) if e["stage"] == "stopping"]
    assert len(live) == 1 and live[0]["decision"] in ("A", "B")
    ws = result.workspace
    collation = read_json(ws / "collation.json")
    assert collation["complete"] and collation["tasks_decided"] == 30 and result.complete
    (decision,) = collation["decisions"]
    assert decision["n"] == live[0]["n"] == decision["live_n"] and decision["agrees_with_live"] is True
    assert decision["saved"] == decision["fixed_design"] - decision["collected"] > 0
    results = study.results("rehearsal")
    stopping = results.criteria["quality"].stopping
    assert stopping is not None and stopping.n == live[0]["n"] and stopping.decision == decision["decision"]
    report = (ws / "report.md").read_text()
    assert "## Dynamic stopping" in report
    assert f"decided for {decision['decision']} after n = {decision['n']} decisive judgements" in report
    assert f"{decision['saved']} saved" in report and "agrees" in report
    assert not list((ws / "rerun").glob("*")) if (ws / "rerun").exists() else True  # nothing to re-run
    tables = results.tables()
    assert tables and all(isinstance(t, pd.DataFrame) for t in tables.values())
