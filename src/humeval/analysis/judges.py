"""Prediction-powered estimates from a judge the plan declares (``analysis.judges``), beside the human-only ones.

For one criterion and one judge (:class:`humeval.data.judges.JudgeScores`):

* rating criteria (judge ``scores``): per system, the human score of an item is the mean of
  its valid judgements (on the log scale where the plan logs the criterion); the labelled
  items are those with a human score, the unlabelled ones every other item the judge scored.
  :func:`humeval.stats.ppi_mean` gives the system's mean over all judged items, with the
  human-only mean and the effective number of human labels beside it. The judge's scores are
  first put on the human scale (``calibrate=True``: the least-squares line of human on judge
  scores over the labelled items, recorded as ``calibration_intercept`` and ``calibration_slope``), so a judge on another
  scale (a metric in [0, 1] against a 1-5 rating) keeps its gain; ``scale_ratio`` tells
  how far apart the two scales were (the judge's spread over the humans');
* ``2afc`` criteria (judge ``verdicts``): per pair of systems, the human outcome of an item
  is the share of its judgements preferring the first system (ties count half), and
  :func:`humeval.stats.ppi_win_rate` gives the win rate over all judged items;
* calibration, on the labelled items: agreement of judge and humans (Pearson r of the
  item-level values), the judge's bias per system (mean judge minus human score), and for
  verdicts the share of items where judge and human majority agree.

The estimates assume the labelled items are a uniform random sample of the items the judge
scored (``sampling.method: random`` over the whole data set); with another sampler the
prediction-powered means may be biased, and the record says which sampler chose the items.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from humeval.analysis.records import attempt
from humeval.data.judges import JudgeScores
from humeval.judgements import winners
from humeval.stats import pearson, ppi_mean, ppi_win_rate
from humeval.tasks import TASK_TYPES

__all__ = ["judge_estimates"]


def _ppi(method: str, func: Any, human: pd.Series, judge: pd.Series, confidence_level: float,
         calibrate: bool = False, **context: Any) -> dict[str, Any]:
    """PPI on ``human`` (labelled items) and ``judge`` (every item it scored); a degenerate case is ``undefined``."""
    labelled = human.index.intersection(judge.index)
    unlabelled = judge.index.difference(human.index)
    missing = len(human) - len(labelled)
    record = attempt(method, func, human.loc[labelled].to_numpy(float), judge.loc[labelled].to_numpy(float),
                     judge.loc[unlabelled].to_numpy(float), confidence_level=confidence_level, calibrate=calibrate,
                     context=context)
    if missing:
        record["human_items_without_judge"] = int(missing)
    return record


def _calibration(human: pd.Series, judge: pd.Series, **context: Any) -> dict[str, Any]:
    both = human.index.intersection(judge.index)
    h, j = human.loc[both].to_numpy(float), judge.loc[both].to_numpy(float)
    record = attempt("pearson", pearson, h, j, context=context)
    record["bias"] = float(np.mean(j - h)) if both.size else None
    return record


def judge_estimates(frame: pd.DataFrame, criterion_type: str, judge: JudgeScores, systems: list[str],
                    *, logged: bool, confidence_level: float) -> dict[str, Any]:
    """The prediction-powered records of one criterion (``frame``: its valid judgements) for one judge."""
    out: dict[str, Any] = {"judge": judge.name, "kind": judge.judge.kind,
                           "assumption": "labelled items are a uniform random sample of the items the judge scored"}
    estimates, calibration = [], []
    if TASK_TYPES.get(criterion_type).pairwise:
        won = winners(frame)
        pair = frame[["item_id", "system", "system_b"]].assign(won=won.to_numpy())
        agree = []
        for a, b in combinations(sorted(systems), 2):
            rows = pair[((pair["system"] == a) & (pair["system_b"] == b)) | ((pair["system"] == b) & (pair["system_b"] == a))]
            judged = judge.outcomes(a, b)
            if rows.empty or judged.empty:
                continue
            outcome = np.where(rows["won"] == a, 1.0, np.where(rows["won"] == b, 0.0, 0.5))
            human = pd.Series(outcome, index=rows["item_id"].to_numpy()).groupby(level=0).mean()
            estimates.append(_ppi("ppi win rate", ppi_win_rate, human, judged, confidence_level, a=a, b=b))
            calibration.append(_calibration(human, judged, a=a, b=b))
            both = human.index.intersection(judged.index)
            agree.append(float(np.mean(np.sign(human.loc[both] - 0.5) == np.sign(judged.loc[both] - 0.5))) if both.size else None)
        for record, share in zip(calibration, agree, strict=True):
            record["agreement_share"] = share
    else:
        values = frame["value"].astype(float)
        frame = frame.assign(score=np.log(values) if logged else values)
        means = frame.groupby(["system", "item_id"])["score"].mean()
        for system in systems:
            if system not in means.index.get_level_values(0):
                continue
            human = means.loc[system]
            judged = judge.scores(system)
            estimates.append(_ppi("ppi++ mean", ppi_mean, human, judged, confidence_level, calibrate=True,
                                  system=system))
            calibration.append(_calibration(human, judged, system=system))
    out["estimates"] = estimates
    out["calibration"] = calibration
    return out

