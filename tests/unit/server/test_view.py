"""What the task template is given: outputs rendered in their format, differences marked when asked,
attention checks in the study's language, ESA word pieces with character offsets, the ESA form value."""

from __future__ import annotations

from humeval.protocol.models import Presentation
from humeval.server.view import esa_value, shown_outputs


def _a(outputs: list[str], formats: list[str], kind: str = "task") -> dict:
    return {"outputs": outputs, "formats": formats, "task": {"kind": kind},
            "criteria": [{"type": "likert", "question": "How good?"}]}


def test_differences_marked_only_for_two_text_outputs() -> None:
    pres = Presentation(highlight_differences=True)
    left, right = shown_outputs(_a(["a cat sat", "a dog sat"], ["text", "text"]), pres)
    assert str(left["html"]) == 'a <mark class="diff">cat</mark> sat' and "dog" in str(right["html"])
    md = shown_outputs(_a(["a **cat**", "a dog"], ["markdown", "text"]), pres)
    assert "<strong>cat</strong>" in str(md[0]["html"]) and "mark" not in str(md[1]["html"])
    plain = shown_outputs(_a(["a cat sat", "a dog sat"], ["text", "text"]), Presentation())
    assert "mark" not in str(plain[0]["html"])


def test_attention_text_replaces_the_stored_english() -> None:
    a = _a(["This is an attention check ..."], ["text"], kind="attention")
    a["task"]["expected"] = 4
    shown = shown_outputs(a, Presentation(), attention=lambda c, expected: f"Bitte: {c['question']} ({expected})")
    assert str(shown[0]["html"]) == "Bitte: How good? (4)"  # the check's own answer is asked for


def test_esa_value_from_the_form() -> None:
    assert esa_value({"q.score": "62", "q.spans": '[{"start": 0, "end": 3, "severity": "minor"}]'}, "q") == {
        "score": 62.0, "spans": [{"start": 0, "end": 3, "severity": "minor"}]}
    assert esa_value({"q.spans": "[]"}, "q") is None  # no score: the store says "required"
    assert esa_value({"q.score": "x", "q.spans": "{bad"}, "q") == {"score": "x", "spans": "{bad"}
