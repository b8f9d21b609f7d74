"""The AMT batch importer against the data card."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from humeval.data.dhe import DHE_BATCHES, read_amt_batch, read_dhe_batch
from humeval.errors import DataError


@pytest.mark.parametrize(("key", "share", "first"), [("v1", 0.875, "V1"), ("r1", 0.597, "CGA"), ("r2", 0.623, "CGA")])
def test_shares_match_data_card(shared_data: Path, key: str, share: float, first: str) -> None:
    b = read_dhe_batch(key, shared_data / "dhe")
    assert b.votes_for("CGA").shape == (500, 10)
    assert b.votes_for("CGA").mean() == pytest.approx(share, abs=5e-4)
    assert b.first_model1 == first
    assert b.frame["worker"].str.len().eq(12).all()  # hashed


def test_missing_columns_are_named(tmp_path: Path, shared_data: Path) -> None:
    src = pd.read_csv(shared_data / "dhe" / DHE_BATCHES["v1"], nrows=5)
    bad = tmp_path / "bad.csv"
    src.drop(columns=["Input.model2", "WorkerId"]).to_csv(bad, index=False)
    with pytest.raises(DataError, match=r"missing column\(s\) WorkerId, Input.model2"):
        read_amt_batch(bad)
    src2 = src.copy()
    src2.loc[2, "Answer.Selection.label"] = "Sentence C"
    src2.to_csv(bad, index=False)
    with pytest.raises(DataError, match="bad.csv:4: .*'Sentence C'"):
        read_amt_batch(bad)
    with pytest.raises(DataError, match="not found"):
        read_amt_batch(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="model 'X'"):
        read_dhe_batch("v1", shared_data / "dhe").votes_for("X")
