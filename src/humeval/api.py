"""``humeval.Study``: a study on disk and everything that can be done with it, one method per job.

``Study.open(d)``, then ``.validate()``, ``.lock()``, ``.run(stage or stages)``, ``.serve()``, ``.export()``,
``.results()``, ``.budget()``, ``.rehearse()``, ``.prereg()``, ``.posthoc()``, ``.logbook()``. Each method is a
thin call of the public function that does the job, imported when the method is called (so ``import humeval``
stays cheap). It is :class:`humeval.study.StudyFolder` (the folder, its protocol and its paths, which the library
takes) with these methods: the library never imports this module, so the orchestrators it calls can import
the study without a cycle. Every function it calls also takes a folder (``StudyFolder | str | Path``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from humeval import study as _study
from humeval.errors import HumevalError, did_you_mean

if TYPE_CHECKING:
    import pandas as pd
    from _typeshed import DataclassInstance

    from humeval.analysis.posthoc import PosthocOptions
    from humeval.collect import ServeOptions
    from humeval.costs import Budget, BudgetOptions
    from humeval.lock import Lock
    from humeval.pipeline import StageResult
    from humeval.rehearsal.rehearse import RehearsalOptions, RehearsalResult
    from humeval.report.prereg import Preregistration, PreregOptions
    from humeval.results import Results

__all__ = ["Study"]

_O = TypeVar("_O", bound="DataclassInstance")


def _options(kind: type[_O], options: _O | None, fields: dict[str, Any], method: str) -> _O:
    """``options``, or one made of ``fields`` (a field that ``kind`` does not have is an error naming the valid)."""
    if options is not None:
        if fields:
            raise HumevalError(f"Study.{method}: give a {kind.__name__} or its fields as keywords, not both "
                               f"(got {', '.join(sorted(fields))} too)")
        return options
    valid = [f.name for f in dataclasses.fields(kind)]
    for name in fields:
        if name not in valid:
            raise HumevalError(f"Study.{method}: unknown option {name!r}. {did_you_mean(name, valid)}")
    return kind(**fields)


class Study(_study.StudyFolder):
    """A study folder and what can be done with it (see the module docstring)."""

    @classmethod
    def init(cls, directory: str | Path, template: str = "pairwise", *, items: int = 24, seed: int = 1) -> Study:
        """Write an example study from ``template`` into ``directory`` (``humeval init``) and open it."""
        from humeval.templates import init_study

        return cls.open(init_study(directory, template, items=items, seed=seed))

    # ------------------------------------------------------------------ what can be done with it

    def validate(self) -> list[str]:
        """Every problem of the protocol and its data (``humeval validate``; empty: the study is valid)."""
        from humeval.validate import validate_study

        return validate_study(self)

    def lock(self) -> Lock:
        """Lock the protocol and its inputs after every check passed (``humeval lock``)."""
        from humeval.lock import lock_study

        return lock_study(self)

    def unlock(self, reason: str = "") -> Lock:
        """Release the lock, recording ``reason`` in the logbook (``humeval lock --release``)."""
        from humeval.lock import release_lock

        return release_lock(self, reason)

    def read_lock(self) -> Lock | None:
        """The lock, or None when the study is not locked."""
        from humeval.lock import read_lock

        return read_lock(self)

    def run(self, stages: str | Sequence[str] | None = None, *, force: bool = False,
            options: dict[str, Any] | None = None) -> StageResult | list[StageResult]:
        """Run a stage by name (its :class:`~humeval.pipeline.StageResult`), stages in the order given (a list
        of results), or with no name the pre-collection stages (``humeval run``). ``options`` are the keyword
        arguments of a single stage."""
        from humeval.pipeline import run, run_stage

        if stages is None:
            return run(self, force=force)
        if isinstance(stages, str):
            return run_stage(self, stages, force=force, options=options)
        if options:
            raise HumevalError(f"run: options go with one stage, not with the stages {list(stages)}")
        return [run_stage(self, name, force=force) for name in stages]

    def judge(self, judges: list[str] | None = None, *, force: bool = False) -> StageResult:
        """Ask the LLM judges (all, or those named; ``humeval judge``)."""
        from humeval.pipeline import judge

        return judge(self, judges=judges, force=force)

    def serve(self, options: ServeOptions | None = None, /, *, say: Callable[[str], None] = print, **fields: Any) -> None:
        """Collect judgements with the web app until stopped (``humeval serve``): ``options`` a
        :class:`~humeval.collect.ServeOptions`, or its fields as keywords (those of :func:`humeval.serve`), each
        checked by name; ``say`` takes the server's messages."""
        from humeval.collect import ServeOptions, serve_with

        serve_with(self, _options(ServeOptions, options, fields, "serve"), say=say)

    def export(self, db: str | None = None, *, as_study_data: bool = False) -> StageResult:
        """The store's judgements into ``results/judgements.jsonl`` (``humeval export``; another SQLite store than
        ``study.db`` only with ``as_study_data``)."""
        from humeval.pipeline import export_judgements

        return export_judgements(self, db, as_study_data=as_study_data)

    def battles(self, *, criterion: str | None = None, everything: bool = False) -> pd.DataFrame:
        """The pairwise votes as a FastChat battle table (``humeval arena export``;
        :func:`humeval.arena.study_battle_log`): the analysed votes, or with ``everything`` all of them."""
        from humeval.arena.export import study_battle_log

        return study_battle_log(self, criterion=criterion, everything=everything)

    def pilot(self, db: str | None = None) -> StageResult:
        """A pilot's store read apart, into ``results/pilot/`` with a pilot banner (``humeval pilot``)."""
        from humeval.pipeline import pilot

        return pilot(self, db)

    def import_judgements(self, platform: str, path: str | Path, *, force: bool = False) -> StageResult:
        """Import a platform's or another tool's judgement file (``humeval import``)."""
        from humeval.pipeline import import_judgements

        return import_judgements(self, platform, path, force=force)

    def export_mqm(self, output: str | Path | None = None, *, criterion: str | None = None,
                   documents: str | Path | None = None) -> Path:
        """An mqm criterion's judgements as a WMT MQM TSV (``humeval export --format mqm-tsv``;
        :func:`humeval.pipeline.export_mqm`); the path written."""
        from humeval.pipeline import export_mqm

        return export_mqm(self, output, criterion=criterion, documents=documents)

    def export_batch(self, output: str | Path | None = None) -> StageResult:
        """Every task as a batch CSV (``humeval export-batch``)."""
        from humeval.pipeline import export_batch

        return export_batch(self, output)

    def rehearse(self, options: RehearsalOptions | None = None, /, **fields: Any) -> RehearsalResult:
        """Synthetic participants through the real server and store (``humeval rehearse``): ``options`` a
        :class:`~humeval.rehearsal.RehearsalOptions`, or its fields as keywords (those of
        :func:`humeval.rehearsal.rehearse`), each checked by name."""
        from humeval.rehearsal.rehearse import RehearsalOptions, rehearse_with

        return rehearse_with(self, _options(RehearsalOptions, options, fields, "rehearse"))

    def budget(self, options: BudgetOptions | None = None, /, **fields: Any) -> Budget:
        """What the study will cost (``humeval budget``): ``options`` a :class:`~humeval.costs.BudgetOptions`, or its
        fields as keywords (those of :func:`humeval.costs.budget`), each checked by name."""
        from humeval.costs import BudgetOptions, budget_of

        return budget_of(self, _options(BudgetOptions, options, fields, "budget"))

    def prereg(self, options: PreregOptions | None = None, /, **fields: Any) -> Preregistration:
        """The preregistration of the locked study (``humeval prereg``): ``options`` a
        :class:`~humeval.report.prereg.PreregOptions`, or its fields as keywords, each checked by name."""
        from humeval.report.prereg import PreregOptions, prereg_with

        return prereg_with(self, _options(PreregOptions, options, fields, "prereg"))

    def posthoc(self, name: str, options: PosthocOptions | None = None, /, **fields: Any) -> tuple[Results, list[Path]]:
        """A post hoc analysis ``name`` (``humeval posthoc``): ``options`` a
        :class:`~humeval.analysis.posthoc.PosthocOptions`, or its fields as keywords, each checked by name."""
        from humeval.analysis.posthoc import PosthocOptions, posthoc_with

        return posthoc_with(self, name, _options(PosthocOptions, options, fields, "posthoc"))

    def logbook(self) -> list[dict[str, Any]]:
        """Every logbook entry, oldest first (``humeval log``)."""
        from humeval import logbook

        return logbook.read(self)
