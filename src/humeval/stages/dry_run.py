"""The ``dry-run`` stage: dummy judgements of every kind, pushed through the whole back half.

For each kind (random, static, normal; see :mod:`humeval.simulate.dummy`) the stage writes
``results/dry-run/<kind>/judgements.jsonl`` and then runs collation, exclusion, the
analysis plan and the report on it with the very functions the real stages use, into the
same folder (a :class:`~humeval.analysis.workspace.Workspace` per kind). A dry run does not
need a lock: it rehearses the plan before it is preregistered. Its results are marked
``dry_run: <kind>`` and carry ``dry-run:<kind>`` in their signature.
"""

from __future__ import annotations

from pathlib import Path

from humeval.analysis.workspace import Workspace
from humeval.stage import StageOutput
from humeval.study import StudyFolder

__all__ = ["dry_run_dir", "dry_run_stage", "dry_run_workspace"]


def dry_run_dir(study: StudyFolder, kind: str) -> Path:
    """Where the dummy run of ``kind`` writes (``results/dry-run/<kind>/``)."""
    return study.results_dir / "dry-run" / kind


def dry_run_workspace(study: StudyFolder, kind: str) -> Workspace:
    return Workspace(dry_run_dir(study, kind), dry_run=kind)


def dry_run_stage(study: StudyFolder) -> StageOutput:
    """Dummy judgements of each kind, then collate -> exclude -> analyze -> report for each."""
    from humeval.judgements import write_judgements
    from humeval.rng import child_seeds
    from humeval.simulate.dummy import DUMMY_KINDS, dummy_judgements
    from humeval.stages.back_half import back_half

    protocol = study.protocol
    tasks = study.read_tasks()
    lists = study.read_lists(tasks)
    outputs: list[Path] = []
    summary: dict[str, dict] = {}
    for kind, seed in zip(DUMMY_KINDS, child_seeds(protocol.study.seed, len(DUMMY_KINDS)), strict=True):
        ws = dry_run_workspace(study, kind)
        frame = dummy_judgements(lists, protocol, kind, seed)
        outputs.append(write_judgements(ws.judgements, frame))
        entry, paths = back_half(ws, study, tasks, lists)
        outputs += paths
        summary[kind] = {"seed": seed, "judgements": len(frame), "participants": int(frame["participant_id"].nunique())} | entry
    return StageOutput(outputs=outputs, seed=protocol.study.seed, parameters={"kinds": list(DUMMY_KINDS)},
                       summary=summary)
