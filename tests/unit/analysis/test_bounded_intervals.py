"""Descriptive intervals on bounded scales: a BCa bootstrap over items that cannot leave the scale."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as sps

from humeval.analysis.describe import describe, scale_bounds
from humeval.protocol.models import ESA, Likert, Magnitude, Slider


def _frame(values: dict[str, list[float]], per_item: int = 1) -> pd.DataFrame:
    return pd.DataFrame([{"system": s, "item_id": f"i{i // per_item}", "score": v} for s, vs in values.items()
                         for i, v in enumerate(vs)])


def test_likert_interval_stays_on_the_scale_where_t_leaves_it() -> None:
    x = [5, 5, 5, 4, 5, 5]
    half = sps.t.ppf(0.975, len(x) - 1) * np.std(x, ddof=1) / math.sqrt(len(x))
    assert np.mean(x) + half > 5  # the t interval leaves the scale
    rec = describe(_frame({"a": x, "b": [3, 3, 4, 2, 1, 2]}), ["a", "b"], 0.05, bounds=(1.0, 5.0), seed=3)
    assert 1.0 <= rec[0]["ci_low"] <= rec[0]["estimate"] <= rec[0]["ci_high"] <= 5.0
    assert rec[0]["method"].startswith("mean, ") and rec[0]["seed"] == 3 and rec[1]["seed"] == 4


def test_same_answers_give_no_interval_and_unbounded_scores_keep_t() -> None:
    # three answers of 100: resampling shows no spread, so no interval (not a [100, 100] that reads as certainty)
    rec = describe(_frame({"a": [100, 100, 100], "b": [0, 0, 30]}), ["a", "b"], 0.05, bounds=(0.0, 100.0))
    assert math.isnan(rec[0]["ci_low"]) and math.isnan(rec[0]["ci_high"]) and rec[0]["estimate"] == 100.0
    assert rec[0]["no_interval"].startswith("not enough data: all 3 answers are 100")
    assert math.isnan(rec[1]["ci_low"]) or rec[1]["ci_low"] >= 0.0
    rec = describe(_frame({"a": [0.1, 0.5, 0.2, 0.9]}), ["a"], 0.05, bounds=None)
    half = sps.t.ppf(0.975, 3) * np.std([0.1, 0.5, 0.2, 0.9], ddof=1) / 2
    assert rec[0]["method"] == "mean_t_interval" and math.isclose(rec[0]["ci_low"], 0.425 - half)


def test_items_are_resampled_whole() -> None:
    # two judgements per item that agree exactly: resampling items, not judgements, keeps the interval as wide
    # as that of the item means
    items = [1, 2, 4, 5, 3, 2, 5, 4]
    by_item = describe(_frame({"a": items}), ["a"], 0.05, bounds=(1.0, 5.0), seed=1)[0]
    doubled = describe(_frame({"a": [v for v in items for _ in range(2)]}, per_item=2), ["a"], 0.05,
                       bounds=(1.0, 5.0), seed=1)[0]
    assert math.isclose(doubled["ci_low"], by_item["ci_low"]) and math.isclose(doubled["ci_high"], by_item["ci_high"])
    assert doubled["n"] == 16 and doubled["items"] == 8


def test_scale_bounds() -> None:
    assert scale_bounds(Likert(name="q", type="likert", question="?", points=7), False) == (1.0, 7.0)
    assert scale_bounds(Slider(name="q", type="slider", question="?", min=-1, max=1), False) == (-1.0, 1.0)
    assert scale_bounds(ESA(name="q", type="esa", question="?"), False) == (0.0, 100.0)
    mag = Magnitude(name="q", type="magnitude", question="?", standard={"text": "x"})
    assert scale_bounds(mag, True) is None and scale_bounds(mag, False)[0] == 0.0
    rec = describe(_frame({"a": [1, 1, 200]}), ["a"], 0.05, bounds=scale_bounds(mag, False))
    assert rec[0]["ci_low"] >= 1.0 and not math.isinf(rec[0]["ci_high"])
