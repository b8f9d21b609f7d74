"""The protocol's arena section: checked by the model and by validate (what is wrong, where, what is valid), locked
with the study's inputs, shown in the preregistration."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval import validate_study
from humeval.errors import ProtocolError
from humeval.files import write_jsonl
from humeval.protocol.load import parse_protocol
from humeval.study import StudyFolder

HEAD = """version: 1
study: {name: arena, seed: 3}
data: {files: [data/outputs.jsonl]}
systems: [m1, m2]
"""
VOTE = 'criteria:\n  - {name: vote, type: battle, question: "Which answer is better?"}\n'
MODELS = """arena:
  reveal: true
  prompts: prompts.jsonl
  limits: {total_seconds: 30, first_token_seconds: 5, max_chars: 4000}
  models:
    - {name: m1, kind: recorded, table: recorded.jsonl}
    - {name: m2, kind: openai, url: "https://api.example.org/v1", model: gpt-x, key_env: EXAMPLE_KEY}
"""


def _study(root: Path, text: str, *, files: bool = True) -> Path:
    rows = [{"item_id": f"p{i}", "system": s, "output": f"answer {i} of {s}", "input": f"prompt {i}"}
            for i in range(4) for s in ("m1", "m2")]
    write_jsonl(root / "data" / "outputs.jsonl", rows)
    if files:
        write_jsonl(root / "prompts.jsonl", [{"id": f"p{i}", "text": f"prompt {i}"} for i in range(4)])
        write_jsonl(root / "recorded.jsonl", [{"model": "m1", "prompt": f"prompt {i}", "output": "x"} for i in range(4)])
    (root / "humeval.yaml").write_text(text, encoding="utf-8")
    return root


def test_a_valid_arena_validates_and_names_its_files_for_the_lock(tmp_path: Path) -> None:
    root = _study(tmp_path, HEAD + VOTE + MODELS)
    assert validate_study(root) == []
    study = StudyFolder.open(root)
    arena = study.protocol.arena
    assert arena is not None and arena.reveal and [m.name for m in arena.models] == ["m1", "m2"]
    assert arena.limits_of("m1").total_seconds == 30 and arena.limits_of("m2").max_chars == 4000
    assert {p.name for p in study.input_files()} >= {"outputs.jsonl", "prompts.jsonl", "recorded.jsonl"}


def test_an_arena_without_a_battle_names_the_type_to_add(tmp_path: Path) -> None:
    root = _study(tmp_path, HEAD + "criteria:\n  - {name: q, type: 2afc, question: Which?}\n" + MODELS)
    (problem,) = validate_study(root)
    assert "humeval.yaml:" in problem and "arena: an arena's votes are a criterion of type battle" in problem
    assert "(criteria: 2afc)" in problem and "type: battle" in problem


def test_models_and_systems_must_be_the_same_names(tmp_path: Path) -> None:
    root = _study(tmp_path, HEAD.replace("[m1, m2]", "[m1, m3]") + VOTE + MODELS)
    problems = validate_study(root)
    assert any("arena.models[1].name: model 'm2' is not one of systems (m1, m3)" in p for p in problems), problems
    assert any("systems[1]: system 'm3' is not one of arena.models (m1, m2)" in p for p in problems), problems


def test_missing_arena_files_are_named_at_their_line(tmp_path: Path) -> None:
    root = _study(tmp_path, HEAD + VOTE + MODELS, files=False)
    problems = validate_study(root)
    assert any(":9: arena.prompts: file 'prompts.jsonl' not found" in p for p in problems), problems
    assert any("arena.models[0].table: file 'recorded.jsonl' not found" in p for p in problems), problems


@pytest.mark.parametrize(("arena", "message"), [
    ("arena: {models: [{name: m1, kind: recorded, table: t.jsonl}]}", "a battle needs two models, got one ('m1')"),
    ("arena: {models: [{name: m1, kind: recorded, table: t.jsonl}, {name: m1, kind: recorded, table: t.jsonl}]}",
     "'m1' is named 2 times"),
    ("arena: {models: [{name: m1, kind: gpt}, {name: m2, kind: recorded, table: t.jsonl}]}", "kind"),
    ("arena: {reveal: sometimes}", "reveal"),
    ("arena: {limits: {first_token_seconds: 50, total_seconds: 10}}", "first_token_seconds (50) must be at most"),
])
def test_a_bad_arena_section_is_refused_saying_what_is_valid(arena: str, message: str) -> None:
    import yaml

    raw = yaml.safe_load(HEAD + VOTE + arena + "\n")
    with pytest.raises(ProtocolError) as err:
        parse_protocol(raw, source="humeval.yaml")
    assert message in str(err.value)


def test_the_preregistration_shows_the_arena(tmp_path: Path) -> None:
    from humeval.lock import lock_study
    from humeval.pipeline import run
    from humeval.report.prereg import prereg

    root = _study(tmp_path, HEAD + VOTE + MODELS)
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    text = prereg(study).markdown.read_text(encoding="utf-8")
    assert "## Arena" in text
    assert "- Model **m1**: `recorded` (recorded answers from `recorded.jsonl`)" in text
    assert "- Model **m2**: `openai` (`gpt-x` at https://api.example.org/v1)" in text
    assert "first piece within 5 s, whole within 30 s, 1-4,000 characters" in text
    assert "shown after the vote" in text
