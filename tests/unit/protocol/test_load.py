"""Protocol parsing: one clear message per problem, with file, line and field path."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval.errors import ProtocolError
from humeval.protocol import Protocol, load_protocol, parse_protocol
from humeval.templates import TEMPLATES, init_study

MINIMAL = {
    "study": {"name": "s", "seed": 3},
    "data": {"files": ["data/outputs.jsonl"]},
    "criteria": [{"name": "fluency", "type": "likert", "question": "How fluent?"}],
}


def _problems(data: dict) -> list[str]:
    with pytest.raises(ProtocolError) as info:
        parse_protocol(data, source="humeval.yaml")
    return info.value.problems


def test_minimal_protocol_gets_defaults():
    p = parse_protocol(MINIMAL)
    assert p.version == 1
    assert p.sampling.method == "auto" and p.sampling.rate == 1.0
    assert p.design.judgements_per_item == 3
    assert p.criterion("fluency").points == 5


def test_models_are_frozen():
    p = parse_protocol(MINIMAL)
    with pytest.raises(Exception, match="frozen"):
        p.study.seed = 4  # type: ignore[misc]


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_templates_parse(tmp_path: Path, template: str):
    init_study(tmp_path / template, template, items=6)
    p = load_protocol(tmp_path / template)
    assert isinstance(p, Protocol) and p.criteria


def test_unknown_key_did_you_mean():
    data = MINIMAL | {"sampling": {"methd": "random"}}
    (msg,) = _problems(data)
    assert "sampling.methd: unknown key 'methd'" in msg
    assert "Did you mean 'method'?" in msg


def test_unknown_top_level_section():
    (msg,) = _problems(MINIMAL | {"analysys": {}})
    assert "analysys: unknown key" in msg and "'analysis'" in msg


def test_misspelt_criterion_type():
    data = MINIMAL | {"criteria": [{"name": "f", "type": "likret", "question": "q"}]}
    (msg,) = _problems(data)
    assert "criteria[0].type: unknown type 'likret'" in msg
    assert "Did you mean 'likert'?" in msg and "2afc" in msg


def test_wrong_type_shows_value():
    data = MINIMAL | {"design": {"judgements_per_item": "three"}}
    (msg,) = _problems(data)
    assert "design.judgements_per_item" in msg and "'three'" in msg


def test_out_of_range_value():
    (msg,) = _problems(MINIMAL | {"sampling": {"rate": 1.5}})
    assert "sampling.rate" in msg and "1.5" in msg


def test_missing_required_key():
    data = {k: v for k, v in MINIMAL.items() if k != "study"}
    (msg,) = _problems(data)
    assert "study: required key is missing" in msg


def test_field_inside_a_criterion_variant():
    data = MINIMAL | {"criteria": [{"name": "f", "type": "likert", "question": "q", "pointz": 7}]}
    (msg,) = _problems(data)
    assert "criteria[0].pointz: unknown key" in msg and "'points'" in msg


def test_even_majority_refused():
    (msg,) = _problems(MINIMAL | {"assignment": {"strategy": "majority", "workers": 4}})
    assert "odd" in msg and "4" in msg


def test_several_problems_reported_together():
    data = MINIMAL | {"sampling": {"methd": "x"}, "design": {"judgements_per_item": 0}}
    assert len(_problems(data)) == 2


def test_line_numbers_from_yaml(tmp_path: Path):
    (tmp_path / "humeval.yaml").write_text(
        "study: {name: s, seed: 1}\ndata: {files: [d.jsonl]}\ncriteria:\n  - name: f\n    type: likret\n    question: q\n"
    )
    with pytest.raises(ProtocolError) as info:
        load_protocol(tmp_path)
    assert "humeval.yaml:5: criteria[0].type" in str(info.value)


def test_malformed_yaml_names_line(tmp_path: Path):
    (tmp_path / "humeval.yaml").write_text("study:\n  name: [unclosed\n  seed: 1\n")
    with pytest.raises(ProtocolError, match=r"humeval.yaml:\d+:\d+: malformed YAML"):
        load_protocol(tmp_path)


@pytest.mark.parametrize(("text", "where", "hint"), [
    ("criteria:\n  - name: q\n    question: Which is better: A or B?\n", "3:30",
     'a value holding \': \' must be quoted, e.g. question: "Which is better: A or B?"'),
    ("study:\n  name: x\n   seed: 1\n", "3:8", "this line is indented further than the key above it"),
    ("study:\n  name: x\n seed: 1\n", "3:2", "the indentation of this line matches no section above it"),
    ("criteria:\n  - name: q\n  type: 2afc\n", "3:3", "the indentation of this line matches no section above it"),
    ("study:\n\tname: x\n", "2:1", "a tab in the indentation; YAML indents with spaces only"),
    ('study:\n  name: "x\n  seed: 1\n', "4:1", "a quoted value is not closed"),
    ("systems: [a, b\nseed: 1\n", "2:5", "in a [a, b] list, close the bracket"),
    ("study:\n  name: @x\n", "2:9", "a value starting with @, ` or % must be quoted"),
])
def test_a_yaml_syntax_error_says_its_likely_cause(tmp_path: Path, text: str, where: str, hint: str):
    (tmp_path / "humeval.yaml").write_text(text)
    with pytest.raises(ProtocolError) as info:
        load_protocol(tmp_path)
    assert f"humeval.yaml:{where}: malformed YAML: " in str(info.value)
    assert f". Hint: {hint}" in str(info.value)


def test_a_protocol_file_not_in_utf8_is_named_with_its_line(tmp_path: Path):
    (tmp_path / "humeval.yaml").write_bytes("study:\n  name: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ProtocolError, match=r"humeval.yaml:2: not UTF-8 text \(byte 0xe9\); save the protocol file as"):
        load_protocol(tmp_path)


def test_missing_protocol_file(tmp_path: Path):
    with pytest.raises(ProtocolError, match="protocol file not found"):
        load_protocol(tmp_path)


def test_empty_protocol_file(tmp_path: Path):
    (tmp_path / "humeval.yaml").write_text("# nothing\n")
    with pytest.raises(ProtocolError, match="empty"):
        load_protocol(tmp_path)


def test_2afc_options():
    data = MINIMAL | {"criteria": [{"name": "q", "type": "2afc", "question": "?", "tie": True, "both_bad": True}]}
    assert parse_protocol(data).criteria[0].options() == ["A", "B", "tie", "both-bad"]


def test_likert_labels_must_fit_points():
    data = MINIMAL | {"criteria": [{"name": "f", "type": "likert", "question": "?", "points": 5, "labels": ["a", "b", "c"]}]}
    (msg,) = _problems(data)
    assert "labels has 3 entries" in msg
