"""The ``dry-run`` stage: dummy judgements of every kind for the locked design."""

from __future__ import annotations

from humeval.judgements import write_judgements
from humeval.pipeline import StageOutput
from humeval.rng import child_seeds
from humeval.simulate.dummy import DUMMY_KINDS, dummy_judgements, read_lists
from humeval.study import Study

__all__ = ["dry_run_dir", "dry_run_stage"]


def dry_run_dir(study: Study, kind: str):
    """Where the dummy run of ``kind`` writes (``results/dry-run/<kind>/``)."""
    return study.results_dir / "dry-run" / kind


def dry_run_stage(study: Study) -> StageOutput:
    """Write ``results/dry-run/<kind>/judgements.jsonl`` for random, static and normal responses."""
    protocol = study.protocol
    lists = read_lists(study.lists_dir / "lists.jsonl")
    outputs, summary = [], {}
    for kind, seed in zip(DUMMY_KINDS, child_seeds(protocol.study.seed, len(DUMMY_KINDS)), strict=True):
        frame = dummy_judgements(lists, protocol, kind, seed)
        outputs.append(write_judgements(dry_run_dir(study, kind) / "judgements.jsonl", frame))
        summary[kind] = {"judgements": len(frame), "participants": int(frame["participant_id"].nunique())}
    return StageOutput(outputs=outputs, seed=protocol.study.seed, parameters={"kinds": list(DUMMY_KINDS)}, summary=summary)
