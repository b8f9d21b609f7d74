"""The preregistered analysis plan: run exactly what ``analysis`` in the protocol declares.

:func:`analyze` takes the collected judgements and the exclusion table and returns the
results as one JSON-ready dict; :func:`write_results` writes ``results.json`` and the tidy
CSVs under ``tables/``. Judgements that are malformed (:mod:`.validity`), excluded
(:mod:`.exclude`), attention checks or repeats never enter the analysis; each of these
is counted in ``results["counts"]``. Every number carries its uncertainty (CI and/or
p-value and n), every random step its seed, and the whole file the signature.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from humeval._version import __version__
from humeval.analysis.exclude import valid_judgements
from humeval.analysis.pairwise import analyze_pairwise
from humeval.analysis.ratings import analyze_ratings
from humeval.analysis.validity import invalid_reasons
from humeval.errors import DataError, ProtocolError, did_you_mean
from humeval.files import write_json
from humeval.hashing import sha256_json
from humeval.protocol.models import Protocol
from humeval.protocol.signature import signature
from humeval.rng import child_seeds

__all__ = ["analysis_signature", "analyze", "write_results"]


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
) -> dict[str, Any]:
    """Run the protocol's analysis plan on ``judgements`` minus ``excluded``; a JSON-ready dict."""
    plan = protocol.analysis
    seed = protocol.study.seed
    reasons = invalid_reasons(judgements, protocol)
    kept = valid_judgements(judgements, excluded)
    analysed = kept[(kept["kind"] == "task") & (reasons.reindex(kept.index) == "")]
    if analysed.empty:
        raise DataError("analysis: no valid judgements left after exclusion; nothing to analyse "
                        f"({len(judgements)} judgements, {len(judgements) - len(kept)} excluded)")
    systems = protocol.systems or sorted((set(analysed["system"]) | set(analysed["system_b"])) - {""})
    criteria = _criteria(protocol)
    seeds = child_seeds(seed, len(protocol.criteria))
    seed_of = {c.name: s for c, s in zip(protocol.criteria, seeds, strict=True)}
    required = protocol.design.judgements_per_item
    results: dict[str, Any] = {}
    for criterion in criteria:
        frame = analysed[analysed["criterion"] == criterion.name]
        base = {"criterion": criterion.name, "type": criterion.type, "question": criterion.question,
                "seed": seed_of[criterion.name], "judgements": len(frame),
                "participants": int(frame["participant_id"].nunique()), "items": int(frame["item_id"].nunique())}
        if frame.empty:
            results[criterion.name] = base | {"undefined": "no valid judgements for this criterion"}
        elif criterion.type == "2afc":
            results[criterion.name] = base | analyze_pairwise(frame, criterion, plan, systems, required,
                                                              seed_of[criterion.name], protocol.stopping)
        else:
            results[criterion.name] = base | analyze_ratings(frame, criterion, plan, systems, required,
                                                             seed_of[criterion.name])
    sig = analysis_signature(protocol, protocol_sha256, seed, dry_run, post_hoc)
    return {
        "study": protocol.study.name,
        "signature": sig,
        "preregistered": post_hoc is None,
        "post_hoc": post_hoc,
        "dry_run": dry_run,
        "protocol_sha256": protocol_sha256,
        "seed": seed,
        "version": __version__,
        "plan": plan.model_dump(mode="json"),
        "systems": systems,
        "counts": {
            "judgements": len(judgements),
            "participants": int(judgements["participant_id"].nunique()),
            "excluded": int(len(judgements) - len(kept)),
            "invalid": int((reasons != "").sum()),
            "attention_or_repeat": int((kept["kind"] != "task").sum()),
            "analysed": len(analysed),
            "participants_analysed": int(analysed["participant_id"].nunique()),
        },
        "criteria": results,
    }


# --------------------------------------------------------------------------- tidy tables

_FIELDS = ["estimate", "ci_low", "ci_high", "p_value", "n", "method"]


def _row(criterion: str, analysis: str, record: dict[str, Any], sig: str, **extra: Any) -> dict[str, Any]:
    row = {"criterion": criterion, "analysis": analysis, **extra}
    row |= {k: record.get(k) for k in _FIELDS}
    row |= {k: v for k, v in record.items() if k not in row and not isinstance(v, (dict, list))}
    return row | {"signature": sig}


def tidy_tables(results: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """The results as tidy tables: descriptives, tests, agreement, rankings, pairs."""
    sig = results["signature"]
    tables: dict[str, list[dict[str, Any]]] = {k: [] for k in ("descriptives", "tests", "agreement", "rankings", "pairs")}
    for name, res in results["criteria"].items():
        for d in res.get("descriptives", []):
            tables["descriptives"].append(_row(name, "mean", d, sig))
        for t in res.get("normality", {}).get("tests", []):
            tables["tests"].append(_row(name, "normality", t, sig))
        if "omnibus" in res:
            tables["tests"].append(_row(name, "omnibus", res["omnibus"], sig))
        for p in res.get("posthoc", {}).get("pairs", []):
            tables["tests"].append(_row(name, "posthoc", p, sig))
        for p in res.get("pairs", []):
            tables["pairs"].append(_row(name, "sign_test", p, sig))
        for a in res.get("agreement", []):
            tables["agreement"].append(_row(name, a.get("measure", ""), a, sig))
        for method, rk in res.get("rankings", {}).items():
            for s in rk.get("systems", []):
                tables["rankings"].append(_row(name, method, s, sig, label=rk.get("label", "")))
    return {k: pd.DataFrame(v) for k, v in tables.items()}


def write_results(results: dict[str, Any], results_file: Path, tables_dir: Path) -> list[Path]:
    """Write ``results.json`` and the tidy CSVs; returns the paths written."""
    paths = [write_json(results_file, results)]
    tables_dir.mkdir(parents=True, exist_ok=True)
    for name, table in tidy_tables(results).items():
        path = tables_dir / f"{name}.csv"
        table.to_csv(path, index=False)
        paths.append(path)
    return paths
