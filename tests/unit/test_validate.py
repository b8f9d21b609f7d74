"""validate_study reports every problem at once."""

from __future__ import annotations

import json
from pathlib import Path

from humeval import init_study, validate_study


def test_template_is_valid(tmp_path: Path):
    init_study(tmp_path, "rating", items=5)
    assert validate_study(tmp_path) == []


def test_cross_references(tmp_path: Path):
    init_study(tmp_path, "rating", items=5)
    p = tmp_path / "humeval.yaml"
    text = p.read_text().replace("  agreement: [krippendorff]", "  agreement: [krippendorff]\n  criteria: [fluncy]")
    text = text.replace("method: auto", "method: randm")
    p.write_text(text)
    problems = validate_study(tmp_path)
    assert any("analysis.criteria[0]: unknown criterion 'fluncy'. Did you mean 'fluency'?" in x for x in problems)
    assert any("sampling.method: unknown sampler 'randm'. Did you mean 'random'?" in x for x in problems)


def test_data_problems_all_listed(tmp_path: Path):
    init_study(tmp_path, "rating", items=5)
    data = tmp_path / "data/outputs.jsonl"
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    rows.append(rows[0])  # duplicate
    rows = [r for r in rows if not (r["item_id"] == "item-0002" and r["system"] == "baseline")]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    problems = validate_study(tmp_path)
    assert len(problems) == 2
    assert "repeat an (item, system) pair" in problems[0] and "item-0002 (2 of 3)" in problems[1]


def test_stopping_needs_a_pair_criterion(tmp_path: Path):
    init_study(tmp_path, "rating", items=5)
    p = tmp_path / "humeval.yaml"
    p.write_text(p.read_text() + "\nstopping:\n  rule: anytime\n  delta: 0.05\n")
    problems = validate_study(tmp_path)
    assert any(x.startswith(f"{p}:") and ": stopping: a stopping rule needs a 2afc criterion" in x for x in problems)
