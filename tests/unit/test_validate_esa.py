"""`humeval validate` warns when a joint page would ask for error spans of several esa criteria."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval.files import write_jsonl
from humeval.templates import generate_outputs
from humeval.validate import study_warnings, validate_study
from tests.integration.server.studies import ESA

SECOND = '  - {name: fluency, type: esa, question: "Mark the disfluencies."}\n'


def _study(root: Path, setup: str, extra: str) -> Path:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(4, seed=6))
    (root / "humeval.yaml").write_text(ESA.format(per_item=1, per_participant=3, language="en", setup=setup,
                                                  criteria_extra=extra, esa_extra=""), encoding="utf-8")
    return root


@pytest.mark.parametrize(("setup", "extra", "warned"), [("joint", SECOND, True), ("separate", SECOND, False),
                                                        ("joint", "", False)])
def test_several_esa_criteria_on_a_joint_page_are_warned_about(tmp_path: Path, setup: str, extra: str,
                                                               warned: bool) -> None:
    root = _study(tmp_path / "s", setup, extra)
    assert validate_study(root) == []
    warnings = study_warnings(root)
    hit = [w for w in warnings if "presentation.setup: 'joint' with 2 esa criteria (quality, fluency)" in w]
    assert bool(hit) == warned and all("humeval.yaml:" in w for w in hit)
