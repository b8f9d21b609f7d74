"""The ``import`` stage: judgements (or submission statuses) from a platform's file.

It reads a file downloaded from a platform, or another tool's judgement file: the sources are the
registry :data:`IMPORT_SOURCES` (its table: docs/data-formats.md). MTurk's batch and the same batch
filled in as a sheet share one reader (rows carry opaque keys). Prolific participants answer on the
study's own server, so their judgements come from ``humeval export``; a Prolific import keeps the
submission statuses (``results/platforms/prolific-<sha8>.jsonl``) and counts the submitters without
judgements. Each judgement of another tool's file (:mod:`humeval.formats.external`) joins the
design's task that shows its item and systems and asks its criterion (others are skipped and counted).

Judgements become one source, ``results/sources/<platform>-<sha8 of the file>.jsonl``,
and ``results/judgements.jsonl`` is rebuilt as the union of the sources, so importing a
file twice changes nothing and collate, exclude and analyze see the imported judgements.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from humeval.errors import PlatformError
from humeval.formats.external import JUDGEMENT_FORMATS
from humeval.hashing import sha256_file
from humeval.registry import Registry
from humeval.stage import StageOutput
from humeval.study import StudyFolder
from humeval.tasks import TASK_TYPES

__all__ = ["IMPORT_SOURCES", "import_stage"]

#: what a source's file gives: the judgements, the skipped ones counted by reason, up to 20 examples
Read = tuple[Any, Counter[str], list[str]]
#: ``(study, file, source, sha256) -> StageOutput``: how the import stage takes a file from a source
Importer = Callable[[StudyFolder, Path, str, str], StageOutput]


def import_stage(study: StudyFolder, platform: str, file: str, sha256: str) -> StageOutput:
    """The ``import`` stage: ``file`` (whose content hash is ``sha256``) from ``platform`` (an :data:`IMPORT_SOURCES`
    name)."""
    importer = IMPORT_SOURCES.get(platform)
    path = Path(file)
    if not path.is_file():
        raise PlatformError(f"{path}: no such file (import {platform})")
    if sha256_file(path) != sha256:
        raise PlatformError(f"{path}: the file changed while it was being imported; import it again")
    return importer(study, path, platform, sha256)


def _judgements(read: Callable[[StudyFolder, Path, list[Any]], Read], study: StudyFolder, path: Path, platform: str,
                sha256: str) -> StageOutput:
    """Judgements of a file read by ``read`` become the source ``<platform>-<sha8>``; the judgements table is rebuilt."""
    from humeval.judgements.sources import union_sources, write_source

    frame, skipped, examples = read(study, path, study.read_tasks())
    if frame.empty:
        raise PlatformError(
            f"{path}: no judgement could be read ({sum(skipped.values())} answers skipped"
            + (f", e.g. {examples[0]}" if examples else "") + ")"
        )
    source = write_source(study.results_dir, f"{platform}-{sha256[:8]}", frame)
    table, union = union_sources(study.results_dir)
    summary = {"imported": len(frame), "skipped": sum(skipped.values()), "skipped_reasons": dict(skipped),
               "skipped_examples": examples, **union}
    return StageOutput(outputs=[source, table], parameters={"platform": platform, "file": str(path), "sha256": sha256},
                       summary=summary)


def _batch(study: StudyFolder, path: Path, tasks: list[Any]) -> Read:
    """A batch CSV written by ``export-batch`` (or ``collate``'s re-run batch), from MTurk or filled in as a sheet."""
    from humeval.platforms.keys import read_keys, study_key_file
    from humeval.platforms.mturk import read_results

    types = {c.name: c.type for c in study.protocol.criteria}
    return read_results(path, read_keys(study_key_file(study)), {t.task_id: t for t in tasks}, types)


def _external(fmt: str, study: StudyFolder, path: Path, tasks: list[Any]) -> Read:
    """A judgement file of another tool, matched to the design's tasks (the criterion of the format's type)."""
    from humeval.formats.external import match_tasks, read_judgement_file

    criterion = ""
    wanted = JUDGEMENT_FORMATS.get(fmt).criterion_type
    if wanted is not None:
        wanted_type = TASK_TYPES.get(wanted)
        names = [c.name for c in study.protocol.criteria if c.task is wanted_type or fmt in c.task.receives]
        if len(names) != 1:
            kinds = " or ".join([wanted, *(e.name for e in TASK_TYPES.entries() if fmt in e.value.receives)])
            raise PlatformError(f"{path}: a {fmt} file holds {wanted} judgements; the protocol needs exactly one "
                                f"{kinds} criterion to receive them, it has {len(names)} ({', '.join(names) or 'none'})")
        criterion = names[0]
    frame = read_judgement_file(path, fmt, criterion=criterion)
    matched, skipped, examples = match_tasks(frame, tasks)
    skipped.update(frame.attrs.get("skipped", {}))
    return matched, skipped, examples


def _prolific(study: StudyFolder, path: Path, platform: str, sha256: str) -> StageOutput:
    """A Prolific submissions export: the statuses, and the submitters without judgements counted."""
    from humeval.files import write_jsonl
    from humeval.judgements import read_judgements
    from humeval.platforms.prolific import read_submissions

    rows = read_submissions(path)
    target = write_jsonl(study.results_dir / "platforms" / f"{platform}-{sha256[:8]}.jsonl", rows)
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


#: every source ``humeval import`` reads: the platforms' files, then the other tools' judgement formats
IMPORT_SOURCES: Registry[Importer] = Registry("platform or file format", "import", error=PlatformError)
IMPORT_SOURCES.add("mturk", partial(_judgements, _batch), summary="an MTurk batch results CSV of a batch written by "
                   "`export-batch` or a re-run batch written by `collate`")
IMPORT_SOURCES.add("files", partial(_judgements, _batch), summary="the same batch, filled in as a spreadsheet "
                   "(`participant_id`, `key`, one column per criterion)")
IMPORT_SOURCES.add("prolific", _prolific, summary="a Prolific submissions export: the submission statuses "
                   "(the judgements come from `humeval export`)")
for _fmt in JUDGEMENT_FORMATS.entries():
    IMPORT_SOURCES.add(_fmt.name, partial(_judgements, partial(_external, _fmt.name)), summary=_fmt.summary)
