"""The ``analyze`` stage: the preregistered plan; refuses unless locked with the plan unchanged."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from humeval.analysis.workspace import (
    Workspace,
    read_excluded,
    read_study_judgements,
    study_workspace,
)
from humeval.hashing import sha256_file
from humeval.stage import StageOutput
from humeval.study import StudyFolder

if TYPE_CHECKING:
    import pandas as pd

    from humeval.data.judges import JudgeScores
    from humeval.design.tasks import Task
    from humeval.protocol.models import Protocol
    from humeval.results import Results

__all__ = ["analyze_stage", "analyze_workspace", "plan_judges", "plan_texts"]


def analyze_workspace(ws: Workspace, protocol: Protocol, protocol_sha256: str, judgements: pd.DataFrame,
                      excluded: pd.DataFrame, tasks: list[Task] | None = None,
                      judges: Mapping[str, JudgeScores] | None = None,
                      texts: Mapping[tuple[str, str], str] | None = None) -> tuple[Results, list[Path]]:
    """Run the analysis plan on ``ws``'s ``judgements`` minus ``excluded``; write ``results.json`` and
    ``tables/*.csv``. ``texts``: the outputs' texts (:func:`plan_texts`) for the style-controlled ranking."""
    from humeval.analysis.plan import analyze, write_results

    results = analyze(judgements, excluded, protocol, protocol_sha256=protocol_sha256, dry_run=ws.dry_run,
                      tasks=tasks, judges=judges, texts=texts)
    return results, write_results(results, ws.results, ws.tables_dir)


def plan_judges(study: StudyFolder) -> dict[str, JudgeScores] | None:
    """The judges' scores when the analysis plan names judges (read and checked once), else None."""
    return study.judges() if study.protocol.analysis.judges else None


def plan_texts(study: StudyFolder) -> dict[tuple[str, str], str] | None:
    """``(item_id, system) -> output text`` when the plan ranks by ``style-controlled``, else None."""
    if "style-controlled" not in study.protocol.analysis.rankings:
        return None
    return {key: text.output for key, text in study.outputs().texts.items()}


def analyze_stage(study: StudyFolder) -> StageOutput:
    """``humeval analyze``: the preregistered plan; refuses unless locked with the plan unchanged."""
    ws = study_workspace(study)
    sha, tasks, judges = sha256_file(study.protocol_file), study.read_tasks(), plan_judges(study)
    results, paths = analyze_workspace(ws, study.protocol, sha, read_study_judgements(ws), read_excluded(ws),
                                       tasks, judges, plan_texts(study))
    summary = {"criteria": len(results.criteria), "judgements_analysed": results.counted().analysed,
               "signature": results.signature}
    checked = [r.stopping.drift for r in results.criteria.values() if r.stopping and r.stopping.drift]
    if checked:  # the preregistered drift check (stopping.drift_check): how many decisions it flagged
        summary["drift_flagged"] = sum(d.flagged for d in checked)
    return StageOutput(outputs=paths, parameters=study.protocol.analysis.model_dump(mode="json"), summary=summary)
