"""Rankings the plan declares: by mean, by paired bootstrap, Bradley-Terry, TrueSkill, Elo.

``mean`` orders systems by mean score with their intervals (see :mod:`humeval.analysis.describe`); rank ranges come from
non-overlapping intervals. ``bootstrap`` is :func:`humeval.stats.rank_by_scores` on
per-item mean scores (items judged for every system). The pairwise models take battles:
``2afc`` judgements directly; for ratings, outputs scored side by side by one participant
(RankME, joint multi-output tasks) become battles per judgement, otherwise per item on
the mean scores (higher wins, equal ties; recorded in each model's ``extra["battles_from"]``). When one system's
item mean is above the other's on (nearly) every item, Bradley-Terry's ratings are infinite in many bootstrap
resamples (near-perfect separation): its record then has no interval and says why. TrueSkill's rank ranges use
``min(analysis.bootstrap, 100)`` resamples (recorded as ``n_boot``): the ``trueskill`` package
updates one battle at a time, so 1,000 resamples of a few hundred battles take minutes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from humeval.analysis.records import ranking_record
from humeval.errors import DataError
from humeval.protocol.models import Analysis
from humeval.stats import bradley_terry, elo, rank_by_scores, trueskill_ranking

__all__ = ["TRUESKILL_MAX_BOOT", "mean_ranking", "rankings", "style_record"]

#: TrueSkill resamples: min(analysis.bootstrap, this); each resample is a Python loop over battles
TRUESKILL_MAX_BOOT = 100


def mean_ranking(descriptives: list[dict[str, Any]]) -> dict[str, Any]:
    """Systems by mean, best first; rank ranges from non-overlapping intervals."""
    rows = sorted((d for d in descriptives if d["estimate"] is not None), key=lambda d: -d["estimate"])
    lo = np.array([np.nan if d["ci_low"] is None else d["ci_low"] for d in rows], dtype=float)
    hi = np.array([np.nan if d["ci_high"] is None else d["ci_high"] for d in rows], dtype=float)
    ahead = lo[:, None] > hi[None, :]  # i clearly above j
    k = len(rows)
    out = []
    for i, d in enumerate(rows):
        out.append({**d, "rank_low": int(1 + ahead[:, i].sum()), "rank_high": int(k - ahead[i, :].sum())})
    label = "; ".join(f"{r['rank_low']}.{'' if r['rank_low'] == r['rank_high'] else '-' + str(r['rank_high']) + '.'} "
                      f"{r['system']}" for r in out)
    return {"method": "mean", "label": label, "systems": out, "extra": {"interval": rows[0]["method"] if rows else None}}


def style_record(battles: pd.DataFrame, style: pd.DataFrame | None, plan: Analysis, seed: int) -> dict[str, Any]:
    """The ``style-controlled`` ranking (:func:`humeval.stats.style_control`) as a record; the style coefficients
    with their intervals in ``extra["coefficients"]``."""
    if style is None:
        raise DataError("no output texts to measure style on (style control needs the outputs shown)")
    from humeval.stats import style_control

    fit = style_control(battles, style, n_boot=plan.bootstrap, seed=seed, confidence_level=1 - plan.alpha)
    rec = ranking_record(fit.ranking)
    rec["extra"]["coefficients"] = {name: {"estimate": c.estimate, "ci_low": c.ci_low, "ci_high": c.ci_high}
                                    for name, c in fit.coefficients.items()}
    rec["extra"]["length_unit"] = "characters"
    return rec


def rankings(
    plan: Analysis,
    descriptives: list[dict[str, Any]],
    item_scores: pd.DataFrame | None,
    battles: pd.DataFrame | None,
    seed: int,
    *,
    battles_from: str | None = None,
    style: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """Every ranking in ``plan.rankings``; a method that cannot run records why (``undefined``).

    ``style``: per battle (same rows as ``battles``) the style covariates of its two outputs
    (:func:`humeval.stats.style_covariates`), which ``style-controlled`` needs; without them it records why not.

    ``battles_from``: where the battles come from (e.g. "per item (mean scores)"), recorded in the pairwise models'
    ``extra["battles_from"]`` so that their ranking says what it ranks.
    """
    out: dict[str, Any] = {}
    for method in plan.rankings:
        if method in ("mean", "bootstrap") and item_scores is None and not descriptives:
            # a pairwise criterion has no scores to average: the method does not apply (it is not a lack of data)
            out[method] = {"method": method, "systems": [], "not_applicable": True,
                           "undefined": "no scores to average (pairwise criterion): use bradley-terry, trueskill or elo"}
            continue
        try:
            if method == "mean":
                if not descriptives:
                    raise DataError("no mean scores (pairwise criterion): use bradley-terry, trueskill or elo")
                out[method] = mean_ranking(descriptives)
            elif method == "bootstrap":
                if item_scores is None:
                    raise DataError("no per-item scores (pairwise criterion): use bradley-terry, trueskill or elo")
                complete = item_scores.dropna()
                if len(complete) < 2:
                    raise DataError(f"not enough data: {len(complete)} of {len(item_scores)} items have scores of "
                                    "every system; the paired bootstrap needs at least 2")
                rec = ranking_record(rank_by_scores(complete, n_boot=plan.bootstrap, seed=seed, alpha=plan.alpha,
                                                            confidence_level=1 - plan.alpha))
                out[method] = rec | {"items_left_out": int(len(item_scores) - len(complete))}
            elif battles is None or battles.empty:
                raise DataError("no battles to rank")
            elif method == "bradley-terry":
                out[method] = ranking_record(bradley_terry(battles, n_boot=plan.bootstrap, seed=seed,
                                                           confidence_level=1 - plan.alpha))
            elif method == "style-controlled":
                out[method] = style_record(battles, style, plan, seed)
            elif method == "trueskill":
                n_boot = min(plan.bootstrap, TRUESKILL_MAX_BOOT)
                out[method] = ranking_record(trueskill_ranking(battles, n_boot=n_boot, seed=seed,
                                                               confidence_level=1 - plan.alpha)) | {"n_boot": n_boot}
            else:
                out[method] = ranking_record(elo(battles, n_boot=plan.bootstrap, seed=seed,
                                                 confidence_level=1 - plan.alpha))
        except DataError as exc:
            out[method] = {"method": method, "undefined": str(exc), "systems": []}
        if battles is not None and method in ("bradley-terry", "style-controlled", "trueskill", "elo"):
            out[method]["battles"] = len(battles)
            if battles_from is not None:
                out[method]["extra"] = {**out[method].get("extra", {}), "battles_from": battles_from}
    return out
