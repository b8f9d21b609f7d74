"""The ``mqm`` task type: its MQM score (a hand-computed case), the same scores as the WMT MQM reader on the same
annotations, its checks, and the WMT MQM TSV it writes read back unchanged (a generated file and Google's own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest

from humeval.formats.mqm import read_mqm
from humeval.protocol.models import Protocol
from humeval.tasks import InvalidValue
from humeval.tasks.mqm import MQMWeights, mqm_score, mqm_tsv, mqm_value, mqm_weights

GOLDEN = Path(__file__).parents[1] / "golden" / "data" / "mqm_ted_ende.seg1-10.tsv"


def _criterion(**fields: object):  # type: ignore[no-untyped-def]
    return Protocol.model_validate({
        "study": {"name": "s", "seed": 1}, "data": {"files": ["d.jsonl"]},
        "criteria": [{"name": "mqm", "type": "mqm", "question": "Errors?", **fields}]}).criterion("mqm")


def _span(start: int, end: int, severity: str, category: str) -> dict[str, object]:
    return {"start": start, "end": end, "severity": severity, "category": category}


def test_a_hand_computed_mqm_score() -> None:
    c = _criterion()
    text = "Die Sonne verbrennt unsere periphere Sicht."
    # major mistranslation 5, minor punctuation 0.1, minor awkward 1: 6.1; value 100 - 4 x 6.1 = 75.6
    value = c.task.check(c, {"spans": [_span(42, 43, "minor", "Fluency/Punctuation"),
                                       _span(4, 9, "major", "Accuracy/Mistranslation"),
                                       _span(10, 19, "minor", "Style/Awkward")]}, "values.mqm", 1, [len(text)])
    assert [s["start"] for s in value["spans"]] == [4, 10, 42]  # sorted by position
    (row,) = c.task.long_rows(c, value, ["sysA"], {"participant_id": "p"}, None)
    spans = json.loads(row["spans"])
    assert [s["weight"] for s in spans] == [5.0, 1.0, 0.1]
    assert row["value"] == pytest.approx(100 - 4 * 6.1)
    assert mqm_score(pd.DataFrame({"spans": [row["spans"]]})).tolist() == pytest.approx([6.1])
    # a non-translation weighs 25 whatever its severity; with more the value stays at 0 (the score is not capped)
    worst = c.task.check(c, {"spans": [_span(0, 43, "minor", "Non-translation")]}, "values.mqm", 1, [43])
    (row,) = c.task.long_rows(c, worst, ["sysA"], {}, None)
    assert row["value"] == 0.0 and json.loads(row["spans"])[0]["weight"] == 25.0
    frame = pd.DataFrame({"spans": [json.dumps([_span(0, 1, "major", "Other")] * 6), "[]", ""]})
    assert mqm_score(frame).tolist() == [30.0, 0.0, 0.0]
    assert mqm_value(np.array([30.0, 0.0, 12.5])).tolist() == [0.0, 100.0, 50.0]


def test_the_protocol_s_weights_and_severities() -> None:
    c = _criterion(severities=["minor", "major", "critical"], weights={"major": 10, "critical": 100},
                   categories=["Accuracy", "Fluency/Punctuation"], worst=50)
    value = c.task.check(c, {"spans": [_span(0, 2, "critical", "Accuracy"), _span(3, 4, "major", "Accuracy"),
                                       _span(5, 6, "minor", "Fluency/Punctuation")]}, "v", 1, [10])
    (row,) = c.task.long_rows(c, value, ["s"], {}, None)
    assert [s["weight"] for s in json.loads(row["spans"])] == [100.0, 10.0, 0.1]
    assert row["value"] == 0.0  # 110.1 > worst 50
    assert "critical 100" in c.task.penalty_label(c) and "major 10" in c.task.penalty_label(c)
    assert mqm_weights(["x"], ["critical"], MQMWeights()).tolist() == [25.0]  # WMT's default
    # errors may overlap, as in WMT's data (a minor error inside a major one)
    nested = c.task.check(c, {"spans": [_span(0, 9, "major", "Accuracy"), _span(4, 5, "minor", "Accuracy")]}, "v", 1,
                          [10])
    assert [s["start"] for s in nested["spans"]] == [0, 4]


@pytest.mark.parametrize(("spans", "message"), [
    ([_span(0, 3, "major", "Fluency/Grammer")], r"values.mqm.spans\[0\]: category: 'Fluency/Grammer' is not one"),
    ([_span(0, 3, "critical", "Fluency/Grammar")], r"severity: expected one of minor, major, got 'critical'"),
    ([_span(0, 11, "major", "Other")], r"end 11 is past the end of the output \(10 characters\)"),
    ([_span(3, 3, "major", "Other")], r"0 <= start < end"),
    ([{"start": 0, "end": 3, "severity": "major"}], r"expected \{start, end, severity, category\}"),
    ("[]", r"expected a list of at most 50 errors"),
])
def test_refused_values_name_the_field_and_what_is_valid(spans: object, message: str) -> None:
    c = _criterion()
    with pytest.raises(InvalidValue, match=message):
        c.task.check(c, {"spans": spans}, "values.mqm", 1, [10])
    with pytest.raises(InvalidValue, match=r"expected \{spans\}"):
        c.task.check(c, {"score": 50, "spans": []}, "values.mqm", 1, [10])


def test_the_reader_and_the_task_type_score_alike() -> None:
    """Google's annotations read by the reader, and the same errors answered in a study: the same weights, values
    and spans column (the reader's scores equal WMT's published segment averages: tests/golden)."""
    read = read_mqm(GOLDEN)
    c = _criterion()
    assert mqm_score(read).tolist() == pytest.approx(
        read["spans"].map(lambda s: sum(e["weight"] for e in json.loads(s))).tolist(), abs=0)
    for row in read.itertuples():
        spans = [{k: s[k] for k in ("start", "end", "severity", "category")} for s in json.loads(row.spans)]
        value = c.task.check(c, {"spans": spans}, "values.mqm", 1, None)
        (ours,) = c.task.long_rows(c, value, [row.system], {}, None)
        by_place = sorted(json.loads(row.spans), key=lambda s: (s["start"], s["end"]))  # the reader: file order
        assert ours["value"] == row.value and json.loads(ours["spans"]) == by_place, (row.participant_id, row.item_id)


class _Shown(NamedTuple):
    output: str
    input: str


def _texts_and_documents(path: Path) -> tuple[dict[tuple[str, str], _Shown], dict[str, tuple[str, str]]]:
    """What a study holds of an MQM TSV: each (segment, system)'s target without marks and its source, and the
    documents of the segments."""
    table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, quoting=3)
    texts, docs = {}, {}
    for r in table.itertuples():
        texts[(r.seg_id, r.system)] = _Shown(r.target.replace("<v>", "").replace("</v>", ""), r.source)
        docs[r.seg_id] = (r.doc, r.doc_id)
    return texts, docs


FIXTURE = """system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment
sysA\ttalk.1\t1\t1\trater1\tI want to ask you all.\tIch möchte <v>euch</v> alle bitten.\tFluency/Register\tMajor\t
sysA\ttalk.1\t1\t1\trater1\tI want to ask you all.\tIch möchte euch alle bitten<v>.</v>\tFluency/Punctuation\tMinor\t
sysB\ttalk.1\t1\t1\trater1\tI want to ask you all.\tIch möchte Sie alle "bitten".\tNo-error\tNo-error\t
sysA\ttalk.1\t1\t1\trater2\tI want to ask you all.\t<v>Ich möchte</v> euch alle bitten.\tAccuracy/Mistranslation\tMinor\t
sysB\ttalk.1\t1\t1\trater2\tI want to ask you all.\tIch möchte Sie alle "bitten".\tNo-error\tNo-error\t
sysA\ttalk.2\t2\t2\trater1\tThe Sun burns our peripheral vision.\t<v>Sonnenbrand.</v>\tNon-translation!\tMajor\t
sysB\ttalk.2\t2\t2\trater1\tThe Sun burns our peripheral vision.\tDie Sonne verbrennt unsere <v>periphere</v> Sicht.\tTerminology/Inappropriate for context\tMinor\t
"""


@pytest.mark.parametrize("source", ["fixture", "golden"])
def test_the_tsv_written_reads_back_the_same(tmp_path: Path, source: str) -> None:
    path = GOLDEN if source == "golden" else tmp_path / "fixture.tsv"
    if source == "fixture":
        path.write_text(FIXTURE, encoding="utf-8")
    read = read_mqm(path)
    texts, docs = _texts_and_documents(path)
    written = tmp_path / "written.tsv"
    written.write_text(mqm_tsv(read, texts, documents=docs), encoding="utf-8")
    pd.testing.assert_frame_equal(read_mqm(written), read)
    # row by row the file itself: the same rows (the reader's order groups a judgement's errors)
    rows = sorted(path.read_text(encoding="utf-8").splitlines()[1:])
    assert sorted(written.read_text(encoding="utf-8").splitlines()[1:]) == rows


def test_a_tab_in_a_text_is_refused() -> None:
    read = pd.DataFrame({"participant_id": ["r"], "item_id": ["1"], "system": ["s"], "spans": ["[]"],
                         "criterion": ["mqm"], "kind": ["task"], "comment": [""]})
    with pytest.raises(InvalidValue, match=r"r/s/1: a WMT MQM TSV cell cannot hold a tab"):
        mqm_tsv(read, {("1", "s"): _Shown("a\tb", "src")})
    with pytest.raises(InvalidValue, match=r"no output of system 's' for item '1'"):
        mqm_tsv(read, {})
