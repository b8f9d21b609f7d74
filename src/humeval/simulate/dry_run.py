"""The ``dry-run`` stage: dummy judgements of every kind, pushed through the whole back half.

For each kind (random, static, normal; see :mod:`humeval.simulate.dummy`) the stage writes
``results/dry-run/<kind>/judgements.jsonl`` and then runs collation, exclusion, the
analysis plan and the report on it with the very functions the real stages use, into the
same folder (a :class:`~humeval.analysis.workspace.Workspace` per kind). A dry run does not
need a lock: it rehearses the plan before it is preregistered. Its results are marked
``dry_run: <kind>`` and carry ``dry-run:<kind>`` in their signature.
"""

from __future__ import annotations

import json
from pathlib import Path

from humeval.analysis.stages import analyze_workspace, collate_workspace, exclude_workspace
from humeval.analysis.workspace import Workspace
from humeval.errors import DataError
from humeval.hashing import sha256_file
from humeval.judgements import write_judgements
from humeval.pipeline import StageOutput
from humeval.rng import child_seeds
from humeval.simulate.dummy import DUMMY_KINDS, dummy_judgements, read_lists
from humeval.study import Study

__all__ = ["dry_run_dir", "dry_run_stage", "dry_run_workspace"]


def dry_run_dir(study: Study, kind: str) -> Path:
    """Where the dummy run of ``kind`` writes (``results/dry-run/<kind>/``)."""
    return study.results_dir / "dry-run" / kind


def dry_run_workspace(study: Study, kind: str) -> Workspace:
    return Workspace(dry_run_dir(study, kind), dry_run=kind)


def _tasks(study: Study) -> list[dict]:
    path = study.lists_dir / "tasks.jsonl"
    if not path.is_file():
        raise DataError(f"{path}: no tasks yet; run `humeval run` (sample and design) first")
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def dry_run_stage(study: Study) -> StageOutput:
    """Dummy judgements of each kind, then collate -> exclude -> analyze -> report for each."""
    from humeval.report.stage import report_workspace

    protocol = study.protocol
    lists = read_lists(study.lists_dir / "lists.jsonl")
    tasks = _tasks(study)
    protocol_sha = sha256_file(study.protocol_file)
    outputs: list[Path] = []
    summary: dict[str, dict] = {}
    for kind, seed in zip(DUMMY_KINDS, child_seeds(protocol.study.seed, len(DUMMY_KINDS)), strict=True):
        ws = dry_run_workspace(study, kind)
        frame = dummy_judgements(lists, protocol, kind, seed)
        outputs.append(write_judgements(ws.judgements, frame))
        collation, paths = collate_workspace(ws, protocol, tasks, lists)
        outputs += paths
        counts, paths = exclude_workspace(ws, protocol, lists)
        outputs += paths
        entry = {"seed": seed, "judgements": len(frame), "participants": int(frame["participant_id"].nunique()),
                 "complete": collation.complete, "participants_excluded": counts["participants_excluded"]}
        try:
            results, paths = analyze_workspace(ws, protocol, protocol_sha)
        except DataError as exc:  # e.g. every dummy participant excluded: the rehearsal found a problem
            entry["analysis_error"] = str(exc)
            summary[kind] = entry
            continue
        outputs += paths
        outputs += report_workspace(ws, study, results)
        entry["signature"] = results["signature"]
        summary[kind] = entry
    return StageOutput(outputs=outputs, seed=protocol.study.seed, parameters={"kinds": list(DUMMY_KINDS)},
                       summary=summary)
