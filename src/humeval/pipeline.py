"""Stages as plain functions with declared inputs and outputs; running them writes the logbook.

A stage function takes a :class:`~humeval.study.Study` (and keyword options, e.g.
``simulate_scores`` of ``sample``) and returns a :class:`StageOutput`.
:func:`run_stage` refuses to run on a locked study whose protocol or inputs changed,
skips a stage whose inputs, parameters and outputs are unchanged since its last
successful run, and appends one logbook line per run (also for a failed run).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from humeval import logbook
from humeval.errors import HumevalError, did_you_mean
from humeval.protocol.lock import check_lock
from humeval.protocol.signature import signature
from humeval.study import Study

__all__ = ["PRE_COLLECTION", "STAGES", "Stage", "StageOutput", "StageResult", "run", "run_stage"]


@dataclass(frozen=True)
class StageOutput:
    """What a stage function returns: the files it wrote and what to record about the run."""

    outputs: list[Path]
    seed: int | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Stage:
    """A pipeline stage: its function (``module:function``) and the files it reads besides the protocol."""

    name: str
    function: str
    inputs: Callable[[Study], list[Path]]
    description: str

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


def _items(study: Study) -> list[Path]:
    return [*study.data_files(), study.items_file]


def _lists(study: Study) -> list[Path]:
    return [study.lists_file]


def _import_inputs(study: Study) -> list[Path]:
    from humeval.platforms.keys import study_key_file

    return [study.tasks_file, study_key_file(study)]


STAGES: dict[str, Stage] = {
    s.name: s
    for s in (
        Stage("sample", "humeval.sampling.stage:sample_stage", _sample_inputs, "select the items to evaluate"),
        Stage("design", "humeval.design.stage:design_stage", _items, "build participant lists"),
        Stage("dry-run", "humeval.simulate.dry_run:dry_run_stage", _lists, "dummy responses for a rehearsal"),
        Stage("export", "humeval.store.export:export_stage", lambda s: [s.tasks_file],
              "the store's judgements as results/sources/store.jsonl; rebuild results/judgements.jsonl"),
        Stage("export-batch", "humeval.platforms.imports:batch_stage", lambda s: [*s.data_files(), s.tasks_file],
              "every task as a batch CSV with opaque row keys (MTurk history, spreadsheets)"),
        Stage("import", "humeval.platforms.imports:import_stage", _import_inputs,
              "a platform's result file as results/sources/<platform>-<sha8>.jsonl; rebuild results/judgements.jsonl"),
        Stage("collate", "humeval.analysis.stages:collate_stage",
              lambda s: [s.results_dir / "judgements.jsonl", s.tasks_file, s.lists_file],
              "check every task has its valid judgements; write a re-run file"),
        Stage("exclude", "humeval.analysis.stages:exclude_stage",
              lambda s: [s.results_dir / "judgements.jsonl", s.lists_file],
              "apply the preregistered exclusion rules"),
        Stage("analyze", "humeval.analysis.stages:analyze_stage",
              lambda s: [s.results_dir / "judgements.jsonl", s.results_dir / "excluded.jsonl"],
              "run the preregistered analysis plan"),
        Stage("report", "humeval.report.stage:report_stage",
              lambda s: [s.results_dir / "results.json", s.results_dir / "exclusion.json", s.results_dir / "collation.json"],
              "HTML/Markdown report, figures and HEDS datasheet"),
    )
}
#: the stages ``humeval run`` runs, in order
PRE_COLLECTION = ["sample", "design"]


def _unchanged(study: Study, name: str, inputs: list[dict[str, str]], options: dict[str, Any]) -> dict[str, Any] | None:
    """The last successful run of ``name`` if its inputs, options and outputs are still as recorded."""
    last = next((e for e in reversed(logbook.read(study)) if e.get("stage") == name), None)
    if last is None or last.get("outcome") != "ok" or last.get("inputs") != inputs:
        return None
    if last.get("options", {}) != options:
        return None
    outputs = [study.root / o["path"] for o in last.get("outputs", [])]
    return last if study.hashes(outputs) == last["outputs"] else None


def run_stage(study: Study, name: str, *, force: bool = False, options: dict[str, Any] | None = None) -> StageResult:
    """Run one stage (unless nothing changed since its last successful run) and log it.

    ``options`` are keyword arguments of the stage function; they are recorded in the
    logbook and a change of options re-runs the stage.
    """
    options = dict(options or {})
    if name not in STAGES:
        raise HumevalError(f"unknown stage '{name}'. {did_you_mean(name, STAGES)}")
    stage = STAGES[name]
    protocol = study.protocol
    check_lock(study)
    inputs = study.hashes([study.protocol_file, *stage.inputs(study)])
    protocol_sha = inputs[0]["sha256"]
    if not force and (last := _unchanged(study, name, inputs, options)) is not None:
        return StageResult(name, True, [o["path"] for o in last["outputs"]], last.get("summary", {}), last["signature"])
    started = logbook.now()
    entry: dict[str, Any] = {"stage": name, "start": started, "seed": protocol.study.seed, "inputs": inputs}
    if options:
        entry["options"] = options
    try:
        out = stage.load()(study, **options)
    except HumevalError as exc:
        logbook.append(study, entry | {"end": logbook.now(), "outcome": "error", "error": str(exc)})
        raise
    sig = signature(protocol_sha, out.seed if out.seed is not None else protocol.study.seed)
    entry |= {
        "end": logbook.now(),
        "seed": out.seed if out.seed is not None else protocol.study.seed,
        "parameters": out.parameters,
        "outputs": study.hashes(out.outputs),
        "summary": out.summary,
        "outcome": "ok",
        "signature": sig,
    }
    logbook.append(study, entry)
    return StageResult(name, False, [o["path"] for o in entry["outputs"]], out.summary, sig)


def run(study: Study, *, force: bool = False, progress: Callable[[str], None] | None = None) -> list[StageResult]:
    """Run the pre-collection stages in order (``humeval run``)."""
    results = []
    for name in PRE_COLLECTION:
        if progress:
            progress(name)
        results.append(run_stage(study, name, force=force))
    return results
