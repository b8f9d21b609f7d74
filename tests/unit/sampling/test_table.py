from __future__ import annotations

import numpy as np
import pytest
from sampling_frames import make_frame

from humeval.errors import DataError
from humeval.sampling.table import ItemTable


def test_reshape_puts_every_value_in_its_cell(frame):
    table = ItemTable.from_long(frame.sample(frac=1.0, random_state=1))  # row order must not matter
    assert table.n_items == 40 and table.systems == ["s0", "s1", "s2", "s3"]
    row = frame[(frame.item_id == "i007") & (frame.system == "s2")].iloc[0]
    i = int(np.flatnonzero(table.item_ids == "i007")[0])
    assert table.outputs[i, 2] == row.output
    assert table.metrics["auto.m1"][i, 2] == row["auto.m1"]
    assert table.human["human.a0"][i, 2] == row["human.a0"]
    assert list(table.properties["topic"][:2]) in (["news", "sport"], ["sport", "news"])


def test_missing_system_output_is_named(frame):
    broken = frame.drop(index=5)
    with pytest.raises(DataError, match=r"1 item\(s\) lack outputs of some systems, e.g. 'i001' \(3 of 4\)"):
        ItemTable.from_long(broken)


def test_duplicate_pair_is_named(frame):
    import pandas as pd

    with pytest.raises(DataError, match="occur more than once, e.g. item 'i000' system 's0'"):
        ItemTable.from_long(pd.concat([frame, frame.head(1)]))


def test_unknown_metric_suggests_the_close_one(frame):
    table = ItemTable.from_long(frame)
    with pytest.raises(DataError, match=r"unknown metric column 'm11'. Did you mean 'auto.m1'\?"):
        table.metric("m11")


def test_aspect_missing_for_some_items_is_named():
    frame = make_frame()
    frame.loc[(frame.item_id == "i003") & (frame.system == "s1"), "human.a1"] = np.nan
    table = ItemTable.from_long(frame)
    with pytest.raises(DataError, match=r"aspect 'human.a1' is missing for 1 item\(s\), e.g. 'i003'"):
        table.scores(table.aspects())


def test_system_order_sorted_by_name_or_as_in_the_data():
    frame = make_frame(n_items=3, n_systems=3, seed=2)
    frame["system"] = frame["system"].map({"s0": "zeta", "s1": "alpha", "s2": "mu"})
    frame = frame.iloc[[1, 0, 2, 5, 3, 4, 8, 7, 6]]  # first appearance: alpha, zeta, mu
    by_name = ItemTable.from_long(frame)
    as_data = ItemTable.from_long(frame, system_order="data")
    assert by_name.systems == ["alpha", "mu", "zeta"] and as_data.systems == ["alpha", "zeta", "mu"]
    for table in (by_name, as_data):  # each cell still holds its own (item, system) row
        for _, r in frame.iterrows():
            i, j = list(table.item_ids).index(r["item_id"]), table.systems.index(r["system"])
            assert table.outputs[i, j] == r["output"] and table.metrics["auto.m1"][i, j] == r["auto.m1"]
    assert np.array_equal(as_data.outputs, by_name.with_system_order(["alpha", "zeta", "mu"]).outputs)
    with pytest.raises(DataError, match="unknown system order 'first'"):
        ItemTable.from_long(frame, system_order="first")  # type: ignore[arg-type]
