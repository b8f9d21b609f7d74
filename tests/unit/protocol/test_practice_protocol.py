"""``design.practice`` in the protocol: what an item must fit (its criterion, its outputs, its answer, the list
strategy), the answer in the form the checks ask for, and the practice's feedback judged as the attention rule
judges a check (hand-made answers of every shape)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from humeval.design.lists import practice_tasks
from humeval.design.tasks import practice_index
from humeval.judgements.practice import practice_feedback
from humeval.protocol.models import Protocol

CRITERIA = [{"name": "quality", "type": "2afc", "question": "Which?"},
            {"name": "fluency", "type": "likert", "question": "How fluent?", "points": 5},
            {"name": "worth", "type": "magnitude", "question": "How good?", "modulus": 100,
             "standard": {"text": "A standard."}},
            {"name": "best", "type": "bws", "question": "Best and worst?", "tuple_size": 3}]


def _protocol(*practice: dict[str, Any], strategy: str = "list") -> Protocol:
    return Protocol.model_validate({
        "study": {"name": "p", "seed": 1}, "data": {"files": ["x.jsonl"]}, "criteria": CRITERIA,
        "assignment": {"strategy": strategy}, "design": {"practice": list(practice)}})


def _item(criterion: str, outputs: list[str], answer: Any = None) -> dict[str, Any]:
    return {"criterion": criterion, "outputs": outputs, "answer": answer, "explanation": "Because."}


def test_an_item_must_fit_its_criterion_and_the_list_strategy() -> None:
    with pytest.raises(ValidationError, match=r"design.practice\[0\].criterion: no criterion 'qualty'; valid: quality"):
        _protocol(_item("qualty", ["a", "b"]))
    with pytest.raises(ValidationError, match=r"practice\[0\].outputs: criterion 'quality' \(2afc\) shows 2 outputs; got 1"):
        _protocol(_item("quality", ["a"]))
    with pytest.raises(ValidationError, match=r"practice\[1\].outputs: criterion 'fluency' \(likert\) shows 1 output; got 2"):
        _protocol(_item("quality", ["a", "b"]), _item("fluency", ["a", "b"]))
    with pytest.raises(ValidationError, match=r"practice\[0\].answer: 'C' is not an answer .* valid: A, B"):
        _protocol(_item("quality", ["a", "b"], "C"))
    with pytest.raises(ValidationError, match=r"valid: 1, 2, 3, 4, 5"):
        _protocol(_item("fluency", ["a"], 6))
    with pytest.raises(ValidationError, match=r"valid: 100"):  # magnitude: no answer but the modulus
        _protocol(_item("worth", ["a"], 50))
    with pytest.raises(ValidationError, match="strategy 'majority' serves tasks one at a time"):
        _protocol(_item("quality", ["a", "b"]), strategy="majority")
    with pytest.raises(ValidationError, match="must not be empty"):
        _protocol(_item("quality", ["a", " "]))
    with pytest.raises(ValidationError, match="explanation"):
        _protocol({"criterion": "quality", "outputs": ["a", "b"]})


def test_the_tasks_carry_the_answer_in_the_form_the_checks_ask_for() -> None:
    p = _protocol(_item("fluency", ["a"], "4"), _item("quality", ["x", "y"]), _item("best", ["a", "b", "c"], "B"))
    tasks = practice_tasks(p)
    assert [t.item_id for t in tasks] == ["practice-1", "practice-2", "practice-3"]
    assert [practice_index(t) for t in tasks] == [0, 1, 2]
    assert [t.expected for t in tasks] == [4, None, "B"]  # "4" from YAML is the point 4
    assert [t.systems for t in tasks] == [("output-1",), ("output-1", "output-2"), ("output-1", "output-2", "output-3")]
    assert {t.kind for t in tasks} == {"practice"}


@pytest.mark.parametrize(("item", "value", "correct"), [
    (_item("quality", ["x", "y"], "A"), "A", True),
    (_item("quality", ["x", "y"], "A"), "B", False),
    (_item("quality", ["x", "y"]), "B", None),
    (_item("fluency", ["x"], 4), 4, True),
    (_item("fluency", ["x"], 4), 5, False),
    (_item("best", ["a", "b", "c"], "B"), {"best": 1, "worst": 0}, True),  # B chosen as the best, any worst
    (_item("best", ["a", "b", "c"], "B"), {"best": 0, "worst": 1}, False),
])
def test_the_feedback_judges_as_the_attention_rule(item: dict[str, Any], value: Any, correct: bool | None) -> None:
    p = _protocol(item)
    task = practice_tasks(p)[0]
    told = practice_feedback(p, task, task.systems, {item["criterion"]: value})
    assert told == {"correct": correct, "expected": task.expected, "explanation": "Because."}
