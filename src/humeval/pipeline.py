"""The pipeline: which stage runs, the lock check, input hashes and the logbook entry, for every stage.

Stage modules (:mod:`humeval.stages`) only transform: a stage function takes a
:class:`~humeval.study.StudyFolder` (and keyword options) and returns a :class:`~humeval.stage.StageOutput`.
Everything around it is here, in one place:

* :data:`STAGES`: the registered stages with the files each reads and what it needs of the
  lock (``if-locked``: a locked study must be unchanged; ``required``: the study must be
  locked, e.g. ``exclude`` and ``analyze`` run only a preregistered plan).
* :func:`require_lock` (:mod:`humeval.lock`): the one lock gate. :func:`run_stage` and every collection entry
  point (:func:`prepare_collection`, used by ``humeval serve``, :func:`humeval.serve` and
  rehearsals) call it, so a locked study whose protocol or inputs changed is refused by
  all of them alike, and collection for an unlocked study needs an explicit, logged
  ``unlocked=True`` (``--unlocked``).
* :func:`record_run` (:mod:`humeval.logbook`): the one writer of a stage's logbook entry (start, end, seed, input
  and output hashes, parameters, summary, outcome, signature), used by :func:`run_stage`,
  collection, rehearsals and post hoc analyses.
* :func:`back_half` (:mod:`humeval.stages.back_half`): collate -> exclude -> analyze -> report on one
  results folder, as the registered stages do, with the judgements read once (dry runs and rehearsals push
  their judgements through it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from humeval import logbook
from humeval.analysis.workspace import study_workspace
from humeval.errors import HumevalError, PlatformError, ProtocolError, StoreError, did_you_mean
from humeval.hashing import sha256_file
from humeval.lock import require_lock
from humeval.logbook import record_run
from humeval.protocol.signature import signature
from humeval.stage import StageOutput
from humeval.stages.analyze import analyze_stage
from humeval.stages.back_half import back_half
from humeval.stages.collate import collate_stage
from humeval.stages.design import design_stage
from humeval.stages.dry_run import dry_run_stage
from humeval.stages.exclude import exclude_stage
from humeval.stages.export import export_stage
from humeval.stages.export_batch import batch_stage
from humeval.stages.imports import IMPORT_SOURCES, import_stage
from humeval.stages.judge import judge_stage
from humeval.stages.report import report_stage
from humeval.stages.sample import sample_stage, scores_file
from humeval.study import StudyFolder, StudyLike, as_study

__all__ = [
    "PRE_COLLECTION",
    "STAGES",
    "Stage",
    "StageOutput",
    "StageResult",
    "back_half",
    "export_batch",
    "export_judgements",
    "export_mqm",
    "import_judgements",
    "judge",
    "prepare_collection",
    "record_run",
    "require_lock",
    "run",
    "run_stage",
]

LockNeed = Literal["if-locked", "required"]


@dataclass(frozen=True)
class Stage:
    """A pipeline stage: its function (in :mod:`humeval.stages`), the files it reads besides the
    protocol, and what it needs of the lock (``required_for``: the preregistered part it runs)."""

    name: str
    function: Callable[..., StageOutput]
    inputs: Callable[[StudyFolder], list[Path]]
    description: str
    lock: LockNeed = "if-locked"
    required_for: str = ""


@dataclass(frozen=True)
class StageResult:
    """The outcome of :func:`run_stage`."""

    stage: str
    skipped: bool
    outputs: list[str]
    summary: dict[str, Any]
    signature: str


def _sample_inputs(study: StudyFolder) -> list[Path]:
    """The data files, and the human scores imported between phases (when there are any)."""

    scores = scores_file(study)
    return [*study.data_files(), *([scores] if scores is not None else [])]


def _results(*names: str) -> Callable[[StudyFolder], list[Path]]:
    return lambda s: [s.results_dir / n for n in names]


def _report_inputs(study: StudyFolder) -> list[Path]:
    """What the report shows: the results, exclusion and collation, and every post hoc analysis (a new or
    re-run one makes the report stale, so ``humeval report`` rebuilds it)."""
    posthoc = sorted(study_workspace(study).posthoc_dir.glob("*/results.json"))
    return [*_results("results.json", "exclusion.json", "collation.json")(study), *posthoc]


def _import_inputs(study: StudyFolder) -> list[Path]:
    from humeval.platforms.keys import study_key_file

    return [study.tasks_file, study_key_file(study)]


STAGES: dict[str, Stage] = {
    s.name: s
    for s in (
        Stage("sample", sample_stage, _sample_inputs, "select the items to evaluate"),
        Stage("design", design_stage, lambda s: [*s.data_files(), s.items_file],
              "build participant lists"),
        Stage("dry-run", dry_run_stage, lambda s: [s.tasks_file, s.lists_file],
              "dummy responses for a rehearsal"),
        Stage("export", export_stage, lambda s: [s.tasks_file],
              "the store's judgements as results/sources/store.jsonl; rebuild results/judgements.jsonl"),
        Stage("export-batch", batch_stage, lambda s: [*s.data_files(), s.tasks_file],
              "every task as a batch CSV with opaque row keys (MTurk history, spreadsheets)"),
        Stage("import", import_stage, _import_inputs,
              "a platform's result file as results/sources/<platform>-<sha8>.jsonl; rebuild results/judgements.jsonl"),
        Stage("judge", judge_stage, lambda s: [*s.data_files(), *s.prompt_files()],
              "ask the LLM judges (data.judges with `llm`); write their files"),
        Stage("collate", collate_stage,
              lambda s: [s.results_dir / "judgements.jsonl", s.tasks_file, s.lists_file],
              "check every task has its valid judgements; write a re-run file"),
        Stage("exclude", exclude_stage,
              lambda s: [s.results_dir / "judgements.jsonl", s.lists_file],
              "apply the preregistered exclusion rules", lock="required", required_for="exclusion"),
        Stage("analyze", analyze_stage,
              lambda s: [*_results("judgements.jsonl", "excluded.jsonl")(s), s.tasks_file, *s.judge_files()],
              "run the preregistered analysis plan", lock="required", required_for="analysis"),
        Stage("report", report_stage, _report_inputs,
              "HTML/Markdown report, figures and HEDS datasheet"),
    )
}
#: the stages ``humeval run`` runs, in order
PRE_COLLECTION = ["sample", "design"]


# --------------------------------------------------------------------------- stages


def _unchanged(study: StudyFolder, name: str, inputs: list[dict[str, str]], options: dict[str, Any]) -> logbook.Entry | None:
    """The last successful run of ``name`` if its inputs, options and outputs are still as recorded."""
    last = next((e for e in reversed(logbook.entries(study)) if e.stage == name), None)
    if last is None or not last.ok or last.inputs != inputs:
        return None
    if (last.options or {}) != _logged(options):
        return None
    recorded = last.outputs or []
    return last if study.hashes([study.root / o["path"] for o in recorded]) == recorded else None


def _logged(options: dict[str, Any]) -> dict[str, Any]:
    """Options as the logbook records them: database URLs without their secrets."""
    if not any(isinstance(v, str) and "://" in v for v in options.values()):
        return options
    from humeval.store.engine import redact_url

    return {k: redact_url(v) if isinstance(v, str) else v for k, v in options.items()}


def run_stage(study: StudyLike, name: str, *, force: bool = False, options: dict[str, Any] | None = None) -> StageResult:
    """Run one stage (unless nothing changed since its last successful run) and log it.

    ``options`` are keyword arguments of the stage function; they are recorded in the
    logbook and a change of options re-runs the stage.
    """
    study = as_study(study)
    options = dict(options or {})
    if name not in STAGES:
        raise HumevalError(f"unknown stage '{name}'. {did_you_mean(name, STAGES)}")
    stage = STAGES[name]
    protocol = study.protocol
    require_lock(study, name, required=stage.lock == "required",
                 what=f"runs the preregistered {stage.required_for} plan" if stage.required_for else "")
    inputs = study.hashes([study.protocol_file, *stage.inputs(study)])
    if not force and (last := _unchanged(study, name, inputs, options)) is not None:
        return StageResult(name, True, [o["path"] for o in last.outputs or []], last.summary or {}, last.signature or "")
    with record_run(study, name, inputs=inputs, seed=protocol.study.seed, options=_logged(options) or None) as rec:
        out = stage.function(study, **options)
        seed = out.seed if out.seed is not None else protocol.study.seed
        sig = signature(inputs[0]["sha256"], seed)
        rec.finish(study, out.outputs, summary=out.summary, parameters=out.parameters, seed=seed, signature=sig)
    return StageResult(name, False, [o["path"] for o in rec.entry["outputs"]], out.summary, sig)


def run(study: StudyLike, *, force: bool = False, progress: Callable[[str], None] | None = None) -> list[StageResult]:
    """Run the pre-collection stages in order (``humeval run``)."""
    study = as_study(study)
    results = []
    for name in PRE_COLLECTION:
        if progress:
            progress(name)
        results.append(run_stage(study, name, force=force))
    return results


def judge(study: StudyLike, *, judges: list[str] | None = None, force: bool = False) -> StageResult:
    """Ask the study's LLM judges (``data.judges`` with ``llm``; all, or those named) and log the run
    (``humeval judge``). Answers are cached, so a re-run or a resumed run asks only what is not answered yet."""
    study = as_study(study)
    return run_stage(study, "judge", force=force, options={"judges": judges} if judges else None)


def export_judgements(study: StudyLike, db: str | None = None, *, as_study_data: bool = False) -> StageResult:
    """Export the store's judgements into ``results/judgements.jsonl`` (a logged pipeline stage).

    Always runs (the store changes while collection goes on); ``db`` is a store URL or
    file (default: the study's ``study.db``). A SQLite file other than ``study.db`` is taken as the
    study's data only with ``as_study_data`` (recorded); :func:`pilot` reads a pilot's store apart.
    """
    study = as_study(study)
    options: dict[str, Any] = {"db": db} if db else {}
    if as_study_data:
        options["as_study_data"] = True
    return run_stage(study, "export", force=True, options=options)


def pilot(study: StudyLike, db: str | None = None) -> StageResult:
    """A pilot's store read apart from the study: its judgements into ``results/pilot/judgements.jsonl``, then
    collate, exclude, analyze and report there, the report under a PILOT banner (a logged run, ``pilot``).

    ``db``: the pilot's store, a SQLite file or URL (default ``pilot.db`` in the study folder, else in the folder this
    runs in, where ``serve --db pilot.db`` writes it); never the study's
    ``study.db``. Nothing of the pilot reaches ``results/`` itself: ``humeval export --db FILE --as-study`` is the
    explicit, logged step that would make it the study's data.
    """
    from humeval.analysis.workspace import Workspace
    from humeval.stages.export import other_sqlite_store, write_store_judgements
    from humeval.store.engine import is_sqlite, redact_url

    study = as_study(study)
    if not db:  # `serve --db pilot.db` names a file in the folder it runs in, which is often the study's
        found = [p for p in (study.root / "pilot.db", Path("pilot.db")) if p.is_file()]
        db = str(found[0] if found else study.root / "pilot.db")
    if "://" not in db and not Path(db).is_file():
        raise StoreError(f"{db}: no pilot store; serve the pilot on it first (`humeval serve {study.root} --db {db}`), "
                         "or name its file with --db (a --db file is found from the folder a command runs in)")
    if ("://" not in db or is_sqlite(db)) and other_sqlite_store(study, db) is None:
        raise StoreError(f"--db {db}: the study's own store; a pilot runs on a store of its own (`humeval serve "
                         f"{study.root} --db pilot.db`)")
    ws = Workspace(study.results_dir / "pilot", dry_run="pilot")
    ws.root.mkdir(parents=True, exist_ok=True)
    inputs = study.hashes([study.protocol_file, study.lists_file, study.tasks_file])
    with record_run(study, "pilot", inputs=inputs, seed=study.protocol.study.seed,
                    parameters={"db": redact_url(db) if "://" in db else str(db)}) as run:
        rows = write_store_judgements(study, ws.judgements, db)
        summary, paths = back_half(ws, study, study.read_tasks(), study.read_lists())
        summary = {"judgements": rows, **summary}
        run.finish(study, [ws.judgements, *paths], summary=summary, signature=summary.get("signature"))
    return StageResult("pilot", False, [study.relative(p) for p in [ws.judgements, *paths]], summary,
                       summary.get("signature", ""))


def export_batch(study: StudyLike, output: str | Path | None = None) -> StageResult:
    """Write the batch CSV of every task (default ``results/mturk_batch.csv``); a logged stage."""
    study = as_study(study)
    return run_stage(study, "export-batch", options={"output": str(output)} if output else {})


def export_mqm(study: StudyLike, output: str | Path | None = None, *, criterion: str | None = None,
               documents: str | Path | None = None) -> Path:
    """The judgements of an ``mqm`` criterion in ``results/judgements.jsonl`` (after ``humeval import mqm`` or
    ``humeval export``) as a WMT MQM TSV (:func:`humeval.tasks.mqm.mqm_tsv`), written to ``output`` (default
    ``results/<criterion>.tsv``); ``humeval export --format mqm-tsv``.

    ``criterion``: the ``mqm`` criterion (default: the study's only one); ``documents``: a WMT MQM TSV whose
    ``doc`` and ``doc_id`` columns, by ``seg_id``, are written back (a study keeps no documents; without it those
    cells are empty). Reading the file written with :func:`humeval.formats.mqm.read_mqm` gives the judgements
    read."""
    from humeval.formats.mqm import mqm_documents
    from humeval.judgements import read_judgements
    from humeval.tasks.mqm import MQM, mqm_tsv

    study = as_study(study)
    names = [c.name for c in study.protocol.criteria if isinstance(c, MQM)]
    if criterion is None and len(names) != 1:
        raise ProtocolError(f"{study.protocol_file}: criteria: {len(names)} criteria of type mqm "
                            f"({', '.join(names) or 'none'}); name the one to export (--criterion)")
    name = criterion if criterion is not None else names[0]
    if name not in names:
        raise ProtocolError(f"--criterion: {name!r} is not an mqm criterion of the study. "
                            f"{did_you_mean(name, names)}")
    source = study.results_dir / "judgements.jsonl"
    if not source.is_file():
        raise StoreError(f"{source}: no judgements yet; import a WMT MQM TSV (`humeval import {study.root} mqm "
                         f"FILE`) or export the store (`humeval export {study.root}`) first")
    docs = mqm_documents(documents) if documents is not None else None
    text = mqm_tsv(read_judgements(source), study.outputs().texts, criterion=name, documents=docs)
    path = Path(output) if output is not None else study.results_dir / f"{name}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def import_judgements(study: StudyLike, platform: str, path: str | Path, *, force: bool = False) -> StageResult:
    """Import a file downloaded from ``platform``, or a judgement file of another tool (the names of
    :data:`humeval.stages.imports.IMPORT_SOURCES`); a logged stage."""
    study = as_study(study)
    platform = IMPORT_SOURCES.canonical(platform)
    path = Path(path)
    if not path.is_file():
        raise PlatformError(f"{path}: no such file (the {platform} file to import)")
    options = {"platform": platform, "file": str(path.resolve()), "sha256": sha256_file(path)}
    return run_stage(study, "import", force=force, options=options)


# --------------------------------------------------------------------------- collection


def _seeding_progress(say: Callable[[str], None]) -> Callable[[str, int, int], None]:
    """Seeding progress as lines: one per step every 10 % of its work (and at its end), with the time."""
    start = time.monotonic()
    shown: dict[str, int] = {}

    def report(what: str, done: int, total: int) -> None:
        tenth = done * 10 // max(total, 1)
        if tenth > shown.get(what, -1):
            shown[what] = tenth
            say(f"seeding the store: {what} {done:,} / {total:,} ({100 * done // max(total, 1)} %), "
                f"{time.monotonic() - start:.1f} s")

    return report


def prepare_collection(study: StudyLike, *, db: str | None = None, unlocked: bool = False,
                       parameters: dict[str, Any] | None = None,
                       progress: Callable[[str], None] | None = None) -> bool:
    """Everything before a store collects: the lock gate, the pre-collection stages, the store.

    Refuses a locked study whose protocol or inputs changed, and an unlocked study unless
    ``unlocked`` (the override is written to the logbook). Runs ``sample`` and ``design``
    when the participant lists are missing, migrates and seeds the store (``db``: URL or
    file; default ``study.db``), adds the re-run lists ``collate`` dealt (once per file), and
    logs a ``serve`` entry with the hashes of what the store was seeded from. Returns whether the store was seeded now.
    """
    study = as_study(study)
    from humeval.platforms.keys import rerun_lists_file, study_key_file
    from humeval.store import Store
    from humeval.store.engine import redact_url

    if require_lock(study, "serve", required=True, unlocked=unlocked,
                    what="collects responses for the preregistered study") is None:
        from humeval.validate import (
            validate_study,  # a locked study passed these checks when it was locked
        )

        problems = validate_study(study.root)
        if problems:
            raise ProtocolError(f"{study.root}: cannot collect: {len(problems)} problem(s):\n  " + "\n  ".join(problems),
                                problems)
    if not study.lists_file.is_file():
        if progress:
            progress("no participant lists yet: running the pre-collection stages (humeval run)")
        run(study)
    rerun = rerun_lists_file(study_key_file(study))
    texts = [study.texts_file] if study.texts_file.is_file() else []
    inputs = study.hashes([study.protocol_file, study.tasks_file, study.lists_file, *texts, *study.data_files(),
                           *([rerun] if rerun.is_file() else [])])
    store = Store.open(study, db)
    fields = {"parameters": (parameters or {}) | {"store": redact_url(store.url)}, "unlocked": True if unlocked else None}
    try:
        with record_run(study, "serve", inputs=inputs, seed=study.protocol.study.seed, **fields) as rec:
            seeded = store.prepare(_seeding_progress(progress) if progress else None)
            added = store.add_rerun(rerun)
            if added and progress:
                progress(f"added {added} re-run list(s) from {rerun}")
            rec.finish(study, [], summary={"seeded": seeded, "rerun_lists": added})
    finally:
        store.close()
    return seeded
