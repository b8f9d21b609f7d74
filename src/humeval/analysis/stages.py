"""The back-half pipeline stages: ``collate``, ``exclude``, ``analyze`` (``report`` is in humeval.report).

Each ``*_stage(study)`` is what ``humeval <stage>`` runs through
:func:`humeval.pipeline.run_stage` (logbook, lock check, skip when unchanged). Each
delegates to a ``*_workspace`` function that reads and writes one results folder, so a
dry run pushes its dummy judgements through exactly the same code under
``results/dry-run/<kind>/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from humeval.analysis.collate import Collation, collate, rerun_lists, write_rerun
from humeval.analysis.decisions import replay_decisions
from humeval.analysis.exclude import EXCLUDED_COLUMNS, exclusion_counts, exclusions
from humeval.analysis.plan import analyze, write_results
from humeval.analysis.workspace import Workspace
from humeval.data.judges import JudgeScores
from humeval.data.outputs import Outputs
from humeval.design.tasks import ParticipantList, Task
from humeval.errors import DataError
from humeval.files import read_jsonl, write_json, write_jsonl
from humeval.hashing import sha256_file
from humeval.judgements import excluded_mask, read_judgements
from humeval.protocol.models import Protocol
from humeval.results import Results
from humeval.stage import StageOutput
from humeval.study import Study

__all__ = [
    "analyze_stage",
    "analyze_workspace",
    "collate_stage",
    "collate_workspace",
    "exclude_stage",
    "exclude_workspace",
    "platform_outputs",
    "read_excluded",
    "read_results",
    "read_study_judgements",
    "study_workspace",
]


def study_workspace(study: Study) -> Workspace:
    """The study's own results folder (``results/``)."""
    return Workspace(study.results_dir)


def read_study_judgements(ws: Workspace) -> pd.DataFrame:
    """The collected judgements of ``ws``, with a message saying where they come from when missing."""
    if not ws.judgements.is_file():
        raise DataError(
            f"{ws.judgements}: no collected judgements. They are written by `humeval export` (from the collection "
            "server's store) or by a platform import; a dry run writes its own under results/dry-run/<kind>/"
        )
    return read_judgements(ws.judgements)


def read_excluded(ws: Workspace) -> pd.DataFrame:
    """The exclusion table written by ``exclude`` (refuses when it is missing: run ``exclude`` first)."""
    rows = read_jsonl(ws.excluded, what="exclusion table yet", hint="run `humeval exclude` before `humeval analyze`")
    return pd.DataFrame(rows, columns=EXCLUDED_COLUMNS).fillna("").astype(str)


# --------------------------------------------------------------------------- collate


def collate_workspace(ws: Workspace, protocol: Protocol, tasks: list[Task], lists: list[ParticipantList],
                      outputs: Outputs | None = None, *, key_path: Path) -> tuple[Collation, list[Path]]:
    """Collate ``ws``'s judgements; write ``collation.json`` and, when incomplete, the re-run file.

    Comparisons the stopping rule decided (replayed on the judgements the exclusion rules
    keep) are complete by design: their pair tasks are never re-run.
    """
    judgements = read_study_judgements(ws)
    excluded = exclusions(judgements, protocol, lists)
    systems = protocol.systems or sorted({s for t in tasks for s in t.systems})
    decisions = replay_decisions(judgements[~excluded_mask(judgements, excluded)], protocol, systems, tasks)
    result = collate(judgements, tasks, protocol, lists, excluded, decisions)
    paths = [write_json(ws.collation, result.summary() | {"platform": protocol.platform.kind})]
    if not result.complete:
        rerun = rerun_lists(result, tasks, protocol.design.items_per_participant)
        paths += write_rerun(ws.rerun_dir, rerun, protocol.platform.kind, outputs, key_path=key_path,
                             seed=protocol.study.seed)
    return result, paths


def workspace_key_file(study: Study, ws: Workspace) -> Path:
    """Where the opaque row keys of ``ws``'s participant-facing files are kept (under ``.humeval/keys/``)."""
    from humeval.platforms.keys import key_file

    return key_file(study.state_dir, ws.root, study.root)


def platform_outputs(study: Study) -> Outputs | None:
    """The output texts a re-run batch (``files``) carries; None for the other platforms."""
    if study.protocol.platform.kind != "files":
        return None
    return study.outputs()


def collate_stage(study: Study) -> StageOutput:
    """``humeval collate``: completeness of results/judgements.jsonl; a re-run file when short."""
    protocol = study.protocol
    tasks = study.read_tasks()
    result, paths = collate_workspace(
        study_workspace(study), protocol, tasks, study.read_lists(tasks), platform_outputs(study),
        key_path=workspace_key_file(study, study_workspace(study)),
    )
    summary = {k: v for k, v in result.summary().items() if k not in ("incomplete", "invalid_reasons")}
    return StageOutput(outputs=paths, parameters={"judgements_per_item": protocol.design.judgements_per_item},
                       summary=summary)


# --------------------------------------------------------------------------- exclude


def exclude_workspace(ws: Workspace, protocol: Protocol, lists: list[ParticipantList]) -> tuple[dict[str, Any], list[Path]]:
    """Apply the exclusion rules to ``ws``'s judgements; write ``excluded.jsonl`` and ``exclusion.json``."""
    frame = read_study_judgements(ws)
    excluded = exclusions(frame, protocol, lists)
    counts = exclusion_counts(frame, excluded, protocol)
    write_jsonl(ws.excluded, excluded.to_dict(orient="records"))
    return counts, [ws.excluded, write_json(ws.exclusion, counts)]


def exclude_stage(study: Study) -> StageOutput:
    """``humeval exclude``: the preregistered exclusion rules (requires a lock of the ``exclusion`` section)."""
    lists = study.read_lists()
    counts, paths = exclude_workspace(study_workspace(study), study.protocol, lists)
    summary = {k: v for k, v in counts.items() if k != "rules"}
    return StageOutput(outputs=paths, parameters={"rules": [r.model_dump() for r in study.protocol.exclusion]},
                       summary=summary)


# --------------------------------------------------------------------------- analyze


def analyze_workspace(ws: Workspace, protocol: Protocol, protocol_sha256: str,
                      tasks: list[Task] | None = None,
                      judges: Mapping[str, JudgeScores] | None = None) -> tuple[Results, list[Path]]:
    """Run the analysis plan on ``ws``; write ``results.json`` and ``tables/*.csv``."""
    results = analyze(read_study_judgements(ws), read_excluded(ws), protocol,
                      protocol_sha256=protocol_sha256, dry_run=ws.dry_run, tasks=tasks, judges=judges)
    return results, write_results(results, ws.results, ws.tables_dir)


def analyze_stage(study: Study) -> StageOutput:
    """``humeval analyze``: the preregistered plan; refuses unless locked with the plan unchanged."""
    results, paths = analyze_workspace(study_workspace(study), study.protocol, sha256_file(study.protocol_file),
                                       study.read_tasks(), plan_judges(study))
    summary = {"criteria": len(results.criteria), "judgements_analysed": results.counts.analysed,
               "signature": results.signature}
    return StageOutput(outputs=paths, parameters=study.protocol.analysis.model_dump(mode="json"), summary=summary)


def plan_judges(study: Study) -> dict[str, JudgeScores] | None:
    """The judges' scores when the analysis plan names judges (read and checked once), else None."""
    return study.judges() if study.protocol.analysis.judges else None


def read_results(ws: Workspace) -> Results:
    return Results.read(ws.results, hint="run `humeval analyze` first")
