"""The preregistered analysis plan: run exactly what ``analysis`` in the protocol declares.

:func:`analyze` takes the collected judgements and the exclusion table and returns the
results as a :class:`humeval.results.Results`; :func:`write_results` writes ``results.json``
and the tidy CSVs under ``tables/`` (from :meth:`Results.tables`). Judgements that are malformed (:mod:`.validity`), excluded
(:mod:`.exclude`), attention checks or repeats never enter the analysis; each of these
is counted in ``results.counts``. Every number carries its uncertainty (CI and/or
p-value and n), every random step its seed, and the whole file the signature.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from humeval._version import __version__
from humeval.analysis.agreement_plan import log_scores
from humeval.analysis.decisions import replay_decisions
from humeval.analysis.judges import judge_estimates
from humeval.analysis.pairwise import analyze_pairwise
from humeval.analysis.ratings import analyze_ratings
from humeval.analysis.validity import invalid_reasons
from humeval.data.judges import JudgeScores
from humeval.design.tasks import Task
from humeval.errors import DataError, ProtocolError, did_you_mean
from humeval.files import frame_csv, write_json, write_text
from humeval.hashing import sha256_json
from humeval.judgements.exclusion import valid_judgements
from humeval.protocol.models import Analysis, Protocol
from humeval.protocol.signature import signature
from humeval.results import FORMAT_VERSION, Counts, CriterionResult, JudgeResult, Results
from humeval.rng import child_seeds

__all__ = ["analysis_signature", "analyze", "counts", "write_results"]


def analysis_signature(protocol: Protocol, protocol_sha256: str, seed: int, dry_run: str | None = None,
                       post_hoc: str | None = None) -> str:
    """The signature of a result: protocol, seed, plan hash, version (and dry-run kind / post hoc name)."""
    extra: dict[str, object] = {"plan": sha256_json(protocol.analysis.model_dump(mode="json"))[:8]}
    if dry_run:
        extra["dry-run"] = dry_run
    if post_hoc:
        extra["posthoc"] = post_hoc
    return signature(protocol_sha256, seed, **extra)


def _criteria(protocol: Protocol) -> list:
    names = protocol.analysis.criteria or [c.name for c in protocol.criteria]
    known = [c.name for c in protocol.criteria]
    for name in names:
        if name not in known:
            raise ProtocolError(f"analysis.criteria: unknown criterion '{name}'. {did_you_mean(name, known)}")
    return [protocol.criterion(n) for n in names]


def analyze(
    judgements: pd.DataFrame,
    excluded: pd.DataFrame,
    protocol: Protocol,
    *,
    protocol_sha256: str,
    dry_run: str | None = None,
    post_hoc: str | None = None,
    tasks: Sequence[Task] | None = None,
    judges: Mapping[str, JudgeScores] | None = None,
    texts: Mapping[tuple[str, str], str] | None = None,
) -> Results:
    """Run the protocol's analysis plan on ``judgements`` minus ``excluded``.

    ``tasks`` (the design's) give each stopping decision the judgements the fixed design
    would have collected (:func:`humeval.analysis.decisions.replay_decisions`). ``judges``
    (:meth:`humeval.study.StudyFolder.judges`) are needed when the plan names ``analysis.judges``. ``texts``
    (``(item_id, system) -> output``) are needed by the ``style-controlled`` ranking of pairwise criteria.
    """
    plan = protocol.analysis
    missing = [j for j in plan.judges if j not in (judges or {})]
    if missing:
        raise DataError(f"analysis.judges: no scores given for judge '{missing[0]}' "
                        f"(have: {', '.join(judges or {}) or 'none'}); declare it under data.judges")
    seed = protocol.study.seed
    reasons = invalid_reasons(judgements, protocol)
    kept = valid_judgements(judgements, excluded)
    analysed = kept[(kept["kind"] == "task") & (reasons.reindex(kept.index) == "")]
    if analysed.empty:
        raise DataError("analysis: no valid judgements left after exclusion; nothing to analyse "
                        f"({len(judgements)} judgements, {len(judgements) - len(kept)} excluded)")
    systems = protocol.systems or sorted((set(analysed["system"]) | set(analysed["system_b"])) - {""})
    criteria = _criteria(protocol)
    decisions = {d["criterion"]: d for d in replay_decisions(analysed, protocol, systems, tasks, paid=judgements)}
    seeds = child_seeds(seed, len(protocol.criteria))
    seed_of = {c.name: s for c, s in zip(protocol.criteria, seeds, strict=True)}
    required = protocol.design.judgements_per_item
    results = {c.name: _criterion_result(c, analysed[analysed["criterion"] == c.name], plan, systems, required,
                                         seed_of[c.name], decisions.get(c.name), judges, texts) for c in criteria}
    return Results(
        format_version=FORMAT_VERSION,
        study=protocol.study.name,
        signature=analysis_signature(protocol, protocol_sha256, seed, dry_run, post_hoc),
        preregistered=post_hoc is None,
        post_hoc=post_hoc,
        dry_run=dry_run,
        protocol_sha256=protocol_sha256,
        seed=seed,
        version=__version__,
        plan=plan,
        systems=systems,
        counts=counts(judgements, kept, reasons, analysed),
        criteria=results,
    )


def _criterion_result(criterion: Any, frame: pd.DataFrame, plan: Analysis, systems: list[str], required: int,
                      seed: int, decision: dict[str, Any] | None,
                      judges: Mapping[str, JudgeScores] | None,
                      texts: Mapping[tuple[str, str], str] | None = None) -> CriterionResult:
    """The plan run on one criterion's valid judgements ``frame``."""
    fields: dict[str, Any] = {
        "criterion": criterion.name, "type": criterion.type, "question": criterion.question, "seed": seed,
        "judgements": len(frame), "participants": int(frame["participant_id"].nunique()),
        "items": int(frame["item_id"].nunique())}
    if frame.empty:
        return CriterionResult(**fields, undefined="no valid judgements for this criterion")
    if criterion.task.pairwise:
        fields |= analyze_pairwise(frame, criterion, plan, systems, required, seed, decision, texts)
    else:
        fields |= analyze_ratings(frame, criterion, plan, systems, required, seed)
        if criterion.task.marks_spans:
            fields |= analyze_spans(frame, criterion, systems, seed, 1 - plan.alpha)
        own = criterion.task.rankings(criterion, frame, systems, seed + 2, 1 - plan.alpha, plan.bootstrap)
        if own:
            fields["rankings"] = {**fields.get("rankings", {}), **own}
    fitting = [judges[j] for j in plan.judges if judges and judges[j].fits(criterion)]
    if fitting:
        logged = log_scores(criterion, plan)
        fields["judges"] = {j.name: JudgeResult(**judge_estimates(frame, criterion.type, j, systems, logged=logged,
                                                                 confidence_level=1 - plan.alpha)) for j in fitting}
    return CriterionResult(**fields)


def analyze_spans(frame: pd.DataFrame, criterion: Any, systems: list[str], seed: int,
                  confidence_level: float) -> dict[str, Any]:
    """A span-marking criterion's error counts and weighted error score per system (its type weighs each
    judgement's errors: :meth:`humeval.tasks.TaskType.span_penalties`), and its span agreement."""
    from humeval.analysis.records import estimate_record
    from humeval.stats.spans import error_scores, span_agreement

    s_errors, s_agree = child_seeds(seed + 1, 2)
    errors = []
    labels = {"minor": "minor errors per output", "major": "major errors per output",
              "weighted": criterion.task.penalty_label(criterion)}
    for row in error_scores(frame, systems, weighted=criterion.task.span_penalties(criterion, frame),
                            seed=s_errors, confidence_level=confidence_level):
        for measure in ("minor", "major", "weighted"):
            label = labels[measure]
            errors.append(estimate_record(row[measure], system=row["system"], measure=label,
                                          outputs_with_errors=row["outputs_with_errors"]))
    agree = span_agreement(frame, seed=s_agree, confidence_level=confidence_level)
    return {"errors": errors, "span_agreement": estimate_record(agree)}


def counts(judgements: pd.DataFrame, kept: pd.DataFrame, reasons: pd.Series, analysed: pd.DataFrame) -> Counts:
    """What went in, what was left out (excluded, malformed, attention checks/repeats) and what was analysed."""
    return Counts(
        judgements=len(judgements),
        participants=int(judgements["participant_id"].nunique()),
        excluded=int(len(judgements) - len(kept)),
        invalid=int((reasons != "").sum()),
        attention_or_repeat=int((kept["kind"] != "task").sum()),
        analysed=len(analysed),
        participants_analysed=int(analysed["participant_id"].nunique()),
    )


# --------------------------------------------------------------------------- writing


def write_results(results: Results, results_file: Path, tables_dir: Path) -> list[Path]:
    """Write ``results.json`` and one CSV per table of :meth:`Results.tables`; returns the paths written."""
    paths = [write_json(results_file, results.to_json())]
    tables_dir.mkdir(parents=True, exist_ok=True)
    for name, table in results.tables().items():
        path = tables_dir / f"{name}.csv"
        write_text(path, frame_csv(table))
        paths.append(path)
    return paths
