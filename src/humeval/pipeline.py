"""The pipeline: which stage runs, the lock check, input hashes and the logbook entry, for every stage.

Stage modules only transform: a stage function takes a :class:`~humeval.study.Study`
(and keyword options) and returns a :class:`~humeval.stage.StageOutput`. Everything
around it is here, in one place:

* :data:`STAGES`: the registered stages with the files each reads and what it needs of the
  lock (``if-locked``: a locked study must be unchanged; ``required``: the study must be
  locked, e.g. ``exclude`` and ``analyze`` run only a preregistered plan).
* :func:`require_lock`: the one lock gate. :func:`run_stage` and every collection entry
  point (:func:`prepare_collection`, used by ``humeval serve``, :func:`humeval.serve` and
  rehearsals) call it, so a locked study whose protocol or inputs changed is refused by
  all of them alike, and collection for an unlocked study needs an explicit, logged
  ``unlocked=True`` (``--unlocked``).
* :func:`record_run`: the one writer of a stage's logbook entry (start, end, seed, input
  and output hashes, parameters, summary, outcome, signature), used by :func:`run_stage`,
  collection, rehearsals and post hoc analyses.
* :func:`back_half`: collate -> exclude -> analyze -> report on one results folder, as
  the registered stages do (dry runs and rehearsals push their judgements through it).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from humeval import logbook
from humeval.errors import HumevalError, ProtocolError, did_you_mean
from humeval.protocol.lock import Lock, check_lock
from humeval.protocol.signature import signature
from humeval.stage import StageOutput
from humeval.study import Study, StudyLike, as_study

if TYPE_CHECKING:
    from humeval.analysis.workspace import Workspace
    from humeval.design.tasks import ParticipantList, Task

__all__ = [
    "PRE_COLLECTION",
    "STAGES",
    "Stage",
    "StageOutput",
    "StageResult",
    "back_half",
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
    """A pipeline stage: its function (``module:function``), the files it reads besides the
    protocol, and what it needs of the lock (``required_for``: the preregistered part it runs)."""

    name: str
    function: str
    inputs: Callable[[Study], list[Path]]
    description: str
    lock: LockNeed = "if-locked"
    required_for: str = ""

    def load(self) -> Callable[..., StageOutput]:
        module, func = self.function.split(":")
        return getattr(importlib.import_module(module), func)


@dataclass(frozen=True)
class StageResult:
    """The outcome of :func:`run_stage`."""

    stage: str
    skipped: bool
    outputs: list[str]
    summary: dict[str, Any]
    signature: str


def _sample_inputs(study: Study) -> list[Path]:
    """The data files, and the human scores imported between phases (when there are any)."""
    from humeval.sampling.stage import scores_file

    scores = scores_file(study)
    return [*study.data_files(), *([scores] if scores is not None else [])]


def _results(*names: str) -> Callable[[Study], list[Path]]:
    return lambda s: [s.results_dir / n for n in names]


def _report_inputs(study: Study) -> list[Path]:
    """What the report shows: the results, exclusion and collation, and every post hoc analysis (a new or
    re-run one makes the report stale, so ``humeval report`` rebuilds it)."""
    from humeval.analysis.workspace import Workspace

    posthoc = sorted(Workspace(study.results_dir).posthoc_dir.glob("*/results.json"))
    return [*_results("results.json", "exclusion.json", "collation.json")(study), *posthoc]


def _import_inputs(study: Study) -> list[Path]:
    from humeval.platforms.keys import study_key_file

    return [study.tasks_file, study_key_file(study)]


STAGES: dict[str, Stage] = {
    s.name: s
    for s in (
        Stage("sample", "humeval.sampling.stage:sample_stage", _sample_inputs, "select the items to evaluate"),
        Stage("design", "humeval.design.stage:design_stage", lambda s: [*s.data_files(), s.items_file],
              "build participant lists"),
        Stage("dry-run", "humeval.rehearsal.dry_run:dry_run_stage", lambda s: [s.tasks_file, s.lists_file],
              "dummy responses for a rehearsal"),
        Stage("export", "humeval.store.export:export_stage", lambda s: [s.tasks_file],
              "the store's judgements as results/sources/store.jsonl; rebuild results/judgements.jsonl"),
        Stage("export-batch", "humeval.platforms.imports:batch_stage", lambda s: [*s.data_files(), s.tasks_file],
              "every task as a batch CSV with opaque row keys (MTurk history, spreadsheets)"),
        Stage("import", "humeval.platforms.imports:import_stage", _import_inputs,
              "a platform's result file as results/sources/<platform>-<sha8>.jsonl; rebuild results/judgements.jsonl"),
        Stage("judge", "humeval.judging.stage:judge_stage", lambda s: [*s.data_files(), *s.prompt_files()],
              "ask the LLM judges (data.judges with `llm`); write their files"),
        Stage("collate", "humeval.analysis.stages:collate_stage",
              lambda s: [s.results_dir / "judgements.jsonl", s.tasks_file, s.lists_file],
              "check every task has its valid judgements; write a re-run file"),
        Stage("exclude", "humeval.analysis.stages:exclude_stage",
              lambda s: [s.results_dir / "judgements.jsonl", s.lists_file],
              "apply the preregistered exclusion rules", lock="required", required_for="exclusion"),
        Stage("analyze", "humeval.analysis.stages:analyze_stage",
              lambda s: [*_results("judgements.jsonl", "excluded.jsonl")(s), s.tasks_file, *s.judge_files()],
              "run the preregistered analysis plan", lock="required", required_for="analysis"),
        Stage("report", "humeval.report.stage:report_stage", _report_inputs,
              "HTML/Markdown report, figures and HEDS datasheet"),
    )
}
#: the stages ``humeval run`` runs, in order
PRE_COLLECTION = ["sample", "design"]


# --------------------------------------------------------------------------- the lock gate


def require_lock(study: Study, command: str, *, required: bool = False, what: str = "",
                 unlocked: bool = False) -> Lock | None:
    """The one lock check of every stage and collection entry point.

    Refuses (:class:`ProtocolError`) a locked study whose protocol or inputs changed,
    naming the file, the changed sections and both hashes. With ``required``, refuses an
    unlocked study too unless ``unlocked`` (an explicit override the caller logs).
    Returns the lock (None for an unlocked study).
    """
    lock = check_lock(study)
    if lock is None and required and not unlocked:
        raise ProtocolError(
            f"{study.protocol_file}: `humeval {command}` {what or 'needs a locked study'}, but the study is not "
            f"locked. Lock it first with `humeval lock {study.root}` (before any response is seen)"
        )
    return lock


# --------------------------------------------------------------------------- the logbook entry


@dataclass
class Run:
    """What a stage run records; :func:`record_run` writes it when the run ends."""

    entry: dict[str, Any]

    def finish(self, study: Study, outputs: list[Path], *, summary: dict[str, Any] | None = None,
               parameters: dict[str, Any] | None = None, seed: int | None = None, signature: str | None = None) -> None:
        self.entry["outputs"] = study.hashes(outputs)
        if summary is not None:
            self.entry["summary"] = summary
        if parameters is not None:
            self.entry["parameters"] = parameters
        if seed is not None:
            self.entry["seed"] = seed
        if signature is not None:
            self.entry["signature"] = signature


@contextmanager
def record_run(study: Study, stage: str, *, inputs: list[dict[str, str]], seed: int | None = None,
               **fields: Any) -> Iterator[Run]:
    """Write one logbook entry for a stage run: ``outcome: ok`` when the block ends, ``error`` (with the
    message) when it raises. ``fields`` (parameters, options, ...) are recorded as given."""
    run = Run({"stage": stage, "start": logbook.now(), "seed": seed, "inputs": inputs,
               **{k: v for k, v in fields.items() if v is not None}})
    try:
        yield run
    except BaseException as exc:
        message = str(exc) if isinstance(exc, HumevalError) else f"{type(exc).__name__}: {exc}"
        logbook.append(study, run.entry | {"end": logbook.now(), "outcome": "error", "error": message})
        raise
    logbook.append(study, run.entry | {"end": logbook.now(), "outcome": "ok"})


# --------------------------------------------------------------------------- stages


def _unchanged(study: Study, name: str, inputs: list[dict[str, str]], options: dict[str, Any]) -> dict[str, Any] | None:
    """The last successful run of ``name`` if its inputs, options and outputs are still as recorded."""
    last = next((e for e in reversed(logbook.read(study)) if e.get("stage") == name), None)
    if last is None or last.get("outcome") != "ok" or last.get("inputs") != inputs:
        return None
    if last.get("options", {}) != _logged(options):
        return None
    outputs = [study.root / o["path"] for o in last.get("outputs", [])]
    return last if study.hashes(outputs) == last["outputs"] else None


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
        return StageResult(name, True, [o["path"] for o in last["outputs"]], last.get("summary", {}), last["signature"])
    with record_run(study, name, inputs=inputs, seed=protocol.study.seed, options=_logged(options) or None) as rec:
        out = stage.load()(study, **options)
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


# --------------------------------------------------------------------------- collection


def _seeding_progress(say: Callable[[str], None]) -> Callable[[str, int, int], None]:
    """Seeding progress as lines: one per step every 10 % of its work (and at its end), with the time."""
    start, shown = time.monotonic(), {}

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


# --------------------------------------------------------------------------- the back half of a results folder


def back_half(ws: Workspace, study: Study, tasks: list[Task], lists: list[ParticipantList]) -> tuple[dict[str, Any], list[Path]]:
    """collate -> exclude -> analyze -> report on ``ws`` (a dry run or a rehearsal), as the real stages do.

    Returns a summary (``complete``, ``participants_excluded``, and ``signature``, or
    ``analysis_error`` when the analysis refused, e.g. every participant excluded: a
    rehearsal that found a problem in the design) and the files written.
    """
    from humeval.analysis.stages import (
        analyze_workspace,
        collate_workspace,
        exclude_workspace,
        plan_judges,
        platform_outputs,
        workspace_key_file,
    )
    from humeval.errors import DataError
    from humeval.hashing import sha256_file
    from humeval.report.stage import report_workspace

    protocol = study.protocol
    collation, paths = collate_workspace(ws, protocol, tasks, lists, platform_outputs(study),
                                         key_path=workspace_key_file(study, ws))
    counts, written = exclude_workspace(ws, protocol, lists)
    paths += written
    summary: dict[str, Any] = {"complete": collation.complete, "participants_excluded": counts["participants_excluded"]}
    try:
        results, written = analyze_workspace(ws, protocol, sha256_file(study.protocol_file), tasks, plan_judges(study))
    except DataError as exc:
        summary["analysis_error"] = str(exc)
        return summary, paths
    paths += written
    paths += report_workspace(ws, study, results)
    summary["signature"] = results.signature
    return summary, paths
