"""Rehearsals through the real server and store: synthetic participants over the JSON API, the
store exported, then collate -> exclude -> analyze -> report in results/rehearsal/.

The example study is the rating template (3 systems, 2 Likert criteria) with consent, one
attention check per list and an attention exclusion rule, locked before the rehearsal.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path

import pandas as pd
import pytest

from humeval import logbook
from humeval.hashing import sha256_file
from humeval.lock import lock_study
from humeval.pipeline import run_stage
from humeval.rehearsal import RehearsalResult, rehearse
from humeval.rehearsal.rehearse import RehearsalError
from humeval.store import Store
from humeval.study import StudyFolder
from humeval.templates import init_study
from tests.cli import humeval

PG = "postgresql://postgres@127.0.0.1:5432/test"
STATIC = {"baseline": 2.0, "candidate": 3.0, "reference": 4.0}  # dry_run.static of the rating template


def _make_study(root: Path) -> StudyFolder:
    init_study(root, "rating", items=12, seed=4)
    text = (root / "humeval.yaml").read_text()
    text = text.replace("  counterbalancing: latin-square\n", "  counterbalancing: latin-square\n  attention_checks: 1\n")
    text = text.replace("  instructions: Read the facts, then rate the description.\n",
                        "  instructions: Read the facts, then rate the description.\n"
                        "  consent: I agree that my answers are stored for research.\n")
    text = text.replace("exclusion:\n", "exclusion:\n  - rule: attention\n    max_failures: 0\n")
    text = text.replace("rankings: [mean, bootstrap]", "rankings: [mean, bootstrap]\n  bootstrap: 100")
    (root / "humeval.yaml").write_text(text)
    study = StudyFolder.open(root)
    for stage in ("sample", "design"):
        run_stage(study, stage)
    lock_study(study)
    # the real study's own results: a rehearsal must never touch them
    study.results_dir.mkdir()
    (study.results_dir / "judgements.jsonl").write_text('{"participant_id": "real"}\n')
    return study


@pytest.fixture
def study(tmp_path: Path) -> StudyFolder:
    return _make_study(tmp_path / "study")


def _lists(study: StudyFolder) -> list[dict]:
    with (study.lists_dir / "lists.jsonl").open() as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _real_files(study: StudyFolder) -> dict[str, str]:
    """Hashes of every file of the study outside results/rehearsal/ and the logbook."""
    rehearsal = study.results_dir / "rehearsal"
    return {str(p.relative_to(study.root)): sha256_file(p) for p in sorted(study.root.rglob("*"))
            if p.is_file() and rehearsal not in p.parents and p != study.logbook_file}


def _assert_stopped(entry: dict) -> None:
    pid = entry["server"]["pid"]
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)


def _check_static(study: StudyFolder, result: RehearsalResult) -> pd.DataFrame:
    lists = _lists(study)
    required = sum(len(pl["tasks"]) for pl in lists)
    assert result.judgements == result.judgements_required == required == 18 * 13  # 72 tasks x 3 + 18 checks
    assert result.participants_active == len(lists) == 18
    assert result.complete and result.participants_excluded == 0 and result.analysis_error is None
    frame = pd.read_json(result.workspace / "judgements.jsonl", lines=True)
    assert len(frame) == result.rows == required
    assert frame["participant_id"].str.startswith("rehearsal-static-").all()
    tasks = frame[frame["kind"] == "task"]
    assert (tasks["value"] == tasks["system"].map(STATIC)).all()  # every judgement is its system's static score
    asked = {t["task_id"]: t["expected"] for pl in lists for t in pl["tasks"] if isinstance(t, dict) and t["kind"] == "attention"}
    checks = frame[frame["kind"] == "attention"]
    assert (checks["value"] == checks["task_id"].map(asked)).all()  # each check answered as it asks
    assert checks["value"].nunique() > 1  # the checks ask for points across the scale, not only the lowest
    assert tasks.groupby(["task_id"])["participant_id"].nunique().eq(3).all()  # 3 participants per task
    results = json.loads((result.workspace / "results.json").read_text())
    assert results["dry_run"] == "rehearsal-static" and "dry-run:rehearsal-static" in results["signature"]
    assert result.signature == results["signature"]
    for criterion in ("fluency", "adequacy"):
        omnibus = results["criteria"][criterion]["omnibus"]
        n = len(tasks[tasks["criterion"] == criterion])
        assert omnibus["method"] == "kruskal_wallis" and omnibus["n"] == n == 108
        assert omnibus["estimate"] == pytest.approx(n - 1)  # Thomson & Belz, Table 2: H = N - 1 for Static
    assert result.report is not None and result.report.is_file()
    assert "rehearsal-static" in result.report.read_text()
    return frame


def test_static_rehearsal_through_the_real_server_and_store(study: StudyFolder):
    before = _real_files(study)
    result = rehearse(study, kind="static", seed=7, concurrency=6)
    _check_static(study, result)
    assert result.workspace == study.results_dir / "rehearsal"
    assert result.participants >= 18 and result.items_per_second > 0 and result.seconds > 0
    # the real study: its results and its store untouched, no study.db created
    assert _real_files(study) == before
    assert not study.db_file.exists()
    # the rehearsal's own store holds what the participants did, consent included
    store = Store.open(study, str(result.workspace / "study.db"))
    try:
        people = store.participants()
        assert len(store.judgements()) == result.judgements
    finally:
        store.close()
    assert all(p["consented"] for p in people) and sum(p["completed"] for p in people) == 18
    entry = logbook.read(study)[-1]
    assert entry["stage"] == "rehearse" and entry["outcome"] == "ok" and entry["seed"] == 7
    assert entry["summary"]["judgements"] == result.judgements and entry["signature"] == result.signature
    assert {o["path"] for o in entry["outputs"]} >= {"results/rehearsal/judgements.jsonl", "results/rehearsal/report.html"}
    _assert_stopped(entry)


def test_cli_rehearse_with_fewer_participants_than_lists(study: StudyFolder):
    # 6 participants take the first 6 lists (one round: every task judged once, of the 3 times required)
    proc = humeval("rehearse", study.root, "--kind", "normal", "--participants", "6", "--concurrency", "2",
                   "--seed", "3", expect=0)
    assert "Traceback" not in proc.stderr
    assert "dry-run:rehearsal-normal" in proc.stdout
    assert "6 of 6 participants submitted 78 judgements of 234 required" in proc.stderr
    assert "incomplete" in proc.stderr
    ws = study.results_dir / "rehearsal"
    frame = pd.read_json(ws / "judgements.jsonl", lines=True)
    assert frame["participant_id"].nunique() == 6 and len(frame) == 78
    assert frame["value"].between(1, 5).all() and (frame["value"] % 1 == 0).all()
    handed_out = (ws / "rerun" / "lists.csv").read_text()  # the missing judgements, dealt into new lists
    assert handed_out.count("\n") > 1 and not any(s in handed_out for s in frame["system"].unique())
    assert (ws / "report.html").is_file()


def test_refusals_are_clear_and_logged(study: StudyFolder, tmp_path: Path):
    with pytest.raises(RehearsalError, match="the study's own store"):
        rehearse(study, db=str(study.db_file))
    with pytest.raises(RehearsalError, match="unknown kind 'statik'. Did you mean 'static'"):
        rehearse(study, kind="statik")
    used = tmp_path / "used.db"
    store = Store.open(study, str(used))
    try:
        store.prepare()
        asyncio.run(store.enter("someone", "local", {}))
    finally:
        store.close()
    with pytest.raises(RehearsalError, match="already holds 1 participant"):
        rehearse(study, db=str(used))
    assert logbook.read(study)[-1]["outcome"] == "error"
    assert not study.db_file.exists()


def test_the_server_is_stopped_when_the_rehearsal_is_interrupted(study: StudyFolder, monkeypatch: pytest.MonkeyPatch):
    from humeval.rehearsal import participants as _participants

    calls = {"n": 0}
    original = _participants.Answerer.values

    def interrupted(self, assignment, rng, who=None):  # Ctrl-C in the middle of the collection
        calls["n"] += 1
        if calls["n"] == 20:
            raise KeyboardInterrupt
        return original(self, assignment, rng, who)

    monkeypatch.setattr(_participants.Answerer, "values", interrupted)
    with pytest.raises(KeyboardInterrupt):
        rehearse(study, kind="random", concurrency=2)
    entry = logbook.read(study)[-1]
    assert entry["stage"] == "rehearse" and entry["outcome"] == "error"
    _assert_stopped(entry)
    assert not (study.results_dir / "rehearsal" / "results.json").exists()


@pytest.mark.postgres
def test_static_rehearsal_on_postgresql(study: StudyFolder):
    psycopg = pytest.importorskip("psycopg")
    try:
        psycopg.connect(PG, connect_timeout=3).close()
    except psycopg.OperationalError:
        pytest.fail(f"PostgreSQL is not reachable at {PG}")
    schema = f"hv_rehearse_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        result = rehearse(study, kind="static", db=f"{PG}?options=-csearch_path%3D{schema}", workers=2)
        _check_static(study, result)
        assert result.store.startswith("postgresql://postgres@127.0.0.1:5432/test")
        assert not study.db_file.exists() and not (result.workspace / "study.db").exists()
        _assert_stopped(logbook.read(study)[-1])
    finally:
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
