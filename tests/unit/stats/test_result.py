"""The Estimate record, the public surface, and long-to-wide helper."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import humeval.stats as hs
from humeval.errors import DataError
from humeval.stats import Estimate, to_frame, wide_from_long


def test_estimate_is_frozen_uniform_and_nan_equal() -> None:
    e = Estimate(0.5, n=3, method="x", extra={"a": 1})
    assert math.isnan(e.p_value) and math.isnan(e.ci_low)
    with pytest.raises(AttributeError):
        e.estimate = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        e.extra["a"] = 2  # type: ignore[index]
    assert e == Estimate(0.5, n=3, method="x", extra={"a": 1})
    assert e != Estimate(0.5, n=4, method="x", extra={"a": 1})
    assert not e.significant()
    assert Estimate(1.0, p_value=0.01).significant(0.05)
    frame = to_frame({"k": e, "j": Estimate(0.1, p_value=0.2)})
    assert list(frame.index) == ["k", "j"] and {
        "estimate",
        "ci_low",
        "ci_high",
        "p_value",
        "n",
        "method",
    } <= set(frame)


def test_public_names_are_exported() -> None:
    for name in (
        "krippendorff_alpha",
        "fleiss_kappa",
        "icc",
        "bradley_terry",
        "trueskill_ranking",
        "elo",
        "rank_by_scores",
        "spearman",
        "pearson",
        "kendall",
        "posthoc",
        "paired_bootstrap",
        "holm",
    ):
        assert name in hs.__all__ and callable(getattr(hs, name))
    assert sorted(hs.__all__) == sorted(set(hs.__all__))
    for name in hs.__all__:
        assert getattr(hs, name) is not None


def test_every_public_function_names_its_oracle() -> None:
    for name in hs.__all__:
        obj = getattr(hs, name)
        if (
            callable(obj)
            and not isinstance(obj, type)
            and name
            not in (
                "to_frame",
                "wide_from_long",
                "read_battles",
                "write_battles",
                "battles_from_scores",
                "adjust_pvalues",
            )
        ):
            assert "Checked against" in (obj.__doc__ or ""), name


def test_wide_from_long_pivots_and_rejects_duplicates() -> None:
    long = pd.DataFrame(
        {"item": [1, 1, 2, 2], "rater": ["a", "b", "a", "b"], "y": [1.0, 2.0, 3.0, 4.0]}
    )
    wide = wide_from_long(long, "item", "rater", "y")
    assert wide.to_numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert hs.icc(wide.to_numpy(), "1,1").n == 2
    with pytest.raises(DataError, match=r"2 rows share an \(item, rater\) pair, first \[1, 'a'\]"):
        wide_from_long(pd.concat([long, long.iloc[:1]]), "item", "rater", "y")
    with pytest.raises(DataError, match="Did you mean 'rater'"):
        wide_from_long(long, "item", "raters", "y")


def test_infinite_values_are_rejected_with_position() -> None:
    with pytest.raises(DataError, match=r"infinite value inf at index \(1,\)"):
        hs.pearson([1, np.inf, 3, 4], [1, 2, 3, 4])
    with pytest.raises(DataError, match="cannot be read as floats"):
        hs.spearman(["a", "b", "c", "d"], [1, 2, 3, 4])
