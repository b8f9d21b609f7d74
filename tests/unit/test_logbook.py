"""The logbook's entries: typed, versioned, and the lines of older logbooks still read as they were written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from humeval import logbook
from humeval.errors import DataError, HumevalError
from humeval.study import StudyFolder

#: two lines as humeval wrote them before entries named their schema (a lock, then a sample stage run)
OLD_LINES = [
    {"time": "2026-12-02T13:55:17.248199+00:00", "version": "0.1.0", "stage": "lock", "outcome": "ok",
     "protocol_sha256": "524a0a966a95a101ea4016112a2cd64bc790ec4c773bbb702e424a87790539a2"},
    {"time": "2026-12-02T13:55:17.410331+00:00", "version": "0.1.0", "stage": "sample",
     "start": "2026-12-02T13:55:17.260186+00:00", "seed": 1,
     "inputs": [{"path": "humeval.yaml", "sha256": "524a0a96"}], "outputs": [{"path": "items.jsonl", "sha256": "b9cb"}],
     "summary": {"items_available": 4}, "end": "2026-12-02T13:55:17.410331+00:00", "outcome": "ok"},
]


def _study(tmp_path: Path, lines: list[dict] | None = None) -> StudyFolder:
    study = StudyFolder(tmp_path)
    if lines is not None:
        study.logbook_file.parent.mkdir(parents=True, exist_ok=True)
        study.logbook_file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return study


def test_an_old_logbook_reads_as_schema_1_and_as_written(tmp_path: Path) -> None:
    study = _study(tmp_path, OLD_LINES)
    lock, sample = logbook.entries(study)
    assert (lock.schema_version, lock.stage, lock.ok, lock.seed) == (1, "lock", True, None)
    assert lock.field("protocol_sha256") == OLD_LINES[0]["protocol_sha256"]
    assert (sample.seed, sample.summary, sample.when) == (1, {"items_available": 4}, "2026-12-02T13:55:17.410331+00:00")
    assert sample.outputs == [{"path": "items.jsonl", "sha256": "b9cb"}]
    # read(): the JSON objects exactly as written, keys in their order (no schema added to old lines)
    assert logbook.read(study) == OLD_LINES
    assert [list(e) for e in logbook.read(study)] == [list(line) for line in OLD_LINES]


def test_a_new_entry_names_its_schema_and_keeps_a_stages_own_fields(tmp_path: Path) -> None:
    study = _study(tmp_path, OLD_LINES[:1])
    written = logbook.append(study, {"stage": "unlock", "outcome": "ok", "reason": "typo in a question"})
    assert written["schema"] == logbook.SCHEMA == 2
    line = json.loads(study.logbook_file.read_text().splitlines()[-1])
    assert list(line)[:4] == ["schema", "time", "version", "stage"] and line == written
    old, new = logbook.entries(study)
    assert (old.schema_version, new.schema_version) == (1, 2)
    assert new.field("reason") == "typo in a question" and new.field("released", "none") == "none"
    assert new.to_json() == written  # the fields it was given, nothing added


def test_record_run_writes_ok_or_the_error(tmp_path: Path) -> None:
    study = _study(tmp_path)
    with logbook.record_run(study, "design", inputs=[], seed=7) as run:
        run.finish(study, [], summary={"tasks": 3})
    with pytest.raises(DataError), logbook.record_run(study, "analyze", inputs=[], seed=7):
        raise DataError("no judgements")
    ok, failed = logbook.entries(study)
    assert (ok.stage, ok.outcome, ok.seed, ok.summary, ok.outputs) == ("design", "ok", 7, {"tasks": 3}, [])
    assert (failed.outcome, failed.error) == ("error", "no judgements")
    assert ok.start is not None and ok.end is not None and ok.start <= ok.end


def test_an_entry_that_is_not_one_is_refused_when_written_and_named_when_read(tmp_path: Path) -> None:
    study = _study(tmp_path)
    with pytest.raises(HumevalError, match=r"stage 'serve' is not a logbook entry: outcome: Input should be 'ok' or 'error'"):
        logbook.append(study, {"stage": "serve", "outcome": "maybe"})
    assert not study.logbook_file.exists()  # nothing written
    bad = _study(tmp_path / "b", [OLD_LINES[0], {"time": "t", "version": "0.1.0", "outcome": "ok"}])
    with pytest.raises(DataError, match=r"logbook.jsonl: line 2 is not a logbook entry \(schema 1 to 2\): stage: Field required"):
        logbook.entries(bad)
    future = _study(tmp_path / "f", [OLD_LINES[0] | {"schema": 3}])
    with pytest.raises(DataError, match=r"line 1 .*schema: Input should be less than or equal to 2"):
        logbook.read(future)
