"""The ``export-batch`` stage: every task of the design as a batch CSV with opaque row keys (MTurk history,
spreadsheets); ``import`` reads the filled-in batch back."""

from __future__ import annotations

import random
from pathlib import Path

from humeval.stage import StageOutput
from humeval.study import StudyFolder

__all__ = ["batch_stage"]


def batch_stage(study: StudyFolder, output: str = "") -> StageOutput:
    """The ``export-batch`` stage: every task of the design as a batch CSV with opaque row keys."""
    from humeval.platforms.keys import study_key_file
    from humeval.platforms.mturk import write_batch

    tasks = study.read_tasks()
    target = Path(output) if output else study.results_dir / "mturk_batch.csv"
    keys = study_key_file(study)
    seed = study.protocol.study.seed
    path = write_batch(target, [("", t) for t in tasks], study.outputs().texts, keys,
                       batch=study.relative(target), seed=random.Random(seed))
    return StageOutput(outputs=[path, keys], seed=seed, summary={"tasks": len(tasks)})
