"""The ``sample`` stage: select the items of a study and write ``items.jsonl``.

Reserved keys of ``sampling.params`` (not passed to the sampler): ``scores_file`` (human
scores imported between phases; default ``human_scores.jsonl`` or ``human_scores.csv`` in
the study folder), ``metrics`` (``auto`` | ``stored`` | ``compute``). The method ``auto``
means every item at rate 1 and below it stratified by ``data.properties`` (random without properties).

A score-driven sampler (CASF) runs phase by phase: each run replays the phases from the
start and adds every phase whose inputs are scored (:func:`humeval.sampling.phases.advance`).
Scores come from the scores file, or from the data's ``human.*`` columns when the run is a
simulation (``humeval sample --simulate-scores``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from humeval.files import write_jsonl
from humeval.hashing import sha256_file
from humeval.stage import StageOutput
from humeval.study import StudyFolder

__all__ = ["SCORE_FILES", "sample_stage", "scores_file"]

SCORE_FILES = ("human_scores.jsonl", "human_scores.csv")


def scores_file(study: StudyFolder) -> Path | None:
    """The human-scores file of the study, if one exists."""
    named = study.protocol.sampling.params.get("scores_file")
    candidates = [study.root / named] if named else [study.root / f for f in SCORE_FILES]
    return next((p for p in candidates if p.is_file()), None)


def sample_stage(study: StudyFolder, *, simulate_scores: bool = False) -> StageOutput:
    """Run the protocol's sampler over the study's outputs; write the selected items in order.

    ``simulate_scores`` replays the data's own ``human.*`` scores for every phase
    (``humeval sample --simulate-scores``).
    """
    from humeval.data.readers import read_table
    from humeval.sampling import RESERVED_PARAMS, get_sampler, resolve_method
    from humeval.sampling.select import select_items

    protocol = study.protocol
    spec = protocol.sampling
    seed = spec.seed if spec.seed is not None else protocol.study.seed
    params = {k: v for k, v in spec.params.items() if k not in RESERVED_PARAMS}
    method = resolve_method(spec.method, spec.rate, protocol.data.properties)
    if spec.method == "auto" and method == "stratified":
        params.setdefault("by", list(protocol.data.properties))
    sampler = get_sampler(method, **params)
    outputs = study.outputs().frame
    path = scores_file(study) if sampler.needs_scores and not simulate_scores else None
    table, run = select_items(
        outputs, sampler, spec.rate, seed,
        simulate_scores=simulate_scores,
        scores=read_table(path) if path is not None else None,
        scores_source=str(path),
        metrics=spec.params.get("metrics", "auto"),
        cache_dir=study.state_dir / "cache" / "metrics",
    )
    used_scores = {"path": study.relative(path), "sha256": sha256_file(path)} if path is not None else None
    rows = [
        {"item_id": str(table.item_ids[r]), "order": i, "phase": int(p)}
        for i, (r, p) in enumerate(zip(run.rows, run.phases, strict=True))
    ]
    write_jsonl(study.items_file, rows)
    phases = [
        {"phase": k, "planned": n, "selected": int((run.phases == k).sum())} for k, n in enumerate(run.plan)
    ]
    summary: dict[str, Any] = {
        "items_available": table.n_items,
        "items_planned": sum(run.plan),
        "items_selected": len(rows),
        "phases_done": run.phases_done,
        "phases_total": len(run.plan),
        "phases": phases,
    }
    if run.waiting:
        summary["next"] = (
            f"collect human scores of the {len(rows)} selected items into {SCORE_FILES[0]} "
            f"(columns item_id, system, human.<aspect>), then run `humeval sample` again for phase {run.phases_done}"
        )
    parameters = {"method": method, "rate": spec.rate, "params": spec.params | params, "simulate_scores": simulate_scores}
    if used_scores:
        parameters["scores"] = used_scores
    return StageOutput(outputs=[study.items_file], seed=seed, parameters=parameters, summary=summary)
