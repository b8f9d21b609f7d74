"""Prompt templates and the strict reading of answers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from humeval import init_study, validate_study
from humeval.judging.prompt import Template, parse_score, parse_verdict
from humeval.protocol.models import LLMJudge


@pytest.mark.parametrize(("answer", "verdict"), [
    ("A", "A"), (" b.\n", "B"), ("**A**", "A"), ("'tie'", "tie"), ("TIE", "tie"),
    ("Both are fine, but the first is clearer. [[A]]", "A"), ("[[C]]", "tie"), ("[[ tie ]]", "tie"),
    ("[[B]] ... final: [[B]]", "B"),
    ("[[A]] or [[B]]", None), ("C", None), ("A is better", None), ("", None), ("[[D]]", None), ("Output A", None),
])
def test_verdicts_are_read_strictly(answer: str, verdict: str | None) -> None:
    assert parse_verdict(answer) == verdict


@pytest.mark.parametrize(("answer", "low", "high", "score"), [
    ("4", None, None, 4.0), (" 4.5.", None, None, 4.5), ("Rating: [[3]]", 1, 5, 3.0), ("**2**", None, None, 2.0),
    ("[[7]]", 1, 5, None), ("0", 1, 5, None), ("about 4", None, None, None), ("[[3]] [[4]]", None, None, None),
    ("four", None, None, None), ("", None, None, None),
])
def test_scores_are_read_strictly(answer: str, low: float | None, high: float | None, score: float | None) -> None:
    assert parse_score(answer, low, high) == score


def test_only_known_placeholders_are_replaced_and_values_are_not_rendered_again() -> None:
    t = Template('Return {"winner": ...}. First: {output_a} Second: {output_b} {unknown}', "inline")
    assert t.used == {"output_a", "output_b"}
    assert t.render({"output_a": "{output_b}", "output_b": "x"}) == \
        'Return {"winner": ...}. First: {output_b} Second: x {unknown}'


def test_the_llm_section_needs_one_prompt_and_keeps_its_own_fields() -> None:
    base = {"base_url": "http://127.0.0.1:8000/v1", "model": "m"}
    with pytest.raises(ValidationError, match="exactly one"):
        LLMJudge(**base)
    with pytest.raises(ValidationError, match="exactly one"):
        LLMJudge(**base, prompt="{output}", prompt_file="p.txt")
    with pytest.raises(ValidationError, match="max_tokens, model"):
        LLMJudge(**base, prompt="{output}", params={"model": "x", "max_tokens": 3, "presence_penalty": 0})
    assert LLMJudge(**base, prompt="{output}", params={"presence_penalty": 0}).params == {"presence_penalty": 0}


def test_validate_names_template_problems(tmp_path: Path) -> None:
    root = tmp_path / "s"
    init_study(root, "pairwise", items=6)
    doc = yaml.safe_load((root / "humeval.yaml").read_text())
    llm = {"base_url": "http://127.0.0.1:1/v1", "model": "m", "prompt": "Which is better? {output_a} {output} {definition}"}
    doc["data"]["judges"] = [{"name": "llm", "file": "judges/llm.jsonl", "kind": "verdicts", "llm": llm},
                             {"name": "filed", "file": "judges/f.jsonl", "kind": "verdicts",
                              "llm": llm | {"prompt": "", "prompt_file": "prompts/missing.txt"}}]
    (root / "humeval.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    problems = "\n".join(validate_study(root))
    assert "data.judges[llm].llm: the prompt of a `verdicts` judge must contain {output_b}" in problems
    assert "{output} is not a placeholder of a `verdicts` judge" in problems
    assert "prompt file not found" in problems and "prompts/missing.txt" in problems
    assert "no single criterion" not in problems  # {definition}: the study has one 2afc criterion
    assert "judges/llm.jsonl" not in problems  # not asked yet: its file is made by `humeval judge`
