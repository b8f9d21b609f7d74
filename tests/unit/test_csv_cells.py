"""CSV cells a spreadsheet would run (OWASP's CSV injection rule): neutralised by every writer, given back by the readers."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from humeval.cli._common import Format, emit_rows
from humeval.data.readers import read_table, write_table
from humeval.files import FORMULA_STARTS, csv_cell, csv_chunks, csv_text, csv_uncell, frame_csv


@pytest.mark.parametrize("text", ["=1+1", "+1+1", "-a", "@SUM(A1)", "\t=1", "\r=1", "-", "+", "=", "--1", "-1-1", "-1e"])
def test_a_formula_start_gets_a_quote(text: str) -> None:
    assert csv_cell(text) == "'" + text
    assert csv_uncell(csv_cell(text)) == text


@pytest.mark.parametrize("value", ["-1.5", "+2", "-0", ".5", "-.5e-3", "1E+9", -1.5, -3, None, 2.0, "", "plain", "a=b", " =x",
                                   "'quoted", "''"])
def test_numbers_and_other_texts_are_left_alone(value: object) -> None:
    assert csv_cell(value) == value
    assert csv_uncell(value) == value


def test_a_quote_before_a_formula_start_is_kept_apart() -> None:
    # a text that already reads '=x is written ''=x, so that reading gives '=x back and not =x
    assert csv_cell("'=x") == "''=x" and csv_uncell("''=x") == "'=x" and csv_uncell("'=x") == "=x"
    assert csv_cell("'-1.5") == "''-1.5"


@given(st.text(alphabet=st.sampled_from("=+-@\t\r'0123456789.eE ax\n\","), max_size=8))
def test_every_text_comes_back(text: str) -> None:
    cell = csv_cell(text)
    assert csv_uncell(cell) == text
    if cell[:1] in FORMULA_STARTS:  # only a plain number, left alone, starts with one of them
        assert cell == text and float(cell) == float(cell)


def _read(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_every_writer_neutralises_and_a_carriage_return_stays_inside_its_cell() -> None:
    rows = [{"id": "=cmd", "text": "a\rb", "score": -1.5}, {"id": "\r=2", "text": "+x", "score": 2}]
    expected = [["id", "text", "score"], ["'=cmd", "a\rb", "-1.5"], ["'\r=2", "'+x", "2"]]
    streamed = b"".join(csv_chunks(rows, ["id", "text", "score"])).decode()
    assert _read(streamed) == expected
    assert _read(csv_text([["id", "text", "score"], *([r["id"], r["text"], r["score"]] for r in rows)])) == expected
    framed = _read(frame_csv(pd.DataFrame(rows)))
    assert framed[:2] == expected[:2] and framed[2] == ["'\r=2", "'+x", "2.0"]  # a float column as pandas writes it


def test_the_command_lines_csv_output(capsys: pytest.CaptureFixture[str]) -> None:
    emit_rows([{"judge": "@llm", "cost": -0.5, "note": "-"}], Format.csv)
    assert _read(capsys.readouterr().out) == [["judge", "cost", "note"], ["'@llm", "-0.5", "'-"]]


def test_a_table_humeval_writes_reads_back_as_written(tmp_path: Path) -> None:
    frame = pd.DataFrame({"item_id": ["-a", "=b", "'=c", "d"], "system": ["@s", "+t", "u", "v"],
                          "score": [-1.5, 2.0, 0.0, 1.0]})
    path = write_table(tmp_path / "judge.csv", frame)
    raw = _read(path.read_text(encoding="utf-8"))
    assert [r[0] for r in raw[1:]] == ["'-a", "'=b", "''=c", "d"]
    back = read_table(path)
    assert back["item_id"].tolist() == ["-a", "=b", "'=c", "d"] and back["system"].tolist() == ["@s", "+t", "u", "v"]
    assert back["score"].astype(float).tolist() == [-1.5, 2.0, 0.0, 1.0]
