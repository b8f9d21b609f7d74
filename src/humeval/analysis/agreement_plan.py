"""Agreement as the plan declares it, with the paper's thresholds (0.667 tentative, 0.8 reliable).

Units of agreement are outputs: ``(item, system)`` for ratings and ``(item, pair)`` for
``2afc`` (the value is the system chosen, or the tie option). Krippendorff's alpha uses
every judgement (missing cells allowed); Fleiss' kappa needs the same number of
judgements per unit (units with another count are left out and counted); the ICC takes
the first ``judgements_per_item`` judgements of each unit (one-way forms ``1,1`` and
``1,k``, since different participants judge different units).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from humeval.analysis.records import attempt, undefined
from humeval.judgements import unit_matrix
from humeval.protocol.models import Analysis, Criterion
from humeval.stats import fleiss_kappa, icc, krippendorff_alpha
from humeval.tasks import TASK_TYPES

__all__ = ["agreement", "auto_level", "log_scores", "verdict"]


def log_scores(criterion: Criterion, plan: Analysis) -> bool:
    """Whether this criterion's scores are analysed on the log scale."""
    return criterion.task.log_scale and plan.log_magnitude


def auto_level(criterion_type: str, log_scores: bool) -> str:
    """Krippendorff level for ``agreement_level: auto``: the task type's (:meth:`humeval.tasks.TaskType.agreement_level`)."""
    return TASK_TYPES.get(criterion_type).agreement_level(log_scores)


def verdict(value: float | None, plan: Analysis) -> str:
    """``reliable`` (>= reliable_agreement), ``tentative`` (>= tentative_agreement) or ``insufficient``."""
    if value is None or np.isnan(value):
        return "undefined"
    if value >= plan.reliable_agreement:
        return "reliable"
    if value >= plan.tentative_agreement:
        return "tentative"
    return "insufficient"


def _with_verdict(record: dict[str, Any], plan: Analysis) -> dict[str, Any]:
    return record | {"verdict": verdict(record.get("estimate"), plan)}


def agreement(
    units: pd.DataFrame,
    criterion_type: str,
    plan: Analysis,
    required: int,
    seed: int,
    categories: list[float] | None = None,
    log_scores: bool = False,
) -> list[dict[str, Any]]:
    """Every agreement measure in ``plan.agreement`` for long ``units`` (participant_id, unit, code).

    ``code`` is the numeric response (a category index for nominal data); ``categories``
    lists the possible codes for Fleiss' kappa (None: continuous responses).
    """
    out = []
    for measure in plan.agreement:
        if measure == "krippendorff":
            level = plan.agreement_level if plan.agreement_level != "auto" else auto_level(criterion_type, log_scores)
            out.append(_with_verdict(attempt(
                f"krippendorff_alpha[{level}]", krippendorff_alpha, unit_matrix(units), level,
                n_boot=plan.bootstrap, seed=seed, context={"measure": "krippendorff", "level": level}), plan))
        elif measure == "fleiss":
            out.append(_with_verdict(_fleiss(units, categories, plan, seed), plan))
        else:
            out.extend(_with_verdict(r, plan) for r in _icc(units, criterion_type, required, plan))
    return out


def _fleiss(units: pd.DataFrame, categories: list[float] | None, plan: Analysis, seed: int) -> dict[str, Any]:
    context: dict[str, Any] = {"measure": "fleiss"}
    if categories is None:
        return undefined("fleiss_kappa", "Fleiss' kappa needs categorical responses; these are continuous", **context)
    per_unit = units.groupby("unit")["code"].size()
    if per_unit.empty:
        return undefined("fleiss_kappa", "no judgements", **context)
    m = int(per_unit.mode().iloc[0])
    keep = per_unit.index[per_unit == m]
    table = pd.crosstab(units.loc[units["unit"].isin(keep), "unit"], units.loc[units["unit"].isin(keep), "code"])
    table = table.reindex(columns=categories, fill_value=0)
    context |= {"judgements_per_unit": m, "units_left_out": int((per_unit != m).sum())}
    return attempt("fleiss_kappa", fleiss_kappa, table.to_numpy(dtype=float), n_boot=plan.bootstrap, seed=seed,
                   context=context)


def _icc(units: pd.DataFrame, criterion_type: str, required: int, plan: Analysis) -> list[dict[str, Any]]:
    task = TASK_TYPES.get(criterion_type)
    if task.pairwise:
        return [undefined("icc", f"the ICC needs numeric ratings; {task.name} choices are nominal", measure="icc")]
    ordered = units.assign(_k=units.groupby("unit").cumcount())
    counts = ordered.groupby("unit").size()
    keep = counts.index[counts >= required]
    wide = ordered[ordered["unit"].isin(keep) & (ordered["_k"] < required)].pivot(index="unit", columns="_k", values="code")
    context = {"measure": "icc", "judgements_per_unit": required, "units_left_out": int((counts < required).sum())}
    return [attempt(f"icc({form})", icc, wide.to_numpy(dtype=float), form, confidence_level=1 - plan.alpha,
                    context=context | {"form": form}) for form in ("1,1", "1,k")]
