"""The ``collate`` stage: completeness of ``results/judgements.jsonl``; a re-run file when short."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from humeval.analysis.workspace import Workspace, read_study_judgements, study_workspace
from humeval.files import write_json
from humeval.stage import StageOutput
from humeval.study import StudyFolder

if TYPE_CHECKING:
    import pandas as pd

    from humeval.analysis.collate import Collation
    from humeval.data.outputs import Outputs
    from humeval.design.tasks import Task
    from humeval.protocol.models import Protocol

__all__ = ["collate_stage", "collate_workspace", "platform_outputs", "workspace_key_file"]


def collate_workspace(ws: Workspace, protocol: Protocol, tasks: list[Task], judgements: pd.DataFrame,
                      excluded: pd.DataFrame, outputs: Outputs | None = None, *,
                      key_path: Path) -> tuple[Collation, list[Path]]:
    """Collate ``judgements`` (``ws``'s, with their ``excluded`` rows); write ``collation.json`` and, when
    incomplete, the re-run file.

    Comparisons the stopping rule decided (replayed on the judgements the exclusion rules
    keep) are complete by design: their pair tasks are never re-run.
    """
    from humeval.analysis.collate import collate, rerun_lists, write_rerun
    from humeval.analysis.decisions import replay_decisions
    from humeval.judgements import excluded_mask

    systems = protocol.systems or sorted({s for t in tasks for s in t.systems})
    decisions = replay_decisions(judgements[~excluded_mask(judgements, excluded)], protocol, systems, tasks)
    result = collate(judgements, tasks, protocol, None, excluded, decisions)
    paths = [write_json(ws.collation, result.summary() | {"platform": protocol.platform.kind})]
    if not result.complete:
        rerun = rerun_lists(result, tasks, protocol.design.items_per_participant)
        paths += write_rerun(ws.rerun_dir, rerun, protocol.platform.kind, outputs, key_path=key_path,
                             seed=protocol.study.seed)
    return result, paths


def workspace_key_file(study: StudyFolder, ws: Workspace) -> Path:
    """Where the opaque row keys of ``ws``'s participant-facing files are kept (under ``.humeval/keys/``)."""
    from humeval.platforms.keys import key_file

    return key_file(study.state_dir, ws.root, study.root)


def platform_outputs(study: StudyFolder) -> Outputs | None:
    """The output texts a re-run batch (``files``) carries; None for the other platforms."""
    if study.protocol.platform.kind != "files":
        return None
    return study.outputs()


def collate_stage(study: StudyFolder) -> StageOutput:
    """``humeval collate``: completeness of results/judgements.jsonl; a re-run file when short."""
    from humeval.judgements.exclusion import exclusions

    protocol = study.protocol
    tasks = study.read_tasks()
    lists = study.read_lists(tasks)
    outputs = platform_outputs(study)
    ws = study_workspace(study)
    key_path = workspace_key_file(study, ws)
    judgements = read_study_judgements(ws)
    result, paths = collate_workspace(ws, protocol, tasks, judgements, exclusions(judgements, protocol, lists),
                                      outputs, key_path=key_path)
    summary = {k: v for k, v in result.summary().items() if k not in ("incomplete", "invalid_reasons")}
    return StageOutput(outputs=paths, parameters={"judgements_per_item": protocol.design.judgements_per_item},
                       summary=summary)
