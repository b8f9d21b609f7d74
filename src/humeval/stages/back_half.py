"""collate -> exclude -> analyze -> report on one results folder (a dry run or a rehearsal), as the stages do.

The judgements are read and validated once, and the exclusion rules applied once; every step gets that one
value. Each step still writes its files (``collation.json``, ``excluded.jsonl``, ``results.json``, the report)
so they are hashed for the logbook as when the stages run one by one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from humeval.analysis.workspace import Workspace, excluded_table, read_study_judgements
from humeval.errors import DataError
from humeval.hashing import sha256_file
from humeval.study import StudyFolder

if TYPE_CHECKING:
    from humeval.design.tasks import ParticipantList, Task

__all__ = ["back_half"]


def back_half(ws: Workspace, study: StudyFolder, tasks: list[Task], lists: list[ParticipantList]) -> tuple[dict[str, Any], list[Path]]:
    """collate -> exclude -> analyze -> report on ``ws`` (a dry run or a rehearsal), as the real stages do.

    Returns a summary (``complete``, ``participants_excluded``, and ``signature``, or
    ``analysis_error`` when the analysis refused, e.g. every participant excluded: a
    rehearsal that found a problem in the design) and the files written.
    """
    from humeval.judgements.exclusion import exclusions
    from humeval.stages.analyze import analyze_workspace, plan_judges, plan_texts
    from humeval.stages.collate import collate_workspace, platform_outputs, workspace_key_file
    from humeval.stages.exclude import exclude_workspace
    from humeval.stages.report import report_workspace

    protocol = study.protocol
    outputs, key_path = platform_outputs(study), workspace_key_file(study, ws)
    judgements = read_study_judgements(ws)
    excluded = exclusions(judgements, protocol, lists)
    collation, paths = collate_workspace(ws, protocol, tasks, judgements, excluded, outputs, key_path=key_path)
    counts, written = exclude_workspace(ws, protocol, judgements, excluded, lists)
    paths += written
    summary: dict[str, Any] = {"complete": collation.complete, "participants_excluded": counts["participants_excluded"]}
    try:
        # the table as `analyze` reads it back from excluded.jsonl
        excluded_read = excluded_table(excluded.to_dict(orient="records"))
        results, written = analyze_workspace(ws, protocol, sha256_file(study.protocol_file), judgements,
                                             excluded_read, tasks, plan_judges(study), plan_texts(study))
    except DataError as exc:
        summary["analysis_error"] = str(exc)
        return summary, paths
    paths += written
    paths += report_workspace(ws, study, results)
    summary["signature"] = results.signature
    return summary, paths
