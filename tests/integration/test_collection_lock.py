"""Collection obeys the lock exactly as the other stages do (the pipeline's one lock gate)."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval import logbook
from humeval.errors import ProtocolError
from humeval.lock import lock_study
from humeval.pipeline import prepare_collection, run
from humeval.study import StudyFolder
from humeval.templates import init_study
from tests.cli import humeval
from tests.integration.server.server import free_port


@pytest.fixture
def pairwise(tmp_path: Path) -> StudyFolder:
    init_study(tmp_path / "s", "pairwise", items=8)
    study = StudyFolder.open(tmp_path / "s")
    list(run(study))
    lock_study(study)
    return study


def test_serve_refuses_a_locked_study_whose_protocol_changed(pairwise: StudyFolder):
    text = pairwise.protocol_file.read_text()
    pairwise.protocol_file.write_text(text.replace("delta: 0.05", "delta: 0.1"))
    for command in (["serve", str(pairwise.root), "--port", str(free_port())], ["analyze", str(pairwise.root)],
                    ["dry-run", str(pairwise.root)], ["rehearse", str(pairwise.root)]):
        proc = humeval(*command, process=command[0] == "serve")  # a server that failed to refuse would stay up
        assert proc.returncode == 1, (command, proc.stderr)
        assert "humeval.yaml (changed: stopping)" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not pairwise.db_file.exists()  # nothing was seeded


def test_serve_refuses_an_unlocked_study_without_the_explicit_override(tmp_path: Path):
    init_study(tmp_path / "s", "pairwise", items=8)
    study = StudyFolder.open(tmp_path / "s")
    proc = humeval("serve", str(study.root), "--port", str(free_port()), process=True)
    assert proc.returncode == 1 and "not locked" in proc.stderr and "humeval lock" in proc.stderr, proc.stderr
    assert not study.db_file.exists()
    with pytest.raises(ProtocolError, match="not locked"):
        prepare_collection(study)


def test_unlocked_collection_is_logged(tmp_path: Path):
    init_study(tmp_path / "s", "pairwise", items=8)
    study = StudyFolder.open(tmp_path / "s")
    assert prepare_collection(study, unlocked=True) is True
    entry = [e for e in logbook.read(study) if e["stage"] == "serve"][-1]
    assert entry["outcome"] == "ok" and entry["unlocked"] is True and entry["summary"] == {"seeded": True, "rerun_lists": 0}
    assert {i["path"] for i in entry["inputs"]} >= {"humeval.yaml", "lists/tasks.jsonl", "lists/lists.jsonl"}


def test_locked_collection_seeds_once_and_logs(pairwise: StudyFolder):
    assert prepare_collection(pairwise) is True
    assert prepare_collection(pairwise) is False  # idempotent: the store is seeded once
    entries = [e for e in logbook.read(pairwise) if e["stage"] == "serve"]
    assert [e["summary"]["seeded"] for e in entries] == [True, False]
    assert all("unlocked" not in e for e in entries)
