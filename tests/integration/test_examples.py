"""Every study in examples/ runs: validate, lock, run and dry-run through the CLI, on a copy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from humeval.results import Results
from tests.cli import humeval

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "humeval.yaml").is_file())


def _cli(*args: str) -> str:
    proc = humeval(*args, expect=0)
    return proc.stdout + proc.stderr


def test_the_examples_are_there():
    assert NAMES == ["likert-stratified", "pairwise-stopping", "rankme-criteria"]
    for name in NAMES:
        assert (EXAMPLES / name / "README.md").is_file() and (EXAMPLES / name / "data" / "outputs.jsonl").is_file()
        assert f"({name}/)" in (EXAMPLES / "README.md").read_text()


@pytest.mark.parametrize("name", NAMES)
def test_example_validates_locks_runs_and_dry_runs(tmp_path: Path, name: str):
    study = tmp_path / name
    shutil.copytree(EXAMPLES / name, study)
    assert "valid" in _cli("validate", str(study))
    locked = _cli("lock", str(study))  # not a terminal: one whole line, however long
    assert len(locked.splitlines()) == 1 and locked.rstrip().endswith("input file(s)"), locked
    run = _cli("run", str(study))
    assert [line.split("\t")[0] for line in run.splitlines() if "\thumeval|" in line] == ["sample", "design"]
    _cli("dry-run", str(study))
    for kind in ("random", "static", "normal"):
        ws = study / "results" / "dry-run" / kind
        results = Results.read(ws / "results.json")
        assert results.dry_run == kind and (ws / "report.html").is_file()
        assert all(not res.undefined for res in results.criteria.values())
    log = json.loads(_cli("log", str(study), "--format", "json"))
    assert [e["stage"] for e in log] == ["lock", "sample", "design", "dry-run"]


def test_stratified_example_keeps_the_mix_of_its_strata(tmp_path: Path):
    study = tmp_path / "s"
    shutil.copytree(EXAMPLES / "likert-stratified", study)
    _cli("lock", str(study))
    _cli("run", str(study))
    rows = [json.loads(line) for line in (study / "data" / "outputs.jsonl").read_text().splitlines()]
    slots = {r["item_id"]: r["slots"] for r in rows}
    chosen = [json.loads(line)["item_id"] for line in (study / "items.jsonl").read_text().splitlines()]
    assert len(chosen) == 30
    for value in set(slots.values()):  # proportional allocation: each stratum at half its size (rounded)
        size = sum(v == value for v in slots.values())
        assert abs(sum(slots[i] == value for i in chosen) - size / 2) <= 1
