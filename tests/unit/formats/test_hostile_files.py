"""Hostile files given to every reader of users' files and to the outputs table: nesting 100,000 levels deep,
UTF-16 and UTF-32, Parquet list and binary columns, NUL characters in ids, NaN times, an MQM ``<v>`` never closed.

Each is a :class:`DataError` naming the file, the row and the layout expected (``validate`` and ``sample`` exit 1
with it, no traceback), or, for an encoding a byte-order mark names, the same table as the UTF-8 file gives.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from humeval import init_study, validate_study
from humeval.errors import DataError
from humeval.formats.external import read_judgement_file
from tests.cli import humeval

SAMPLES = Path(__file__).parent / "samples"
DEEP = 100_000


def _deep(levels: int = DEEP) -> Any:
    """A value nested ``levels`` deep, built without recursion (json.dumps would recurse: the text is built)."""
    return _Raw("[" * levels + "]" * levels)


class _Raw(str):
    """JSON text written as it is into a record (see :func:`_dumps`)."""


def _dumps(value: Any, indent: int | None = None) -> str:
    """``json.dumps`` that writes :class:`_Raw` values verbatim (a 100,000-level value cannot be built as objects)."""
    raws: list[str] = []

    def mark(v: Any) -> Any:
        if isinstance(v, _Raw):
            raws.append(v)
            return f"@@RAW{len(raws) - 1}@@"
        if isinstance(v, dict):
            return {k: mark(x) for k, x in v.items()}
        if isinstance(v, list):
            return [mark(x) for x in v]
        return v

    text = json.dumps(mark(value), indent=indent)
    for i, raw in enumerate(raws):
        text = text.replace(f'"@@RAW{i}@@"', raw)
    return text


@dataclass(frozen=True)
class Format:
    """A reader of JSON records: a sample, how a file of it is written, read, and where its second row's id is."""

    name: str
    suffix: str
    records: Callable[[], list[dict[str, Any]]]
    lines: bool  # JSON lines (else one array)
    read: Callable[[Path], pd.DataFrame]
    set_id: Callable[[dict[str, Any], str], None]  # set the second row's id (its system or item) to a value

    def write(self, path: Path, records: list[dict[str, Any]], encoding: str = "utf-8") -> Path:
        text = "".join(_dumps(r) + "\n" for r in records) if self.lines else _dumps(records, indent=2)
        path.write_bytes(text.encode(encoding))
        return path


def _battles() -> list[dict[str, Any]]:
    return [{"question_id": f"q{i}", "model_a": "gpt-4", "model_b": "vicuna-13b", "winner": w, "judge": f"u{i}",
             "tstamp": 1682351591.5 + i, "conversation_a": [{"role": "user", "content": "Hi é ✓"}]}
            for i, w in enumerate(["model_a", "tie", "model_b"])]


def _label_studio() -> list[dict[str, Any]]:
    return json.loads((SAMPLES / "labelstudio_export.json").read_text())


def _argilla() -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "item_id": f"i{i}", "system": "sysA", "fluency.responses": [4, 5],
             "fluency.responses.users": ["u1", "u2"]} for i in range(3)]


def _summeval() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (SAMPLES / "summeval_sample.jsonl").read_text().splitlines() if line.strip()]


def _set(*keys: str) -> Callable[[dict[str, Any], str], None]:
    def set_id(record: dict[str, Any], value: str) -> None:
        for key in keys[:-1]:
            record = record[key]
        record[keys[-1]] = value
    return set_id


FORMATS = [
    Format("fastchat-json", ".json", _battles, False, lambda p: read_judgement_file(p, "fastchat"), _set("model_a")),
    Format("fastchat-jsonl", ".jsonl", _battles, True, lambda p: read_judgement_file(p, "fastchat"), _set("judge")),
    Format("labelstudio", ".json", _label_studio, False, lambda p: read_judgement_file(p, "labelstudio"),
           _set("data", "system")),
    Format("argilla", ".json", _argilla, False, lambda p: read_judgement_file(p, "argilla"), _set("item_id")),
    Format("summeval", ".jsonl", _summeval, True, lambda p: read_judgement_file(p, "summeval"), _set("model_id")),
]
IDS = [f.name for f in FORMATS]


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_json_nested_100000_levels_is_refused_at_its_line(fmt: Format, tmp_path: Path) -> None:
    records = fmt.records()
    records[1]["hostile"] = _deep()
    path = fmt.write(tmp_path / f"deep{fmt.suffix}", records)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), start=1) if "[[[" in text)
    with pytest.raises(DataError, match=rf"deep{fmt.suffix}:{line}: JSON nested deeper than 200 levels"):
        fmt.read(path)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_utf16_and_utf32_are_read_as_the_utf8_file_is(fmt: Format, encoding: str, tmp_path: Path) -> None:
    reference = fmt.read(fmt.write(tmp_path / f"utf8{fmt.suffix}", fmt.records()))
    other = fmt.read(fmt.write(tmp_path / f"other{fmt.suffix}", fmt.records(), encoding))
    pd.testing.assert_frame_equal(other, reference)


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_a_nul_character_in_an_id_is_refused_with_its_row(fmt: Format, tmp_path: Path) -> None:
    records = fmt.records()
    fmt.set_id(records[1], "sys\x00B")
    path = fmt.write(tmp_path / f"nul{fmt.suffix}", records)
    with pytest.raises(DataError, match=r"nul\.\w+.*(battle 2|line 2|:2|task 2|record 2).*NUL character") as info:
        fmt.read(path)
    assert "expected " in str(info.value)


def test_a_broken_utf16_file_names_its_encoding(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(json.dumps(_battles()).encode("utf-16")[:-1])  # half a character at the end
    with pytest.raises(DataError, match=r"broken.json: the file starts as UTF-16 text .* save it as UTF-8"):
        read_judgement_file(path, "fastchat")


@pytest.mark.parametrize("value", [math.nan, math.inf, 1e300])
@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".parquet"])
def test_a_nan_battle_time_is_refused(suffix: str, value: float, tmp_path: Path) -> None:
    battles = _battles()
    battles[2]["tstamp"] = value
    path = tmp_path / f"battles{suffix}"
    if suffix == ".parquet":
        pd.DataFrame(battles).to_parquet(path, index=False)
    else:  # json writes NaN and Infinity as JavaScript literals, as FastChat's json.dump would
        FORMATS[0 if suffix == ".json" else 1].write(path, battles)
    where = {".json": "battle 3", ".jsonl": ":3", ".parquet": "row 3"}[suffix]
    with pytest.raises(DataError, match=rf"battles{suffix}:? ?{where}: tstamp .* is not a time"):
        read_judgement_file(path, "fastchat")


def test_a_nan_annotation_time_is_refused(tmp_path: Path) -> None:
    tasks = _label_studio()
    tasks[1]["annotations"][0]["created_at"] = math.nan
    path = FORMATS[2].write(tmp_path / "ls.json", tasks)
    with pytest.raises(DataError, match=r"ls.json: task 2, annotation 1: created_at nan is not a time"):
        read_judgement_file(path, "labelstudio")


def test_fastchat_parquet_binary_or_list_systems_are_refused_with_the_column(tmp_path: Path) -> None:
    frame = pd.DataFrame(_battles()).drop(columns="conversation_a")
    for bad, word in (([b"gpt-4", b"\xff\xfe", b"x"], "bytes"), ([["gpt-4"], ["x"], ["y"]], "list")):
        frame.assign(model_b=bad).to_parquet(tmp_path / "b.parquet", index=False)
        with pytest.raises(DataError, match=rf"b.parquet: column 'model_b': 3 bad value\(s\): row 1: is (a )?{word}"):
            read_judgement_file(tmp_path / "b.parquet", "fastchat")


def test_mqm_nul_utf16_and_an_unclosed_mark(tmp_path: Path) -> None:
    text = (SAMPLES / "mqm_sample.tsv").read_text()
    path = tmp_path / "mqm.tsv"
    path.write_text(text.replace("<v>euch</v>", "<v>euch", 1))
    with pytest.raises(DataError, match=r"mqm.tsv:2: the target .* has a <v> mark without its closing </v>.*expected "
                                        r"a WMT MQM TSV"):
        read_judgement_file(path, "mqm")
    path.write_text(text.replace("rater1", "rater\x001", 1))
    with pytest.raises(DataError, match=r"mqm.tsv:2: rater holds a NUL character"):
        read_judgement_file(path, "mqm")
    for encoding in ("utf-16", "utf-32", "utf-8-sig"):
        path.write_bytes(text.encode(encoding))
        pd.testing.assert_frame_equal(read_judgement_file(path, "mqm"), read_judgement_file(SAMPLES / "mqm_sample.tsv",
                                                                                             "mqm"))


# ---- the outputs table: validate_study, and the validate and sample commands -------------------------------------


def _study(tmp_path: Path, name: str) -> tuple[Path, list[dict[str, Any]]]:
    root = tmp_path / "study"
    init_study(root, "rating", items=3)
    rows = [json.loads(line) for line in (root / "data/outputs.jsonl").read_text().splitlines()]
    (root / "data/outputs.jsonl").unlink()
    protocol = root / "humeval.yaml"
    protocol.write_text(protocol.read_text().replace("files: [data/outputs.jsonl]", f"files: [data/{name}]"))
    return root, rows


def _hostile_outputs(kind: str, root: Path, rows: list[dict[str, Any]]) -> str:
    """Write the hostile data file ``kind`` into the study; the message its refusal must hold."""
    data = root / "data"
    if kind in ("deep-jsonl", "deep-json"):
        rows[1]["output"] = _deep()
        if kind == "deep-jsonl":
            (data / "outputs.jsonl").write_text("".join(_dumps(r) + "\n" for r in rows))
            return r"outputs.jsonl:2: JSON nested deeper than 200 levels"
        (data / "outputs.json").write_text(_dumps(rows, indent=2))
        return r"outputs.json:\d+: JSON nested deeper than 200 levels"
    if kind == "nul-jsonl":
        rows[1]["item_id"] = "item\x00-0001"
        (data / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return r"outputs.jsonl: column 'item_id': 1 bad value\(s\): (line|row) 2: holds a NUL character"
    if kind == "nul-csv":
        pd.DataFrame(rows).assign(system=lambda f: f["system"].where(f.index != 4, "base\x00line")).to_csv(
            data / "outputs.csv", index=False)
        return r"outputs.csv: column 'system': 1 bad value\(s\): row 5: holds a NUL character"
    frame = pd.DataFrame(rows)
    if kind == "list-parquet":
        frame["output"] = [[text, "x"] for text in frame["output"]]
        frame.to_parquet(data / "outputs.parquet", index=False)
        return (r"outputs.parquet: column 'output': 9 bad value\(s\): row 1: is a list "
                r"of 2 \(str: a Parquet list column")
    if kind == "binary-parquet":
        frame["output"] = [text.encode("utf-16") for text in frame["output"]]
        frame.to_parquet(data / "outputs.parquet", index=False)
        return r"outputs.parquet: column 'output': 9 bad value\(s\): row 1: is bytes \(b'\\xff\\xfe.*Parquet binary column"
    raise AssertionError(kind)


HOSTILE_OUTPUTS = {"deep-jsonl": "outputs.jsonl", "deep-json": "outputs.json", "nul-jsonl": "outputs.jsonl",
                   "nul-csv": "outputs.csv", "list-parquet": "outputs.parquet", "binary-parquet": "outputs.parquet"}


@pytest.mark.parametrize("kind", HOSTILE_OUTPUTS)
def test_hostile_outputs_are_refused_by_validate_and_sample(kind: str, tmp_path: Path) -> None:
    root, rows = _study(tmp_path, HOSTILE_OUTPUTS[kind])
    message = _hostile_outputs(kind, root, rows)
    problems = validate_study(root)
    assert any(re.search(message, p) for p in problems), problems
    for command in ("validate", "sample"):
        proc = humeval(command, root, expect=1)
        assert "Traceback" not in proc.stderr + proc.stdout
        assert re.search(message, proc.stderr + proc.stdout), (command, proc.stderr)
        assert "expected one row per (item, system)" in proc.stderr + proc.stdout


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
@pytest.mark.parametrize("name", ["outputs.jsonl", "outputs.csv", "outputs.json"])
def test_utf16_outputs_are_the_utf8_outputs(name: str, encoding: str, tmp_path: Path) -> None:
    from humeval.data.outputs import read_outputs
    from humeval.protocol import load_protocol

    root, rows = _study(tmp_path, name)
    frame = pd.DataFrame(rows)
    text = {"outputs.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
            "outputs.csv": frame.to_csv(index=False), "outputs.json": json.dumps(rows)}[name]
    (root / "data" / name).write_text(text, encoding="utf-8")
    protocol = load_protocol(root / "humeval.yaml")
    reference, problems = read_outputs(protocol.data, protocol.systems, root)
    assert problems == [] and len(reference) == 9
    (root / "data" / name).write_bytes(text.encode(encoding))
    assert validate_study(root) == []
    other, problems = read_outputs(protocol.data, protocol.systems, root)
    assert problems == []
    pd.testing.assert_frame_equal(other, reference)


def test_a_fastchat_log_is_read_in_memory_proportional_to_the_battles_kept(tmp_path: Path) -> None:
    """benchmarks/bench_readers.py on a 20 MB log (the benchmark's 200 MB: 0.59x): the import keeps the columns
    judgements need, never the conversations, and reads the array a piece at a time; every column kept takes more."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import bench_readers

    path = tmp_path / "clean_battle.json"
    battles = bench_readers.write_fastchat(path, 20)
    result = bench_readers.measure(path, "import", timeout=240)
    assert result["rows"] == battles and result["ratio"] <= 1.5, result
    everything = bench_readers.measure(path, "all-columns", timeout=240)
    assert everything["rows"] == battles and everything["peak_mb"] > result["peak_mb"], (everything, result)


def test_a_conversation_output_nested_100000_levels_is_a_problem_not_a_recursion(tmp_path: Path) -> None:
    root, rows = _study(tmp_path, "outputs.csv")
    frame = pd.DataFrame(rows).assign(format="")
    frame.loc[1, ["output", "format"]] = ["[" * DEEP + "]" * DEEP, "conversation"]
    frame.to_csv(root / "data" / "outputs.csv", index=False)
    problems = validate_study(root)
    assert any("1 conversation output(s) are not a JSON list" in p and "JSON nested deeper than 200 levels" in p
               for p in problems), problems
    proc = humeval("validate", root, expect=1)
    assert "Traceback" not in proc.stderr and "nested deeper than 200 levels" in proc.stderr


def test_import_refuses_hostile_judgement_files_with_exit_1(tmp_path: Path) -> None:
    root = tmp_path / "pairwise"
    init_study(root, "pairwise", items=3)
    humeval("run", root, expect=0)
    deep, nul = _battles(), _battles()
    deep[1]["hostile"] = _deep()
    nul[2]["judge"] = "u\x002"
    cases = [(FORMATS[0].write(tmp_path / "deep.json", deep), r"deep.json:\d+: JSON nested deeper than 200 levels"),
             (FORMATS[1].write(tmp_path / "nul.jsonl", nul), r"nul.jsonl: column 'judge': 1 bad value\(s\): line 3: "
                                                              r"holds a NUL character")]
    for path, message in cases:
        proc = humeval("import", root, "fastchat", path, expect=1)
        assert "Traceback" not in proc.stderr and re.search(message, proc.stderr), proc.stderr
        assert "expected a FastChat battle log" in proc.stderr


def test_references_are_text_or_lists_of_texts(tmp_path: Path) -> None:
    root, rows = _study(tmp_path, "outputs.parquet")
    frame = pd.DataFrame(rows).assign(references=[["a ref", "another"]] * len(rows))
    frame.to_parquet(root / "data" / "outputs.parquet", index=False)
    assert validate_study(root) == []  # a list of references is read, one a line
    frame.assign(references=[b"\xff\xfe"] * len(rows)).to_parquet(root / "data" / "outputs.parquet", index=False)
    assert any(re.search(r"column 'references': 9 bad value\(s\): row 1: is bytes", p) for p in validate_study(root))
    frame.loc[2, "references"] = ["fine", "not\x00fine"]
    frame.to_parquet(root / "data" / "outputs.parquet", index=False)
    assert any(re.search(r"column 'references': 1 bad value\(s\): row 3: holds a NUL character \(byte 0\) in "
                         r"reference 2", p) for p in validate_study(root))


def test_fastchat_parquet_is_read_by_the_columns_judgements_need(tmp_path: Path) -> None:
    frame = pd.DataFrame(_battles())
    frame.to_parquet(tmp_path / "b.parquet", index=False)
    judged = read_judgement_file(tmp_path / "b.parquet", "fastchat")
    assert judged["choice"].tolist() == ["A", "tie", "B"] and judged["participant_id"].tolist() == ["u0", "u1", "u2"]
    frame[["question_id"]].to_parquet(tmp_path / "b.parquet", index=False)
    with pytest.raises(DataError, match=r"b.parquet: row 1: missing field 'model_a', 'model_b', 'winner' \(found: "
                                        r"question_id\)"):
        read_judgement_file(tmp_path / "b.parquet", "fastchat")
