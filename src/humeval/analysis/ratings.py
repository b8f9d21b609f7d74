"""The plan for a rating criterion (Likert, slider, magnitude estimation, RankME).

Thomson & Belz (2025), section 4.5, as code:

1. scores: the responses; magnitude-estimation and RankME scores are log-transformed
   first unless ``analysis.log_magnitude`` is false;
2. ``tests: auto``: Shapiro-Wilk per system; every system normal at ``alpha`` ->
   parametric, otherwise (or when a system's scores are constant, W undefined)
   non-parametric. ``parametric``/``nonparametric`` fix the family without testing;
3. omnibus over all judgements grouped by system: one-way ANOVA (parametric) or
   Kruskal-Wallis (non-parametric);
4. only if the omnibus p < ``alpha``: post hoc pairs with the declared correction, paired
   on per-item mean scores when every item was judged for every system (t-test /
   Wilcoxon signed-rank), otherwise unpaired on judgements (Welch t-test / Mann-Whitney);
5. agreement and rankings as declared.

Shapiro-Wilk is defined for n <= 5000: a larger group is tested on a random subsample of
5000 (seeded; recorded in ``normality``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from humeval.analysis.agreement_plan import agreement, log_scores
from humeval.analysis.describe import describe, distribution, scale_bounds
from humeval.analysis.rankings_plan import rankings
from humeval.analysis.records import attempt, estimate_record
from humeval.errors import DataError
from humeval.judgements import agreement_units
from humeval.protocol.models import Analysis, Criterion
from humeval.results import Normality, PostHoc, Record
from humeval.rng import as_generator, child_seeds
from humeval.stats import (
    adjust_pvalues,
    anova_oneway,
    battles_from_scores,
    kruskal_wallis,
    mann_whitney,
    posthoc,
    shapiro,
    ttest,
    wilcoxon,
)

__all__ = ["CORRECTION_NAMES", "analyze_ratings"]

#: protocol name of a correction -> humeval.stats name
CORRECTION_NAMES = {"holm": "holm", "bh": "fdr_bh", "bonferroni": "bonferroni", "none": "none"}
_SHAPIRO_MAX = 5000


def _normality(groups: dict[str, np.ndarray], plan: Analysis, seed: int) -> Normality:
    rng = as_generator(seed)
    records, normal = [], True
    for system, x in groups.items():
        sample = x if x.size <= _SHAPIRO_MAX else rng.choice(x, size=_SHAPIRO_MAX, replace=False)
        rec = attempt("shapiro_wilk", shapiro, sample, context={"system": system, "subsample": int(sample.size)})
        records.append(rec)
        if rec.get("undefined") or rec["p_value"] < plan.alpha:
            normal = False
    reason = ("every system's scores are compatible with normality (Shapiro-Wilk p >= alpha)" if normal else
              "at least one system's scores are not normal (Shapiro-Wilk p < alpha, or constant scores)")
    return Normality(tests=records, normal=normal, seed=seed, reason=reason)


def _omnibus(groups: dict[str, np.ndarray], parametric: bool) -> Record:
    arrays = list(groups.values())
    if parametric:
        return Record(**attempt("anova_oneway", anova_oneway, *arrays))
    return Record(**attempt("kruskal_wallis", kruskal_wallis, *arrays))


def _pairwise(name: str, func: Any, groups: dict[str, np.ndarray], correction: str, **kwargs: Any) -> list[dict]:
    """Pairs one by one (a degenerate pair is ``undefined``); p-values adjusted over the defined pairs."""
    names = list(groups)
    records = [attempt(name, func, groups[a], groups[b], context={"a": a, "b": b}, **kwargs)
               for i, a in enumerate(names) for b in names[i + 1:]]
    defined = [r for r in records if not r.get("undefined")]
    if defined:
        adjusted = adjust_pvalues([r["p_value"] for r in defined], correction)
        for r, p in zip(defined, adjusted, strict=True):
            r |= {"p_unadjusted": r["p_value"], "p_value": float(p), "correction": correction}
    return records


def _posthoc(frame: pd.DataFrame, systems: list[str], parametric: bool, plan: Analysis,
             item_scores: pd.DataFrame) -> PostHoc:
    correction = CORRECTION_NAMES[plan.correction]
    paired = not item_scores.isna().to_numpy().any() and len(item_scores) >= 2
    if paired:
        test = "ttest_paired" if parametric else "wilcoxon"
        groups = {s: item_scores[s].to_numpy(dtype=float) for s in systems}
        unit = "per-item mean scores (every item judged for every system)"
    else:
        test = "ttest_welch" if parametric else "mann_whitney"
        groups = {s: frame.loc[frame["system"] == s, "score"].to_numpy(dtype=float) for s in systems}
        unit = "judgements (items not judged for every system)"
    try:
        pairs = [estimate_record(est, a=a, b=b) for (a, b), est in posthoc(groups, test, correction).items()]
    except DataError:
        func = {"ttest_paired": ttest, "wilcoxon": wilcoxon, "ttest_welch": ttest, "mann_whitney": mann_whitney}[test]
        kwargs = {"paired": True} if test == "ttest_paired" else {}
        pairs = _pairwise(test, func, groups, correction, **kwargs)
    return PostHoc(test=test, correction=plan.correction, unit=unit, pairs=pairs)


def analyze_ratings(
    frame: pd.DataFrame,
    criterion: Criterion,
    plan: Analysis,
    systems: list[str],
    required: int,
    seed: int,
) -> dict[str, Any]:
    """Run the plan on the valid judgements ``frame`` of one rating criterion."""
    s_norm, s_agree, s_rank, s_desc = child_seeds(seed, 4)
    logged = log_scores(criterion, plan)
    frame = frame.assign(score=np.log(frame["value"].astype(float)) if logged else frame["value"].astype(float))
    systems = [s for s in systems if (frame["system"] == s).any()]
    if len(systems) < 2:
        raise DataError(f"analysis: criterion '{criterion.name}' has valid judgements for {len(systems)} system(s) "
                        f"({', '.join(systems) or 'none'}); comparing systems needs at least 2")
    groups = {s: frame.loc[frame["system"] == s, "score"].to_numpy(dtype=float) for s in systems}
    item_scores = frame.groupby(["item_id", "system"])["score"].mean().unstack("system").reindex(columns=systems)
    out: dict[str, Any] = {"transform": "log" if logged else None, "seeds": {"normality": s_norm,
                           "agreement": s_agree, "rankings": s_rank,
                           "descriptives": s_desc}}
    out["descriptives"] = describe(frame, systems, plan.alpha, bounds=scale_bounds(criterion, logged),
                                  n_boot=plan.bootstrap, seed=s_desc)
    levels = criterion.task.categories(criterion)
    if levels is not None:
        out["distribution"] = distribution(frame, systems, levels)
    if plan.tests == "auto":
        out["normality"] = _normality(groups, plan, s_norm)
        parametric = bool(out["normality"].normal)
        out["decision"] = ("parametric: " if parametric else "non-parametric: ") + out["normality"].reason
    else:
        parametric = plan.tests == "parametric"
        out["decision"] = f"{plan.tests}: fixed by the protocol (analysis.tests)"
    out["family"] = "parametric" if parametric else "nonparametric"
    out["omnibus"] = _omnibus(groups, parametric)
    p = out["omnibus"].p_value
    if p is not None and p < plan.alpha:
        out["posthoc"] = _posthoc(frame, systems, parametric, plan, item_scores)
    else:
        shown = float("nan") if p is None else p  # a p-value that is not a number is stored as null
        why = out["omnibus"].undefined or f"omnibus p = {shown:.4g} >= alpha = {plan.alpha:g}"
        out["posthoc"] = PostHoc(skipped=f"not run: {why}", pairs=[])
    units, categories = agreement_units(frame, criterion, log=logged)
    out["agreement"] = agreement(units, criterion.type, plan, required, s_agree, categories, logged)
    multi = frame.groupby(["participant_id", "task_id"])["system"].nunique().max() > 1
    if multi:
        battles = battles_from_scores(frame, group=["participant_id", "task_id"], system="system", score="score")
        unit = "per judgement (outputs scored side by side)"
    else:
        # an item may lack judgements of a system (exclusions, an incomplete collection)
        means = item_scores.stack().rename("score").dropna().reset_index()
        battles = battles_from_scores(means, group="item_id", system="system", score="score")
        unit = ("per item (mean scores): each task holds one output, so no participant compared two; the item's mean "
                "scores of two systems make one battle")
    out["rankings"] = rankings(plan, out["descriptives"], item_scores, battles, s_rank, battles_from=unit)
    out["battles_from"] = unit
    return out



