"""Descriptive intervals stay on bounded scales, and the report says so in words."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from humeval.analysis.describe import describe, scale_bounds
from humeval.protocol.models import ESA, Likert, Magnitude, Slider


def _frame(values: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"system": s, "item_id": f"i{i}", "score": v} for s, vs in values.items()
                         for i, v in enumerate(vs)])


def test_likert_interval_clipped_to_the_scale() -> None:
    # mean 4.75 of [5, 5, 5, 4]: t half-width = t(0.975, 3) * 0.5 / 2 = 3.182 * 0.25 = 0.7956 -> [3.954, 5.546]
    rec = describe(_frame({"a": [5, 5, 5, 4], "b": [3, 3, 4, 2]}), ["a", "b"], 0.05, bounds=(1.0, 5.0))
    half = sps.t.ppf(0.975, 3) * np.std([5, 5, 5, 4], ddof=1) / 2
    assert rec[0]["ci_low"] == pytest.approx(4.75 - half) and rec[0]["ci_high"] == 5.0
    assert rec[0]["clipped_to"] == [1.0, 5.0] and "clipped_to" not in rec[1]


def test_slider_and_magnitude_bounds() -> None:
    rec = describe(_frame({"a": [100, 100, 60], "b": [0, 0, 30]}), ["a", "b"], 0.05, bounds=(0.0, 100.0))
    assert rec[0]["ci_high"] == 100.0 and rec[1]["ci_low"] == 0.0
    assert scale_bounds(Likert(name="q", type="likert", question="?", points=7), False) == (1.0, 7.0)
    assert scale_bounds(Slider(name="q", type="slider", question="?", min=-1, max=1), False) == (-1.0, 1.0)
    assert scale_bounds(ESA(name="q", type="esa", question="?"), False) == (0.0, 100.0)
    mag = Magnitude(name="q", type="magnitude", question="?", standard={"text": "x"})
    assert scale_bounds(mag, True) is None and scale_bounds(mag, False)[0] == 0.0
    rec = describe(_frame({"a": [1, 1, 200]}), ["a"], 0.05, bounds=scale_bounds(mag, False))
    assert rec[0]["ci_low"] == 0.0 and rec[0]["clipped_to"] == [0.0, None] and not math.isinf(rec[0]["ci_high"])
