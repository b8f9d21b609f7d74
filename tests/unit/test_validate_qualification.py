"""`humeval validate` warns when a Prolific study screens out on its qualification with one attempt at each check,
and refuses attempts without a qualification."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval.files import write_jsonl
from humeval.templates import generate_outputs
from humeval.validate import study_warnings, validate_study

PROTOCOL = """version: 1
study: {{name: q, seed: 1}}
data: {{files: [data/outputs.jsonl]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?"}}
design: {{judgements_per_item: 1, items_per_participant: 4, attention_checks: 2, qualification: {q}{attempts}}}
exclusion:
  - {{rule: attention, max_failures: 0}}
platform: {{kind: {kind}, completion_code: C1, screenout_code: S1}}
"""


def _study(root: Path, *, kind: str = "prolific", q: int = 2, attempts: int = 1) -> Path:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(8, seed=6))
    text = PROTOCOL.format(kind=kind, q=q, attempts=f", qualification_attempts: {attempts}" if attempts > 1 else "")
    (root / "humeval.yaml").write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(("kind", "attempts", "warned"), [("prolific", 1, True), ("prolific", 2, False),
                                                          ("local", 1, False)])
def test_one_attempt_on_prolific_is_warned_about(tmp_path: Path, kind: str, attempts: int, warned: bool) -> None:
    root = _study(tmp_path / "s", kind=kind, attempts=attempts)
    assert validate_study(root) == []
    hit = [w for w in study_warnings(root) if "design.qualification_attempts: 1 on Prolific, whose policy" in w]
    assert bool(hit) == warned and all("set qualification_attempts: 2" in w for w in hit)


def test_attempts_need_a_qualification(tmp_path: Path) -> None:
    root = _study(tmp_path / "s", q=0, attempts=2)
    problems = validate_study(root)
    assert any("qualification_attempts (2) are attempts at the qualification checks, and there are none" in p
               for p in problems), problems
