"""Post hoc analyses: anything beyond the preregistered plan, written apart and marked as such.

``posthoc(study, name, overrides=..., correlations=...)`` re-runs the analysis with some
plan settings changed (e.g. ``tests=parametric``, ``rankings=[trueskill]``) and/or the
correlations between criteria, on the same judgements minus the same preregistered
exclusions. Everything goes to ``results/posthoc/<name>/`` with ``"post_hoc": name``,
``"preregistered": false`` and ``posthoc:<name>`` in the signature. The preregistered
``results/results.json`` is never read for writing nor touched (Thomson & Belz, 3.6).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from humeval._version import __version__
from humeval.analysis.plan import analysis_signature, analyze, counts, write_results
from humeval.analysis.records import attempt
from humeval.analysis.validity import invalid_reasons
from humeval.analysis.workspace import read_excluded, read_study_judgements, study_workspace
from humeval.errors import HumevalError, ProtocolError, did_you_mean
from humeval.hashing import sha256_file
from humeval.judgements.exclusion import valid_judgements
from humeval.lock import require_lock
from humeval.logbook import record_run
from humeval.protocol.models import Analysis, Protocol
from humeval.results import FORMAT_VERSION, CorrelationSet, Results
from humeval.stats import kendall, pearson, spearman
from humeval.study import StudyFolder, StudyLike, as_study

__all__ = ["CORRELATIONS", "PosthocOptions", "correlations", "posthoc", "posthoc_with"]

CORRELATIONS = {"spearman": spearman, "pearson": pearson, "kendall": kendall}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _plan(protocol: Protocol, overrides: dict[str, Any]) -> Protocol:
    fields = list(Analysis.model_fields)
    for key in overrides:
        if key not in fields:
            raise ProtocolError(f"posthoc --set: unknown analysis setting '{key}'. {did_you_mean(key, fields)}")
    try:
        plan = Analysis.model_validate(protocol.analysis.model_dump() | overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ProtocolError(f"posthoc --set {where}={first.get('input')!r}: {first['msg']}") from None
    return protocol.model_copy(update={"analysis": plan})


def correlations(frame: pd.DataFrame, protocol: Protocol, method: str, seed: int) -> CorrelationSet:
    """Correlation between every two rating criteria over per-output (item, system) mean scores."""
    if method not in CORRELATIONS:
        raise HumevalError(f"posthoc: unknown correlation '{method}'. {did_you_mean(method, CORRELATIONS)}")
    rating = [c.name for c in protocol.criteria if not c.task.pairwise]
    means = frame[frame["criterion"].isin(rating)].groupby(["item_id", "system", "criterion"])["value"].mean()
    wide = means.unstack("criterion")
    pairs = []
    for a, b in combinations([c for c in rating if c in wide.columns], 2):
        both = wide[[a, b]].dropna()
        pairs.append(attempt(method, CORRELATIONS[method], both[a].to_numpy(), both[b].to_numpy(),
                             context={"a": a, "b": b}, seed=seed))
    return CorrelationSet(method=method, unit="per-output mean scores", pairs=pairs)


@dataclass(frozen=True)
class PosthocOptions:
    """What :func:`posthoc` is asked (each field as its keyword): ``overrides`` the analysis settings changed
    (``--set key=value``), ``correlation`` the correlations between criteria (one of :data:`CORRELATIONS`),
    ``force`` overwrite an earlier post hoc analysis of the same name."""

    overrides: dict[str, Any] = field(default_factory=dict)
    correlation: str | None = None
    force: bool = False


def posthoc(
    study: StudyLike,
    name: str,
    *,
    overrides: dict[str, Any] | None = None,
    correlation: str | None = None,
    force: bool = False,
) -> tuple[Results, list[Path]]:
    """Run post hoc analysis ``name``; returns its results and the files written under results/posthoc/<name>/."""
    return posthoc_with(study, name, PosthocOptions(overrides=dict(overrides or {}), correlation=correlation, force=force))


def posthoc_with(study: StudyLike, name: str, options: PosthocOptions) -> tuple[Results, list[Path]]:
    """:func:`posthoc` with ``options``."""
    study = as_study(study)
    overrides, correlation, force = options.overrides, options.correlation, options.force
    if not _NAME.match(name):
        raise HumevalError(f"posthoc: name '{name}' must be lower-case letters, digits, '-' or '_' (e.g. 'parametric')")
    if not overrides and not correlation:
        raise HumevalError("posthoc: nothing to do; give --set key=value (analysis settings) and/or --correlation")
    require_lock(study, "posthoc")
    ws = study_workspace(study)
    out_dir = ws.posthoc_dir / name
    if out_dir.exists() and not force:
        raise HumevalError(f"{out_dir}: post hoc analysis '{name}' exists; choose another name or pass --force")
    inputs = study.hashes([study.protocol_file, ws.judgements, ws.excluded])
    with record_run(study, "posthoc", inputs=inputs, seed=study.protocol.study.seed, name=name,
                    parameters={"overrides": overrides or {}, "correlation": correlation}) as run:
        results, paths = _posthoc(study, ws, name, out_dir, overrides, correlation)
        run.finish(study, paths, signature=results.signature)
    return results, paths


def _posthoc(study: StudyFolder, ws: Any, name: str, out_dir: Path, overrides: dict[str, Any] | None,
             correlation: str | None) -> tuple[Results, list[Path]]:
    protocol = _plan(study.protocol, overrides or {})
    judgements = read_study_judgements(ws)
    excluded = read_excluded(ws)
    sha = sha256_file(study.protocol_file)
    kept = valid_judgements(judgements, excluded)
    reasons = invalid_reasons(judgements, protocol)
    analysed = kept[(kept["kind"] == "task") & (reasons.reindex(kept.index) == "")]
    if overrides:
        judges = study.judges() if protocol.analysis.judges else None
        texts = ({k: t.output for k, t in study.outputs().texts.items()}
                 if "style-controlled" in protocol.analysis.rankings else None)
        header = analyze(judgements, excluded, protocol, protocol_sha256=sha, post_hoc=name, judges=judges,
                         texts=texts).stored()
    else:  # correlations only: the same header, no criteria re-analysed
        header = {"format_version": FORMAT_VERSION, "study": protocol.study.name,
                  "signature": analysis_signature(protocol, sha, protocol.study.seed, post_hoc=name),
                  "preregistered": False, "post_hoc": name, "dry_run": None, "protocol_sha256": sha,
                  "seed": protocol.study.seed, "version": __version__, "plan": protocol.analysis,
                  "systems": protocol.systems or sorted((set(analysed["system"]) | set(analysed["system_b"])) - {""}),
                  "counts": counts(judgements, kept, reasons, analysed), "criteria": {}}
    header["overrides"] = overrides or {}
    if correlation:
        header["correlations"] = [correlations(analysed, protocol, correlation, protocol.study.seed)]
    results = Results(**header)
    return results, write_results(results, out_dir / "results.json", out_dir / "tables")
