"""Data files: every reading problem is a DataError naming file, line or column."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from humeval.data import load_outputs, read_table
from humeval.errors import DataError
from humeval.protocol import parse_protocol

PROTOCOL = {
    "study": {"name": "s", "seed": 1},
    "data": {"files": ["d.jsonl"]},
    "criteria": [{"name": "f", "type": "likert", "question": "?"}],
}


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


ROWS = [
    {"item_id": i, "system": s, "output": f"{s} says {i}", "input": f"in {i}"}
    for i in ("a", "b")
    for s in ("x", "y")
]


def test_read_formats_agree(tmp_path: Path):
    frame = pd.DataFrame(ROWS)
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_parquet(tmp_path / "d.parquet", index=False)
    _write_jsonl(tmp_path / "d.jsonl", ROWS)
    for name in ("d.csv", "d.parquet", "d.jsonl"):
        pd.testing.assert_frame_equal(read_table(tmp_path / name), frame)


def test_broken_jsonl_line_named(tmp_path: Path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"item_id": "a"}\n{"item_id": "b",\n')
    with pytest.raises(DataError, match=r"d.jsonl:2: broken JSON line"):
        read_table(path)


def test_jsonl_line_not_object(tmp_path: Path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"item_id": "a"}\n[1, 2]\n')
    with pytest.raises(DataError, match=r"d.jsonl:2: each JSONL line must be an object, got list"):
        read_table(path)


def test_missing_file(tmp_path: Path):
    with pytest.raises(DataError, match="data file not found"):
        read_table(tmp_path / "nope.csv")


def test_unknown_suffix(tmp_path: Path):
    (tmp_path / "d.txt").write_text("x")
    with pytest.raises(DataError, match=r"unsupported file type .\.txt.\. Use one of: \.jsonl, \.csv, \.tsv, \.json, \.parquet"):
        read_table(tmp_path / "d.txt")


def test_empty_file(tmp_path: Path):
    (tmp_path / "d.jsonl").write_text("\n")
    with pytest.raises(DataError, match="no rows"):
        read_table(tmp_path / "d.jsonl")


def test_csv_missing_column_did_you_mean(tmp_path: Path):
    pd.DataFrame([{"item_id": "a", "sytem": "x", "output": "o"}]).to_csv(tmp_path / "d.csv", index=False)
    p = parse_protocol(PROTOCOL | {"data": {"files": ["d.csv"]}})
    with pytest.raises(DataError) as info:
        load_outputs(p, tmp_path)
    assert "missing column 'system'. Did you mean 'sytem'?" in str(info.value)


def test_duplicate_item_system(tmp_path: Path):
    _write_jsonl(tmp_path / "d.jsonl", ROWS + [ROWS[0]])
    with pytest.raises(DataError, match=r"repeat an \(item, system\) pair, e.g. \(a, x\)"):
        load_outputs(parse_protocol(PROTOCOL), tmp_path)


def test_item_missing_a_system(tmp_path: Path):
    _write_jsonl(tmp_path / "d.jsonl", ROWS[:3])
    with pytest.raises(DataError, match=r"1 item\(s\) lack outputs of some systems, e.g. b \(1 of 2\)"):
        load_outputs(parse_protocol(PROTOCOL), tmp_path)


def test_unknown_system_in_protocol(tmp_path: Path):
    _write_jsonl(tmp_path / "d.jsonl", ROWS)
    with pytest.raises(DataError, match=r"systems\[1\]: system 'z' is not in the data"):
        load_outputs(parse_protocol(PROTOCOL | {"systems": ["x", "z"]}), tmp_path)


def test_wide_layout_equals_long(tmp_path: Path):
    _write_jsonl(tmp_path / "d.jsonl", ROWS)
    wide = pd.DataFrame(ROWS).pivot(index=["item_id", "input"], columns="system", values="output").reset_index()
    wide.to_csv(tmp_path / "w.csv", index=False)
    long = load_outputs(parse_protocol(PROTOCOL), tmp_path)
    p_wide = parse_protocol(PROTOCOL | {"data": {"files": ["w.csv"], "layout": "wide"}, "systems": ["x", "y"]})
    from_wide = load_outputs(p_wide, tmp_path)
    key = ["item_id", "system"]
    cols = ["item_id", "system", "output", "input"]
    pd.testing.assert_frame_equal(
        long.sort_values(key)[cols].reset_index(drop=True), from_wide.sort_values(key)[cols].reset_index(drop=True)
    )


def test_references_list_joined(tmp_path: Path):
    rows = [r | {"references": ["r1", "r2"]} for r in ROWS]
    _write_jsonl(tmp_path / "d.jsonl", rows)
    out = load_outputs(parse_protocol(PROTOCOL), tmp_path)
    assert (out["references"] == "r1\nr2").all()


def test_a_latin1_csv_names_its_line_and_says_save_as_utf8(tmp_path: Path):
    path = tmp_path / "d.csv"
    text = "item_id,system,output\na,x,plain\na,y,Café Rouge serves French food\n"
    path.write_bytes(text.encode("latin-1"))  # é is the one byte 0xe9 in Latin-1, two bytes in UTF-8
    with pytest.raises(DataError) as info:
        read_table(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: byte 0xe9 is not UTF-8")
    assert "'a,y,Café Rouge serves French food'" in message and "save it as UTF-8" in message
    path.write_bytes(text.encode("utf-8-sig"))  # the same text as UTF-8, with the byte-order mark Excel writes
    assert read_table(path)["output"].tolist() == ["plain", "Café Rouge serves French food"]


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_the_csv_delimiter_is_found_in_the_header_line(tmp_path: Path, delimiter: str):
    frame = pd.DataFrame(ROWS)
    frame["output"] = frame["output"] + ", with a comma; and a semicolon"
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False, sep=delimiter)
    pd.testing.assert_frame_equal(read_table(path), frame)


def test_a_one_column_csv_reads_as_comma_separated(tmp_path: Path):
    path = tmp_path / "d.csv"
    path.write_text("item_id\na\nb\n")
    assert read_table(path)["item_id"].tolist() == ["a", "b"]


def test_an_unknown_delimiter_is_one_problem_saying_which_delimiters_work(tmp_path: Path):
    from humeval.data import require_columns

    path = tmp_path / "d.csv"
    path.write_text("item_id|system|output\na|x|hello\n")
    problems = require_columns(read_table(path), ["item_id", "system", "output"], source=str(path))
    assert problems == [(f"{path}: the header line is one column, 'item_id|system|output': separate its columns with "
                         "a comma, a semicolon or a tab (the delimiters a CSV file may use)")]
