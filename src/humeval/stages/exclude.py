"""The ``exclude`` stage: the preregistered exclusion rules (requires a lock of the ``exclusion`` section)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from humeval.analysis.workspace import Workspace, read_study_judgements, study_workspace
from humeval.files import write_json, write_jsonl
from humeval.stage import StageOutput
from humeval.study import Study

if TYPE_CHECKING:
    import pandas as pd

    from humeval.protocol.models import Protocol

__all__ = ["exclude_stage", "exclude_workspace"]


def exclude_workspace(ws: Workspace, protocol: Protocol, judgements: pd.DataFrame,
                      excluded: pd.DataFrame) -> tuple[dict[str, Any], list[Path]]:
    """Write ``excluded`` (the rules applied to ``ws``'s ``judgements``) as ``excluded.jsonl``, and its counts
    as ``exclusion.json``."""
    from humeval.judgements.exclusion import exclusion_counts

    counts = exclusion_counts(judgements, excluded, protocol)
    write_jsonl(ws.excluded, excluded.to_dict(orient="records"))
    return counts, [ws.excluded, write_json(ws.exclusion, counts)]


def exclude_stage(study: Study) -> StageOutput:
    """``humeval exclude``: the preregistered exclusion rules (requires a lock of the ``exclusion`` section)."""
    from humeval.judgements.exclusion import exclusions

    protocol = study.protocol
    lists = study.read_lists()
    ws = study_workspace(study)
    judgements = read_study_judgements(ws)
    counts, paths = exclude_workspace(ws, protocol, judgements, exclusions(judgements, protocol, lists))
    summary = {k: v for k, v in counts.items() if k != "rules"}
    return StageOutput(outputs=paths, parameters={"rules": [r.model_dump() for r in protocol.exclusion]},
                       summary=summary)
