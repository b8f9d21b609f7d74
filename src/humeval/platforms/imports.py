"""Platform stages: the batch export (``export-batch``) and the platform import (``import``).

``import`` reads a file downloaded from a platform:

* ``mturk``: an MTurk batch results CSV of a batch written by ``export-batch`` or a
  re-run batch written by ``collate`` (one reader for both: rows carry opaque keys);
* ``files``: the same batch, filled in as a spreadsheet (``participant_id``, ``key``,
  one column per criterion);
* ``prolific``: a Prolific submissions export. Prolific participants answer on the
  study's own server, so their judgements come from ``humeval export``; the import keeps
  the submission statuses (``results/platforms/prolific-<sha8>.jsonl``) and counts the
  submitters without judgements;
* ``fastchat``, ``mqm``, ``labelstudio``, ``argilla``, ``summeval``: a judgement file
  from another tool (:mod:`humeval.formats.external`); each judgement joins the design's task
  that shows its item and systems and asks its criterion (others are skipped and counted).

Judgements become one source, ``results/sources/<platform>-<sha8 of the file>.jsonl``,
and ``results/judgements.jsonl`` is rebuilt as the union of the sources, so importing a
file twice changes nothing and collate, exclude and analyze see the imported judgements.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

from humeval.errors import PlatformError, did_you_mean
from humeval.hashing import sha256_file
from humeval.pipeline import StageOutput, StageResult, run_stage
from humeval.platforms.keys import read_keys, study_key_file
from humeval.study import Study, StudyLike, as_study

__all__ = ["IMPORT_PLATFORMS", "batch_stage", "export_batch", "import_judgements", "import_stage"]

IMPORT_PLATFORMS = ("mturk", "files", "prolific", "fastchat", "mqm", "labelstudio", "argilla", "summeval")


def batch_stage(study: Study, output: str = "") -> StageOutput:
    """The ``export-batch`` stage: every task of the design as a batch CSV with opaque row keys."""
    from humeval.platforms.mturk import write_batch

    tasks = study.read_tasks()
    target = Path(output) if output else study.results_dir / "mturk_batch.csv"
    keys = study_key_file(study)
    seed = study.protocol.study.seed
    path = write_batch(target, [("", t) for t in tasks], study.outputs().texts, keys,
                       batch=study.relative(target), seed=random.Random(seed))
    return StageOutput(outputs=[path, keys], seed=seed, summary={"tasks": len(tasks)})


def export_batch(study: StudyLike, output: str | Path | None = None) -> StageResult:
    """Write the batch CSV of every task (default ``results/mturk_batch.csv``); a logged stage."""
    study = as_study(study)
    return run_stage(study, "export-batch", options={"output": str(output)} if output else {})


def import_stage(study: Study, platform: str, file: str, sha256: str) -> StageOutput:
    """The ``import`` stage: ``file`` (whose content hash is ``sha256``) from ``platform``."""
    path = Path(file)
    if not path.is_file():
        raise PlatformError(f"{path}: no such file (import {platform})")
    if sha256_file(path) != sha256:
        raise PlatformError(f"{path}: the file changed while it was being imported; import it again")
    name = f"{platform}-{sha256[:8]}"
    if platform == "prolific":
        return _prolific(study, path, name, sha256)
    from humeval.formats.external import JUDGEMENT_FORMATS
    from humeval.platforms.mturk import read_results
    from humeval.platforms.sources import union_sources, write_source

    tasks = {t.task_id: t for t in study.read_tasks()}
    types = {c.name: c.type for c in study.protocol.criteria}
    if platform in JUDGEMENT_FORMATS:
        frame, skipped, examples = _external(study, path, platform, list(tasks.values()))
    else:
        frame, skipped, examples = read_results(path, read_keys(study_key_file(study)), tasks, types)
    if frame.empty:
        raise PlatformError(
            f"{path}: no judgement could be read ({sum(skipped.values())} answers skipped"
            + (f", e.g. {examples[0]}" if examples else "") + ")"
        )
    source = write_source(study.results_dir, name, frame)
    table, union = union_sources(study.results_dir)
    summary = {"imported": len(frame), "skipped": sum(skipped.values()), "skipped_reasons": dict(skipped),
               "skipped_examples": examples, **union}
    return StageOutput(outputs=[source, table], parameters={"platform": platform, "file": str(path), "sha256": sha256},
                       summary=summary)


def _external(study: Study, path: Path, fmt: str, tasks: list[Any]) -> tuple[Any, Counter[str], list[str]]:
    """A judgement file of another tool, matched to the design's tasks (the criterion of the format's type)."""
    from humeval.formats.external import FORMAT_CRITERION_TYPE, match_tasks, read_judgement_file

    criterion = ""
    wanted = FORMAT_CRITERION_TYPE[fmt]
    if wanted is not None:
        names = [c.name for c in study.protocol.criteria if c.type == wanted]
        if len(names) != 1:
            raise PlatformError(f"{path}: a {fmt} file holds {wanted} judgements; the protocol needs exactly one "
                                f"{wanted} criterion to receive them, it has {len(names)} ({', '.join(names) or 'none'})")
        criterion = names[0]
    frame = read_judgement_file(path, fmt, criterion=criterion)
    matched, skipped, examples = match_tasks(frame, tasks)
    skipped.update(frame.attrs.get("skipped", {}))
    return matched, skipped, examples


def _prolific(study: Study, path: Path, name: str, sha256: str) -> StageOutput:
    from humeval.files import write_jsonl
    from humeval.judgements import read_judgements
    from humeval.platforms.prolific import read_submissions

    rows = read_submissions(path)
    target = write_jsonl(study.results_dir / "platforms" / f"{name}.jsonl", rows)
    judged: set[str] = set()
    if (study.results_dir / "judgements.jsonl").is_file():
        judged = set(read_judgements(study.results_dir / "judgements.jsonl")["participant_id"])
    statuses = Counter(r["status"] for r in rows)
    missing = sorted({r["participant_id"] for r in rows} - judged)
    times = sorted(r["time_taken"] for r in rows if r["time_taken"] is not None)
    summary: dict[str, Any] = {"submissions": len(rows), "statuses": dict(statuses),
                               "submitters_without_judgements": len(missing), "examples_without_judgements": missing[:10],
                               "median_seconds_taken": _median(times)}
    return StageOutput(outputs=[target], parameters={"platform": "prolific", "file": str(path), "sha256": sha256},
                       summary=summary)


def _median(values: list[float]) -> float | None:
    """The median of sorted ``values`` (None for none)."""
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def import_judgements(study: StudyLike, platform: str, path: str | Path, *, force: bool = False) -> StageResult:
    """Import a file downloaded from ``platform`` (``mturk``, ``files`` or ``prolific``), or a judgement file of
    another tool (``fastchat``, ``mqm``, ``labelstudio``, ``argilla``, ``summeval``); a logged stage."""
    study = as_study(study)
    if platform not in IMPORT_PLATFORMS:
        raise PlatformError(f"import: unknown platform '{platform}'. {did_you_mean(platform, IMPORT_PLATFORMS)}")
    path = Path(path)
    if not path.is_file():
        raise PlatformError(f"{path}: no such file (the {platform} file to import)")
    options = {"platform": platform, "file": str(path.resolve()), "sha256": sha256_file(path)}
    return run_stage(study, "import", force=force, options=options)
