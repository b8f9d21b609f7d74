"""The per-output format column (``data.format``) and conversation outputs are checked before a study runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from humeval.errors import DataError
from humeval.files import write_jsonl
from humeval.study import StudyFolder

PROTOCOL = """
version: 1
study: {{name: f, seed: 1}}
data: {{files: [data/o.jsonl]}}
systems: [a, b]
criteria: [{{name: q, type: 2afc, question: "Which?"}}]
presentation: {{output_format: {fmt}}}
"""


def _study(root: Path, rows: list[dict], fmt: str = "text") -> StudyFolder:
    write_jsonl(root / "data" / "o.jsonl", rows)
    (root / "humeval.yaml").write_text(PROTOCOL.format(fmt=fmt), encoding="utf-8")
    return StudyFolder.open(root)


def test_format_column_and_list_conversation(tmp_path: Path) -> None:
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "**hello**"}]
    study = _study(tmp_path, [{"item_id": "1", "system": "a", "output": "plain"},
                              {"item_id": "1", "system": "b", "output": turns, "format": "conversation"}])
    texts = study.outputs().texts
    assert texts[("1", "a")].format == "" and texts[("1", "b")].format == "conversation"
    assert json.loads(texts[("1", "b")].output) == turns  # a JSON list in the data is kept as JSON text


def test_bad_format_and_bad_conversation_are_reported(tmp_path: Path) -> None:
    study = _study(tmp_path, [{"item_id": "1", "system": "a", "output": "x", "format": "html"},
                              {"item_id": "1", "system": "b", "output": "not a chat"}], fmt="conversation")
    with pytest.raises(DataError) as err:
        study.outputs()
    text = str(err.value)
    assert "1 row(s) name an unknown output format in column 'format' ('html'); valid: text, markdown, conversation" in text
    assert "1 conversation output(s) are not a JSON list" in text and "(1, b)" in text
