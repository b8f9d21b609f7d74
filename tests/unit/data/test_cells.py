"""Cells of users' files: what is text, what is a time, and the words of a refusal."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from humeval.data.cells import column_problems, text_cell, time_cell
from humeval.errors import DataError


@pytest.mark.parametrize(("value", "text"), [("a b", "a b"), (7, "7"), (np.int64(7), "7"), (None, ""), (pd.NA, ""),
                                             (np.str_("x"), "x")])
def test_text_cells(value: object, text: str) -> None:
    assert text_cell(value, where="f:2", what="system", layout="L") == text


@pytest.mark.parametrize(("value", "words"), [
    ("a\x00b", r"f:2: system holds a NUL character \(byte 0\) at 1: 'a\\x00b'; expected L"),
    (b"\xff\xfe", r"f:2: system is bytes \(b'\\xff\\xfe': a Parquet binary column\), not text or a number"),
    (["a", "b"], r"f:2: system is a list of 2 \(str: a Parquet list column or a JSON array\) \['a', 'b'\]"),
    (np.array(["a"]), r"f:2: system is a list of 1 \(str"),
    ({"a": 1}, r"f:2: system is a dict \{'a': 1\}, not text or a number"),
    (True, r"f:2: system is a boolean \(True\)"),
])
def test_cells_that_are_not_text_are_refused_with_where_and_layout(value: object, words: str) -> None:
    with pytest.raises(DataError, match=words):
        text_cell(value, where="f:2", what="system", layout="L")


def test_a_conversation_is_an_output_and_a_list_of_texts_references() -> None:
    turns = [{"role": "user", "content": "hi"}]
    assert column_problems([turns, "text", None], "output", source="f", kind="output", layout="L") == []
    assert column_problems([["a", "b"]], "references", source="f", kind="references", layout="L") == []
    assert column_problems([["a", "b"]], "output", source="f", kind="output", layout="L") == [
        "f: column 'output': 1 bad value(s): row 1: is a list of 2 (str: a Parquet list column or a JSON array) "
        "['a', 'b'], not text, or a conversation as a list of {role, content} objects; expected L"]
    bad = column_problems(pd.Series(["ok", "x\x00", b"b", "ok", 3, "y\x00"]), "item_id", source="f", kind="id",
                          layout="L", rows=lambda i: f"line {i + 10}")
    assert len(bad) == 1 and bad[0].startswith("f: column 'item_id': 3 bad value(s): line 11: holds a NUL")
    assert "line 12: is bytes" in bad[0] and "line 15: holds a NUL" in bad[0]


@pytest.mark.parametrize(("value", "iso"), [(0, "1970-01-01T00:00:00+00:00"), (1682351591.5, "2023-04-24T15:53:11.500000+00:00"),
                                            ("2026-03-09T22:16:08Z", "2026-03-09T22:16:08Z"), (None, ""), ("", "")])
def test_times(value: object, iso: str) -> None:
    assert time_cell(value, where="f", what="tstamp", layout="L") == iso


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e300, "NaN", "null", True, [1]])
def test_times_that_are_not_times_are_refused(value: object) -> None:
    with pytest.raises(DataError, match=r"f: tstamp .* is not a time"):
        time_cell(value, where="f", what="tstamp", layout="L")
