"""Streamed exports (``files.csv_chunks``, ``files.jsonl_chunks``) read back as pandas' own writers' files do."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from humeval.files import csv_chunks, jsonl_chunks

COLUMNS = ["participant_id", "criterion", "value", "choice", "seconds", "stop_seq"]
ROWS = [
    {"participant_id": "P1", "criterion": "quality", "value": math.nan, "choice": "A", "seconds": 1.5, "stop_seq": 0.0},
    {"participant_id": 'P"2, x', "criterion": "fluency", "value": 4.0, "choice": "", "seconds": None, "stop_seq": math.nan},
    {"participant_id": "P3\nline", "criterion": "naïve ✓", "value": -0.25, "choice": "", "seconds": 2.0, "stop_seq": math.nan},
]


@pytest.mark.parametrize("per_chunk", [1, 2, 1000])
def test_csv_chunks_read_back_like_pandas_to_csv(per_chunk: int) -> None:
    chunks = list(csv_chunks(ROWS, COLUMNS, rows_per_chunk=per_chunk))
    assert len(chunks) == (1 if per_chunk >= len(ROWS) else math.ceil(len(ROWS) / per_chunk))
    ours = pd.read_csv(io.BytesIO(b"".join(chunks)))
    reference = pd.read_csv(io.StringIO(pd.DataFrame(ROWS, columns=COLUMNS).to_csv(index=False)))
    pd.testing.assert_frame_equal(ours, reference)


def test_jsonl_chunks_read_back_like_pandas_to_json() -> None:
    ours = pd.read_json(io.BytesIO(b"".join(jsonl_chunks(ROWS, rows_per_chunk=2))), lines=True)
    reference = pd.read_json(io.StringIO(pd.DataFrame(ROWS, columns=COLUMNS).to_json(orient="records", lines=True)),
                             lines=True)
    pd.testing.assert_frame_equal(ours, reference)


def test_json_lines_are_read_as_json_loads_reads_each_line(tmp_path):
    """Blank lines are skipped, blanks around an object are allowed, and a line holding more than one
    value or a broken one is refused with its line number (the fast decoder changes none of this)."""
    import json

    import pytest

    from humeval.errors import DataError
    from humeval.files import iter_jsonl

    good = ['{"a": 1}', "", '  {"b": [1, 2], "c": "x\\u00e9"}  ', "\t", '{"d": NaN}', '{"e": {"f": null}}\r']
    path = tmp_path / "ok.jsonl"
    path.write_text("\n".join(good) + "\n", encoding="utf-8")
    got = list(iter_jsonl(path))
    assert [n for n, _ in got] == [1, 3, 5, 6]
    assert [json.dumps(r) for _, r in got] == [json.dumps(json.loads(line)) for line in good if line.strip()]
    for n, bad in enumerate(['{"a": 1} {"b": 2}', '{"a": 1},', '{"a": ', "[1, 2]"], start=1):
        path = tmp_path / f"bad{n}.jsonl"
        path.write_text('{"ok": true}\n' + bad + "\n", encoding="utf-8")
        with pytest.raises(DataError, match=rf"bad{n}.jsonl:2: (broken JSON line|each JSONL line must be an object)"):
            list(iter_jsonl(path))
