"""Prediction-powered records of the analysis plan, recomputed by hand from the same numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from humeval.analysis.judges import judge_estimates
from humeval.data.judges import JudgeScores
from humeval.protocol.models import Judge
from humeval.stats import ppi_mean, ppi_win_rate


def test_pairwise_verdicts_give_a_win_rate_per_pair():
    # humans judged items 1-4 of the pair (x, y), two judgements each; the judge gave a verdict on items 1-8
    rows = [("i1", "x", "y", "A"), ("i1", "y", "x", "B"), ("i2", "x", "y", "B"), ("i2", "x", "y", "tie"),
            ("i3", "y", "x", "A"), ("i3", "x", "y", "A"), ("i4", "x", "y", "A"), ("i4", "x", "y", "A")]
    frame = pd.DataFrame(rows, columns=["item_id", "system", "system_b", "choice"])
    verdicts = pd.DataFrame({"item_id": [f"i{k}" for k in range(1, 9)], "system_a": ["x", "y"] * 4,
                             "system_b": ["y", "x"] * 4, "outcome": [1, 1, 0, 0, 1, 0.5, 1, 0]})
    judge = JudgeScores(Judge(name="llm", file="v.csv", kind="verdicts"), verdicts)
    out = judge_estimates(frame, "2afc", judge, ["x", "y"], logged=False, confidence_level=0.9)
    # human outcome for x per item: i1 = (1 + 1)/2, i2 = (0 + 0.5)/2, i3 = (0 + 1)/2, i4 = 1
    human = np.array([1.0, 0.25, 0.5, 1.0])
    # judge outcome for x: rows with system_a = y count 1 - outcome
    judged = np.array([1, 0, 0, 1, 1, 0.5, 1, 1], dtype=float)
    expected = ppi_win_rate(human, judged[:4], judged[4:], confidence_level=0.9)
    (record,) = out["estimates"]
    assert (record["a"], record["b"]) == ("x", "y")
    assert record["estimate"] == pytest.approx(expected.estimate)
    assert record["ci_low"] == pytest.approx(expected.ci_low)
    # judge and human majority agree on i1 (x), i2 (y), i4 (x); i3 is a human tie (0.5): 3 of 4
    assert out["calibration"][0]["agreement_share"] == pytest.approx(0.75)


def test_rating_scores_on_the_log_scale_when_the_plan_logs():
    frame = pd.DataFrame({"item_id": ["i1", "i1", "i2", "i3"], "system": ["s"] * 4, "value": ["2", "8", "4", "1"]})
    scores = pd.DataFrame({"item_id": ["i1", "i2", "i3", "i4", "i5"], "system": ["s"] * 5,
                           "score": [1.0, 1.2, 0.1, 0.5, 0.9]})
    judge = JudgeScores(Judge(name="m", file="m.csv"), scores)
    out = judge_estimates(frame, "magnitude", judge, ["s"], logged=True, confidence_level=0.95)
    human = np.array([(np.log(2) + np.log(8)) / 2, np.log(4), np.log(1)])
    expected = ppi_mean(human, [1.0, 1.2, 0.1], [0.5, 0.9])
    assert out["estimates"][0]["estimate"] == pytest.approx(expected.estimate)
    assert out["calibration"][0]["bias"] == pytest.approx(np.mean([1.0, 1.2, 0.1] - human))
