"""A pilot's store is read apart from the study (``humeval pilot``), and becomes the study's data only by an
explicit, logged step (``humeval export --db FILE --as-study``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from humeval import logbook
from humeval.study import StudyFolder
from humeval.templates import init_study
from tests.cli import humeval


@pytest.fixture(scope="module")
def piloted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pairwise template, locked, with a pilot store of 3 simulated participants in pilot.db."""
    root = tmp_path_factory.mktemp("pilot") / "s"
    init_study(root, "pairwise", items=12)
    humeval("lock", root, expect=0)
    humeval("run", root, expect=0)
    humeval("rehearse", root, "--kind", "crowd", "--db", root / "pilot.db", "-n", "3", expect=0)
    return root


def test_the_pilot_goes_to_its_own_folder_and_to_the_study_only_by_a_logged_step(piloted: Path) -> None:
    humeval("pilot", piloted, expect=0)
    pilot = piloted / "results" / "pilot"
    stored = [json.loads(line) for line in (pilot / "judgements.jsonl").read_text().splitlines()]
    assert stored and len({r["participant_id"] for r in stored}) == 3
    html = (pilot / "report.html").read_text()
    assert "<title>" in html and "human evaluation report (pilot)" in html
    assert "PILOT: the judgements of a pilot" in html
    assert json.loads((pilot / "results.json").read_text())["dry_run"] == "pilot"
    # nothing of the pilot in the study's own results
    assert not (piloted / "results" / "judgements.jsonl").exists() and not (piloted / "results" / "report.html").exists()
    (entry,) = [e for e in logbook.read(StudyFolder.open(piloted)) if e.get("stage") == "pilot"]
    assert entry["outcome"] == "ok" and entry["parameters"]["db"].endswith("pilot.db")
    # the pilot's store is the study's data only by an explicit, logged step
    refused = humeval("export", piloted, "--db", piloted / "pilot.db", expect=1)
    assert "not the study's store (study.db)" in refused.stderr and "humeval pilot" in refused.stderr
    assert not (piloted / "results" / "judgements.jsonl").exists()
    humeval("export", piloted, "--db", piloted / "pilot.db", "--as-study", expect=0)
    assert (piloted / "results" / "judgements.jsonl").is_file()
    exports = [e for e in logbook.read(StudyFolder.open(piloted)) if e.get("stage") == "export" and e.get("outcome") == "ok"]
    assert exports[-1]["options"]["as_study_data"] is True


def test_a_pilot_needs_a_store_of_its_own(piloted: Path, tmp_path: Path) -> None:
    missing = humeval("pilot", piloted, "--db", tmp_path / "none.db", expect=1)
    assert "no pilot store; serve the pilot on it first" in missing.stderr
    (piloted / "study.db").touch()
    own = humeval("pilot", piloted, "--db", piloted / "study.db", expect=1)
    assert "the study's own store; a pilot runs on a store of its own" in own.stderr
    (piloted / "study.db").unlink()
