from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sampling_frames import make_frame

from humeval.errors import DataError
from humeval.sampling import ItemTable, get_sampler
from humeval.sampling.phases import advance, merge_scores


def test_phases_advance_as_scores_arrive():
    frame = make_frame(n_items=40)
    sampler = get_sampler("casf", phases=4)
    full = ItemTable.from_long(frame)
    replay = advance(sampler, full, 20, seed=2)
    assert replay.complete and not replay.waiting
    outputs = frame.drop(columns=[c for c in frame.columns if c.startswith("human.")])
    step = advance(sampler, ItemTable.from_long(outputs), 20, seed=2)
    assert step.waiting and step.phases_done == 1 and len(step.rows) == 5
    for done in (2, 3, 4):
        ids = set(full.item_ids[step.rows])
        scores = frame[frame.item_id.isin(ids)][["item_id", "system", "human.a0", "human.a1"]]
        step = advance(sampler, ItemTable.from_long(merge_scores(outputs, scores)), 20, seed=2)
        assert step.phases_done == done
    assert list(step.rows) == list(replay.rows) and not step.waiting


def test_merge_scores_refuses_unknown_pairs_and_missing_columns():
    frame = make_frame(n_items=5)
    with pytest.raises(DataError, match="not in the data"):
        merge_scores(frame, pd.DataFrame({"item_id": ["zzz"], "system": ["s0"], "human.a0": [1.0]}))
    with pytest.raises(DataError, match="no human score columns"):
        merge_scores(frame, pd.DataFrame({"item_id": ["i000"], "system": ["s0"], "score": [1.0]}))
    merged = merge_scores(frame, pd.DataFrame({"item_id": ["i000"], "system": ["s0"], "human.x": ["2.5"]}))
    assert merged["human.x"].notna().sum() == 1 and "human.a0" not in merged
    assert np.isclose(merged.loc[0, "human.x"], 2.5)
