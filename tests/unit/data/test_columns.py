"""The outputs read without pandas (``humeval validate``, ``lock``) equal the pandas reader's, problems included."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from humeval.data.columns import OutputColumns, check_output_columns, read_output_columns
from humeval.data.outputs import check_outputs, read_outputs
from humeval.files import write_jsonl
from humeval.protocol import parse_protocol

TURNS = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def _protocol(data: dict, systems: list[str], fmt: str = "text", **extra: object):
    doc = {"version": 1, "study": {"name": "c", "seed": 1}, "data": data, "systems": systems,
           "criteria": [{"name": "q", "type": "likert", "question": "How good?", "points": 5}],
           "presentation": {"output_format": fmt}, **extra}
    return parse_protocol(yaml.safe_load(yaml.safe_dump(doc)))


def _both(protocol, root: Path) -> tuple[tuple, tuple]:
    light = read_output_columns(protocol, root)
    assert light is not None
    frame, problems = read_outputs(protocol.data, protocol.systems, root)
    return (light[0], light[1]), (OutputColumns.of(frame), problems)


def _same(protocol, root: Path) -> list[str]:
    (cols, problems), (ref_cols, ref_problems) = _both(protocol, root)
    assert problems == ref_problems
    if problems:
        return problems
    assert [list(c) for c in (cols.item_id, cols.system, cols.output, cols.format)] == \
           [list(c) for c in (ref_cols.item_id, ref_cols.system, ref_cols.output, ref_cols.format)]
    checked = check_output_columns(replace(cols, where=()), protocol)  # the pandas reader knows no lines
    assert checked == check_outputs(read_outputs(protocol.data, protocol.systems, root)[0], protocol)
    return checked


def test_long_layout_with_every_kind_of_problem(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", [
        {"item_id": 1, "system": "a", "output": "one"},
        {"item_id": 1, "system": "b", "output": TURNS, "format": "conversation"},
        {"item_id": "2", "system": "a", "output": "x", "format": " html "},
        {"item_id": "2", "system": "a", "output": None, "format": None},
        {"item_id": " ", "system": "b", "output": "blank id"},
        {"item_id": "3", "system": "b", "output": "not a chat", "format": "conversation"},
    ])
    write_jsonl(tmp_path / "b.jsonl", [{"item_id": "4", "system": "c", "output": "another file", "extra": 1}])
    protocol = _protocol({"files": ["a.jsonl", "b.jsonl"]}, ["a", "b", "z"])
    problems = _same(protocol, tmp_path)
    text = "\n".join(problems)
    for expected in ("1 row(s) with an empty item id", "2 rows repeat an (item, system) pair, e.g. (2, a)",
                     "unknown output format", "1 conversation output(s) are not a JSON list", "(3, b)",
                     "systems[2]: system 'z' is not in the data", "item(s) lack outputs of some systems"):
        assert expected in text
    assert _same(_protocol({"files": ["a.jsonl"]}, [], fmt="conversation"), tmp_path)  # every text output a chat
    located = "\n".join(check_output_columns(read_output_columns(protocol, tmp_path)[0], protocol))
    assert f"(2, a); {tmp_path / 'a.jsonl'}:4 repeats {tmp_path / 'a.jsonl'}:3;" in located  # lines 3 and 4: (2, a)


def test_wide_layout_renamed_columns_and_a_clean_study(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "w.jsonl", [
        {"id": "i1", "sys1": "a text", "sys2": "**b**", "fmt": "markdown", "src": "in"},
        {"id": "i2", "sys1": "c", "sys2": None, "fmt": ""},
    ])
    protocol = _protocol({"files": ["w.jsonl"], "layout": "wide", "item_id": "id", "format": "fmt", "input": "src"},
                         ["sys1", "sys2"])
    assert _same(protocol, tmp_path) == []
    write_jsonl(tmp_path / "l.jsonl", [{"sample": s, "model": m, "text": f"{s}{m}"} for s in "xy" for m in "pq"])
    protocol = _protocol({"files": ["l.jsonl"], "item_id": "sample", "system": "model", "output": "text"}, [])
    assert _same(protocol, tmp_path) == []


def test_missing_files_and_columns_are_the_same_problems(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "m.jsonl", [{"item_id": "1", "sytem": "a", "output": "o"}])
    (tmp_path / "broken.jsonl").write_text('{"item_id": "1"}\n{"item_id": \n', encoding="utf-8")
    protocol = _protocol({"files": ["m.jsonl", "gone.jsonl", "broken.jsonl"], "properties": ["topic"]}, [])
    problems = _same(protocol, tmp_path)
    assert any("missing column 'system'. Did you mean 'sytem'?" in p for p in problems)
    assert any("missing column 'topic'" in p for p in problems)
    assert any("gone.jsonl: data file not found" in p for p in problems)
    assert any("broken.jsonl:2: broken JSON line" in p for p in problems)


@pytest.mark.parametrize("rows", [
    [{"item_id": 1.5, "system": "a", "output": "o"}],  # pandas writes a float id as '1.5', an int one as '1'
    [{"item_id": "1", "system": "a", "output": "o"}, {"system": "a", "output": "no id"}],  # a missing id: 'nan'
    [{"item_id": "1", "system": "a", "output": 7}],  # an int64 column of outputs
    [{"item_id": "1", "system": "a", "output": "o", "item": "clash"}],  # two columns would be named item_id
])
def test_what_pandas_reads_differently_is_left_to_pandas(tmp_path: Path, rows: list[dict]) -> None:
    write_jsonl(tmp_path / "o.jsonl", rows)
    assert read_output_columns(_protocol({"files": ["o.jsonl"], "item_id": "item"} if "item" in rows[0]
                                         else {"files": ["o.jsonl"]}, []), tmp_path) is None


def test_csv_is_left_to_pandas(tmp_path: Path) -> None:
    (tmp_path / "o.csv").write_text("item_id,system,output\n1,a,x\n", encoding="utf-8")
    assert read_output_columns(_protocol({"files": ["o.csv"]}, []), tmp_path) is None
