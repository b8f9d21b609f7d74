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


def test_a_misspelt_declared_system_is_blamed_at_its_line(tmp_path: Path):
    """`systems: [baseline, candidat]` while stopping.systems and the data say `candidate`: the one problem is at
    the `systems` line, naming both spellings, not at stopping.systems, which is right."""
    init_study(tmp_path, "pairwise", items=5)
    p = tmp_path / "humeval.yaml"
    text = p.read_text()
    assert "\nsystems: [baseline, candidate]\n" in text and "  systems: [baseline, candidate]\n" in text
    p.write_text(text.replace("\nsystems: [baseline, candidate]\n", "\nsystems: [baseline, candidat]\n"))
    line = next(i for i, t in enumerate(p.read_text().splitlines(), 1) if t.startswith("systems:"))
    assert validate_study(tmp_path) == [(
        f"{p}:{line}: systems[1]: system 'candidat' is not in the data, which has 'candidate', as stopping.systems[1] "
        "spells it: correct it here to 'candidate'. Available in the data: baseline, candidate, reference")]


def test_a_misspelt_reference_is_blamed_where_it_is(tmp_path: Path):
    init_study(tmp_path, "pairwise", items=5)
    p = tmp_path / "humeval.yaml"
    p.write_text(p.read_text().replace("  systems: [baseline, candidate]\n", "  systems: [baseline, candidat]\n"))
    [problem] = validate_study(tmp_path)
    assert ": stopping.systems[1]: unknown system 'candidat'. Did you mean 'candidate'?" in problem


def test_a_reference_to_an_undeclared_system_is_still_reported(tmp_path: Path):
    init_study(tmp_path, "pairwise", items=5)
    p = tmp_path / "humeval.yaml"
    text = p.read_text().replace("\nsystems: [baseline, candidate]\n", "\nsystems: [baseline, candidat]\n")
    p.write_text(text.replace("  systems: [baseline, candidate]\n", "  systems: [baseline, reference]\n"))
    problems = validate_study(tmp_path)
    assert len(problems) == 2
    assert "systems[1]: system 'candidat' is not in the data. Did you mean 'candidate'?" in problems[0]
    assert "stopping.systems[1]: unknown system 'reference'" in problems[1]


def test_a_semicolon_csv_validates(tmp_path: Path):
    import pandas as pd

    init_study(tmp_path, "pairwise", items=5)
    rows = [json.loads(line) for line in (tmp_path / "data/outputs.jsonl").read_text().splitlines()]
    pd.DataFrame(rows).to_csv(tmp_path / "data/outputs.csv", sep=";", index=False)
    p = tmp_path / "humeval.yaml"
    p.write_text(p.read_text().replace("files: [data/outputs.jsonl]", "files: [data/outputs.csv]"))
    assert validate_study(tmp_path) == []


def test_a_prolific_study_without_its_completion_code_is_refused_at_its_line(tmp_path: Path):
    path = init_study(tmp_path / "s", "pairwise", items=6)
    text = path.read_text()
    path.write_text(text.replace("platform:\n  kind: local", "platform:\n  kind: prolific"))
    (problem,) = validate_study(tmp_path / "s")
    line = path.read_text().splitlines().index("  kind: prolific") + 1  # the platform section, where the code goes
    assert problem.startswith(f"{path}:{line}: platform.completion_code: required with platform.kind 'prolific'")
    path.write_text(text.replace("platform:\n  kind: local", "platform:\n  kind: prolific\n  completion_code: C1A2"))
    assert validate_study(tmp_path / "s") == []
