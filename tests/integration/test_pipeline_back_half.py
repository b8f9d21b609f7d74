"""The back half end to end on an example study: dry run, then collate -> exclude -> analyze -> report
through the CLI, post hoc apart, and the refusals that protect the preregistered plan."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from humeval.lock import lock_study
from humeval.pipeline import run_stage
from humeval.study import StudyFolder
from humeval.templates import init_study
from tests.cli import humeval


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> StudyFolder:
    root = tmp_path_factory.mktemp("study")
    init_study(root, "rating", items=12, seed=4)
    text = (root / "humeval.yaml").read_text()
    (root / "humeval.yaml").write_text(text.replace("rankings: [mean, bootstrap]",
                                                    "rankings: [mean, bootstrap, bradley-terry]\n  bootstrap: 200"))
    study = StudyFolder.open(root)
    for stage in ("sample", "design"):
        run_stage(study, stage)
    return study


@pytest.fixture(scope="module")
def dry_run(study):
    """The dry run's result (each test that needs it asks for it: every test also passes alone)."""
    return run_stage(study, "dry-run")


@pytest.fixture(scope="module")
def locked(study, dry_run) -> StudyFolder:
    """The study locked, with the normal dry run's judgements as its own."""
    shutil.copy(study.results_dir / "dry-run" / "normal" / "judgements.jsonl", study.results_dir / "judgements.jsonl")
    lock_study(study)
    return study


@pytest.fixture(scope="module")
def analyzed(locked) -> StudyFolder:
    for stage in ("collate", "exclude", "analyze"):
        run_stage(locked, stage)
    return locked


def test_dry_run_pushes_every_kind_through_the_back_half(study, dry_run):
    assert set(dry_run.summary) == {"random", "static", "normal"}
    normal = study.results_dir / "dry-run" / "normal"
    for name in ("collation.json", "excluded.jsonl", "exclusion.json", "results.json", "report.html", "report.md",
                 "heds.json", "tables/tests.csv"):
        assert (normal / name).is_file(), name
    results = json.loads((normal / "results.json").read_text())
    assert results["dry_run"] == "normal" and "dry-run:normal" in results["signature"]
    assert set(results["criteria"]) == {"fluency", "adequacy"}
    html = (normal / "report.html").read_text()
    assert "DRY RUN" in html and "data:image/png;base64," in html and 'src="figures/' not in html


def test_analyze_refuses_an_unlocked_study(study, dry_run, tmp_path):
    unlocked = shutil.copytree(study.root, tmp_path / "unlocked")
    (unlocked / ".humeval" / "lock.json").unlink(missing_ok=True)  # the study is locked once `locked` has run
    shutil.copy(study.results_dir / "dry-run" / "normal" / "judgements.jsonl", unlocked / "results" / "judgements.jsonl")
    proc = humeval("analyze", str(unlocked))
    assert proc.returncode == 1
    assert "not locked" in proc.stderr and "Traceback" not in proc.stderr


def test_collate_exclude_analyze_report_via_the_cli(locked):
    study = locked
    for command in ("collate", "exclude", "report"):
        if command == "report":
            proc = humeval("analyze", str(study.root), "--format", "json")
            assert proc.returncode == 0, proc.stderr
            body = json.loads(proc.stdout[: proc.stdout.rindex("}") + 1])
            assert body["preregistered"] is True and body["dry_run"] is None
        proc = humeval(command, str(study.root))
        assert proc.returncode == 0, proc.stderr
    collation = json.loads((study.results_dir / "collation.json").read_text())
    assert collation["complete"] is True
    results = json.loads((study.results_dir / "results.json").read_text())
    fluency = results["criteria"]["fluency"]
    assert fluency["omnibus"]["p_value"] < 0.05 and "bradley-terry" in fluency["rankings"]
    heds = json.loads((study.results_dir / "heds.json").read_text())
    assert heds["heds_version"] == "2.0" and any(q["id"] == "3.3.1" for q in heds["answers"])
    report = (study.results_dir / "report.md").read_text()
    assert results["signature"] in report


def test_collate_writes_a_rerun_file_when_judgements_are_missing(locked, tmp_path):
    study = locked
    judgements = study.results_dir / "judgements.jsonl"
    lines = judgements.read_text().splitlines()
    backup = tmp_path / "j.jsonl"
    shutil.copy(judgements, backup)
    try:
        judgements.write_text("\n".join(lines[6:]) + "\n")
        proc = humeval("collate", str(study.root))
        assert proc.returncode == 0 and "incomplete" in proc.stderr
        server_lists = study.root / ".humeval" / "keys" / "results.rerun-lists.jsonl"  # never handed out
        rerun = [json.loads(x) for x in server_lists.read_text().splitlines()]
        assert "candidate" not in (study.results_dir / "rerun" / "lists.csv").read_text()
        assert rerun and all(len({t["task_id"] for t in pl["tasks"]}) == len(pl["tasks"]) for pl in rerun)
    finally:
        shutil.copy(backup, judgements)


def test_posthoc_never_touches_the_preregistered_results(analyzed):
    study = analyzed
    before = (study.results_dir / "results.json").read_bytes()
    proc = humeval("posthoc", "parametric", str(study.root), "--set", "tests=parametric", "--correlation", "spearman",
                   "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert (study.results_dir / "results.json").read_bytes() == before
    out = json.loads((study.results_dir / "posthoc" / "parametric" / "results.json").read_text())
    assert out["preregistered"] is False and out["post_hoc"] == "parametric" and "posthoc:parametric" in out["signature"]
    assert out["criteria"]["fluency"]["family"] == "parametric"
    assert out["correlations"][0]["pairs"][0]["method"].startswith("spearman")
    again = humeval("posthoc", "parametric", str(study.root), "--set", "tests=parametric")
    assert again.returncode == 1 and "exists" in again.stderr
    bad = humeval("posthoc", "x", str(study.root), "--set", "test=parametric")
    assert bad.returncode == 1 and "Did you mean 'tests'" in bad.stderr
    # the post hoc run made the report stale: `report` rebuilds it with the POST HOC section, then keeps it
    proc = humeval("report", str(study.root))
    assert proc.returncode == 0 and "wrote" in proc.stderr and "kept" not in proc.stderr, proc.stderr
    assert "POST HOC: parametric" in (study.results_dir / "report.md").read_text()
    assert "kept" in humeval("report", str(study.root)).stderr


def test_an_incomplete_study_is_called_preliminary_by_analyze_report_and_the_report(locked, tmp_path):
    root = tmp_path / "short"
    shutil.copytree(locked.root, root, ignore=shutil.ignore_patterns("dry-run", "posthoc"))
    judgements = root / "results" / "judgements.jsonl"
    judgements.write_text("\n".join(judgements.read_text().splitlines()[:30]) + "\n")
    short = StudyFolder.open(root)
    for stage in ("collate", "exclude"):
        run_stage(short, stage)
    for command in ("analyze", "report"):
        proc = humeval(command, str(root))
        assert proc.returncode == 0, proc.stderr
        assert "warning: INCOMPLETE, PRELIMINARY RESULTS:" in proc.stderr, proc.stderr
    md = (root / "results" / "report.md").read_text()
    assert md.index("> INCOMPLETE, PRELIMINARY RESULTS:") < md.index("## Key results")


def test_analyze_refuses_when_the_plan_changed_after_lock(locked):
    study = locked
    path = study.protocol_file
    original = path.read_text()
    try:
        path.write_text(original.replace("correction: holm", "correction: bh"))
        proc = humeval("analyze", str(study.root), "--force")
        assert proc.returncode == 1
        assert "changed after it was locked" in proc.stderr and "analysis" in proc.stderr
    finally:
        path.write_text(original)
    assert Path(path).read_text() == original
