"""Lock, tamper detection, logbook and the pipeline's skip logic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from humeval import ProtocolError, Study, init_study, logbook, run, run_stage
from humeval.errors import DataError
from humeval.hashing import sha256_file
from humeval.lock import check_lock, lock_study, read_lock, release_lock


@pytest.fixture
def study(tmp_path: Path) -> Study:
    init_study(tmp_path / "s", "pairwise", items=8, seed=5)
    return Study.open(tmp_path / "s")


def test_lock_records_hashes_seeds_version(study: Study):
    lock = lock_study(study)
    data = json.loads(study.lock_file.read_text())
    assert data == lock.data
    assert data["protocol"]["sha256"] == sha256_file(study.protocol_file)
    assert data["inputs"] == [{"path": "data/outputs.jsonl", "sha256": sha256_file(study.root / "data/outputs.jsonl")}]
    assert data["seeds"] == {"study": 5, "sampling": 5}
    assert data["humeval_version"] and data["locked_at"]
    assert set(data["sections"]) >= {"analysis", "exclusion", "criteria"}


def test_locking_twice_refused(study: Study):
    lock_study(study)
    with pytest.raises(ProtocolError, match="already locked"):
        lock_study(study)


def test_tampered_input_names_file_and_both_hashes(study: Study):
    lock = lock_study(study)
    data_file = study.root / "data/outputs.jsonl"
    before = lock.data["inputs"][0]["sha256"]
    text = data_file.read_bytes()
    data_file.write_bytes(text[:10] + (b"X" if text[10:11] != b"X" else b"Y") + text[11:])
    with pytest.raises(ProtocolError) as info:
        run_stage(Study.open(study.root), "sample")
    msg = str(info.value)
    assert "data/outputs.jsonl" in msg and before in msg and sha256_file(data_file) in msg


def test_changed_protocol_names_section(study: Study):
    lock_study(study)
    text = study.protocol_file.read_text().replace("alpha: 0.05", "alpha: 0.01")
    study.protocol_file.write_text(text)
    with pytest.raises(ProtocolError, match=r"humeval.yaml \(changed: analysis\): locked sha256"):
        check_lock(Study.open(study.root))


def test_release_is_logged_and_unblocks(study: Study):
    lock_study(study)
    study.protocol_file.write_text(study.protocol_file.read_text() + "\n# a comment\n")
    release_lock(study, reason="typo")
    assert read_lock(study) is None
    entry = logbook.read(study)[-1]
    assert entry["stage"] == "unlock" and entry["reason"] == "typo" and entry["released"]["protocol"]
    run(Study.open(study.root))


def test_release_without_lock(study: Study):
    with pytest.raises(ProtocolError, match="not locked"):
        release_lock(study)


def test_run_logs_each_stage_and_skips_unchanged(study: Study):
    lock_study(study)
    first = run(study)
    assert [r.stage for r in first] == ["sample", "design"] and not any(r.skipped for r in first)
    entries = [e for e in logbook.read(study) if e["stage"] in ("sample", "design")]
    assert len(entries) == 2
    for e in entries:
        assert e["outcome"] == "ok" and e["seed"] == 5 and e["start"] <= e["end"]
        assert e["inputs"][0]["path"] == "humeval.yaml"
        assert all(len(o["sha256"]) == 64 for o in e["outputs"])
        assert e["signature"].startswith(f"humeval|protocol:{e['inputs'][0]['sha256'][:8]}|seed:5|version:")
    second = run(Study.open(study.root))
    assert all(r.skipped for r in second)
    assert len(logbook.read(study)) == 3  # lock + two stage runs: skipping writes nothing


def test_deleted_output_is_rebuilt(study: Study):
    run(study)
    study.items_file.unlink()
    results = run(Study.open(study.root))
    assert not results[0].skipped and study.items_file.is_file()


def test_failed_stage_is_logged(study: Study):
    (study.root / "items.jsonl").unlink(missing_ok=True)
    from humeval.errors import DataError

    with pytest.raises(DataError, match="run `humeval sample"):
        run_stage(study, "design")
    last = logbook.read(study)[-1]
    assert last["stage"] == "design" and last["outcome"] == "error" and "humeval sample" in last["error"]


def test_same_seed_same_outputs(tmp_path: Path):
    hashes = []
    for name in ("a", "b"):
        init_study(tmp_path / name, "rating", items=10, seed=9)
        study = Study.open(tmp_path / name)
        run(study)
        hashes.append([sha256_file(study.items_file), sha256_file(study.lists_dir / "lists.jsonl")])
    assert hashes[0] == hashes[1]


def test_corrupt_logbook_line(study: Study):
    study.state_dir.mkdir()
    study.logbook_file.write_text('{"stage": "x"}\nnot json\n')
    with pytest.raises(DataError, match=r"logbook.jsonl:2: broken JSON line"):
        logbook.read(study)
