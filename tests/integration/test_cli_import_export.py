"""Platform export and import as pipeline stages, end to end through the CLI: a batch written
for workers, their MTurk results imported, and collate -> exclude -> analyze counting them."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest

from humeval.files import read_jsonl
from humeval.templates import init_study
from tests.cli import humeval


def ok(*args: str) -> subprocess.CompletedProcess:
    return humeval(*args, expect=0)


def answer_batch(batch: Path, target: Path, workers: list[str]) -> int:
    """What MTurk returns: one row per worker and batch row, the batch columns as ``Input.*``.

    Each worker prefers the longer output (an honest, deterministic worker), so the
    expected choice can be checked against the key file afterwards.
    """
    with batch.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    fields = ["HITId", "WorkerId", "WorkTimeInSeconds", "SubmitTime", *[f"Input.{c}" for c in rows[0]], "Answer.quality"]
    with target.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for h, row in enumerate(rows):
            for w in workers:
                choice = "A" if len(row["output_1"]) >= len(row["output_2"]) else "B"
                writer.writerow({"HITId": f"HIT{h}", "WorkerId": w, "WorkTimeInSeconds": "42",
                                 "SubmitTime": "Tue Sep 29 10:00:00 PDT 2026",
                                 **{f"Input.{c}": v for c, v in row.items()}, "Answer.quality": choice})
    return len(rows) * len(workers)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("import-study")
    init_study(root, "pairwise", items=6, seed=3)
    text = (root / "humeval.yaml").read_text()
    (root / "humeval.yaml").write_text(text.replace("kind: local", "kind: files"))
    ok("run", str(root))
    ok("lock", str(root))
    return root


def test_mturk_results_reach_collate_exclude_and_analyze(study, tmp_path):
    ok("export", str(study), "--format", "mturk-batch")
    batch = study / "results" / "mturk_batch.csv"
    results_csv = tmp_path / "Batch_123_batch_results.csv"
    n = answer_batch(batch, results_csv, ["W1", "W2", "W3"])
    ok("import", str(study), "mturk", str(results_csv))
    table = read_jsonl(study / "results" / "judgements.jsonl")
    assert len(table) == n == 18
    keys = {k["key"]: k for k in read_jsonl(study / ".humeval" / "keys" / "results.jsonl")}
    with batch.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            k = keys[row["key"]]
            longer = k["order"][0] if len(row["output_1"]) >= len(row["output_2"]) else k["order"][1]
            got = [j for j in table if j["task_id"] == k["task_id"]]
            assert len(got) == 3
            assert all((j["system"] if j["choice"] == "A" else j["system_b"]) == longer for j in got)
    # the same file again: no new judgements
    ok("import", str(study), "mturk", str(results_csv), "--force")
    assert len(read_jsonl(study / "results" / "judgements.jsonl")) == n
    for command in ("collate", "exclude", "analyze"):
        ok(command, str(study))
    collation = json.loads((study / "results" / "collation.json").read_text())
    assert collation["complete"] is True and collation["judgements"] == n
    results = json.loads((study / "results" / "results.json").read_text())
    assert results["counts"]["analysed"] == n
    stages = [e["stage"] for e in read_jsonl(study / ".humeval" / "logbook.jsonl")]
    assert {"export-batch", "import"} <= set(stages)
    entry = next(e for e in reversed(read_jsonl(study / ".humeval" / "logbook.jsonl")) if e["stage"] == "import")
    assert entry["outcome"] == "ok" and entry["summary"]["imported"] == n
    assert any(o["path"].startswith("results/sources/mturk-") for o in entry["outputs"])


def test_import_with_the_folder_left_out_or_misplaced_says_how(study, tmp_path):
    proc = humeval("import", "mturk", str(study), str(tmp_path / "x.csv"))
    assert proc.returncode == 1 and "the study folder comes first" in proc.stderr and "Traceback" not in proc.stderr
    proc = humeval("import", "prolific")
    assert proc.returncode == 1 and "Usage: humeval import [DIR] PLATFORM FILE" in proc.stderr


def test_prolific_import_from_the_study_folder(study, tmp_path):
    export = tmp_path / "prolific_export.csv"
    export.write_text("Submission id,Participant id,Status,Time taken,Completion code\ns1,W1,APPROVED,610,C1\n"
                      "s2,P9,RETURNED,,\ns3,P8,APPROVED,590,C1\n")
    humeval("import", "prolific", str(export), cwd=study, expect=0)
    entry = [e for e in read_jsonl(study / ".humeval" / "logbook.jsonl") if e["stage"] == "import"][-1]
    assert entry["summary"]["submissions"] == 3 and entry["summary"]["statuses"] == {"APPROVED": 2, "RETURNED": 1}
    assert entry["summary"]["median_seconds_taken"] == 600.0  # (590 + 610) / 2; the returned one has no time
    kept = read_jsonl(study / entry["outputs"][0]["path"])
    assert [(r["submission_id"], r["time_taken"]) for r in kept] == [("s1", 610.0), ("s2", None), ("s3", 590.0)]


def test_a_rerun_batch_names_no_system_and_comes_back_through_the_same_import(tmp_path):
    root = tmp_path / "study"
    init_study(root, "pairwise", items=4, seed=8)
    (root / "humeval.yaml").write_text((root / "humeval.yaml").read_text().replace("kind: local", "kind: files"))
    ok("run", str(root))
    ok("lock", str(root))
    ok("export", str(root), "--format", "mturk-batch")
    answer_batch(root / "results" / "mturk_batch.csv", tmp_path / "first.csv", ["W1", "W2"])
    ok("import", str(root), "mturk", str(tmp_path / "first.csv"))
    ok("collate", str(root))
    assert json.loads((root / "results" / "collation.json").read_text())["judgements_missing"] == 4
    rerun = root / "results" / "rerun" / "batch.csv"
    for handed_out in (root / "results" / "mturk_batch.csv", rerun):
        text = handed_out.read_text()
        assert "baseline" not in text and "candidate" not in text and "|" not in text, handed_out
    answer_batch(rerun, tmp_path / "rerun.csv", ["W3"])
    ok("import", str(root), "mturk", str(tmp_path / "rerun.csv"))
    ok("collate", str(root))
    collation = json.loads((root / "results" / "collation.json").read_text())
    assert collation["complete"] is True and collation["judgements"] == 12
    assert len(list((root / "results" / "sources").glob("mturk-*.jsonl"))) == 2
