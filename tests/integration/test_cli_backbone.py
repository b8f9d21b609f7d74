"""The issue-2 acceptance path, as a new user runs it: `humeval` commands through the script's entry point
(in this process; the version check starts the real script)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from humeval.templates import TEMPLATES
from tests.cli import humeval


def ok(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return humeval(*args, cwd=cwd, expect=0)


def test_version(tmp_path: Path):
    from humeval import __version__

    assert humeval("--version", cwd=tmp_path, process=True, expect=0).stdout.strip() == f"humeval {__version__}"
    assert ok("--version", cwd=tmp_path).stdout.strip() == f"humeval {__version__}"


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_init_validate_lock_run_dry_run(tmp_path: Path, template: str):
    ok("init", "s", "--template", template, "--items", "12", cwd=tmp_path)
    ok("validate", "s", cwd=tmp_path)
    ok("lock", "s", cwd=tmp_path)
    run = ok("run", "s", cwd=tmp_path)
    assert [line.split("\t")[0] for line in run.stdout.strip().splitlines()] == ["sample", "design"]
    assert all(line.split("\t")[1].startswith("humeval|protocol:") for line in run.stdout.strip().splitlines())
    ok("dry-run", "s", cwd=tmp_path)
    for kind in ("random", "static", "normal"):
        assert (tmp_path / "s/results/dry-run" / kind / "judgements.jsonl").is_file()
    log = json.loads(ok("log", "s", "--format", "json", cwd=tmp_path).stdout)
    assert [e["stage"] for e in log] == ["lock", "sample", "design", "dry-run"]
    piped = ok("log", "s", cwd=tmp_path).stdout  # not a terminal: whole cells, never cut with an ellipsis
    assert "…" not in piped and "..." not in piped
    assert all(e["signature"] in piped for e in log if e.get("signature"))


def test_tampering_after_lock_exits_1_naming_the_file(tmp_path: Path):
    ok("init", "s", cwd=tmp_path)
    ok("lock", "s", cwd=tmp_path)
    ok("run", "s", cwd=tmp_path)
    data = tmp_path / "s/data/outputs.jsonl"
    original = data.read_bytes()
    raw = bytearray(original)
    raw[20] = ord("Z") if raw[20] != ord("Z") else ord("Y")
    data.write_bytes(bytes(raw))
    proc = humeval("run", "s", cwd=tmp_path)
    assert proc.returncode == 1
    assert "data/outputs.jsonl" in proc.stderr and "locked sha256" in proc.stderr
    assert "Traceback" not in proc.stderr
    data.write_bytes(original)
    ok("run", "s", cwd=tmp_path)  # restored: the lock holds again
    data.write_bytes(bytes(raw))
    ok("lock", "s", "--release", "--reason", "new data", cwd=tmp_path)
    proc = humeval("run", "s", cwd=tmp_path)  # unlocked, but the edited id breaks the data
    assert proc.returncode == 1 and "lack outputs of some systems" in proc.stderr


def test_three_problems_reported_with_paths(tmp_path: Path):
    ok("init", "s", "--template", "rating", cwd=tmp_path)
    protocol = tmp_path / "s/humeval.yaml"
    text = protocol.read_text()
    text = text.replace("type: likert", "type: likret", 1)
    text = text.replace("files: [data/outputs.jsonl]", "files: [data/nowhere.jsonl]")
    text = text.replace("design:\n", "design:\n  judgments_per_item: 2\n")
    protocol.write_text(text)
    for command in ("validate", "run"):
        proc = humeval(command, "s", cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout
        assert "Traceback" not in proc.stderr
    proc = humeval("validate", "s", cwd=tmp_path)
    assert "criteria[0].type: unknown type 'likret'. Did you mean 'likert'?" in proc.stderr
    assert "design.judgments_per_item: unknown key" in proc.stderr and "judgements_per_item" in proc.stderr
    assert "data.files[0]: data file not found" in proc.stderr


def test_lock_show_and_errors(tmp_path: Path):
    ok("init", "s", cwd=tmp_path)
    proc = humeval("lock", "s", "--show", cwd=tmp_path)
    assert proc.returncode == 1 and "not locked" in proc.stderr
    ok("lock", "s", cwd=tmp_path)
    shown = json.loads(ok("lock", "s", "--show", cwd=tmp_path).stdout)
    assert shown["protocol"]["path"] == "humeval.yaml" and shown["seeds"]["study"] == 1
    again = humeval("lock", "s", cwd=tmp_path)
    assert again.returncode == 1 and "already locked" in again.stderr


def test_schema_is_json_schema(tmp_path: Path):
    schema = json.loads(ok("schema", cwd=tmp_path).stdout)
    assert schema["title"] == "Protocol" and "criteria" in schema["properties"]


def test_init_refuses_existing_study(tmp_path: Path):
    ok("init", "s", cwd=tmp_path)
    proc = humeval("init", "s", cwd=tmp_path)
    assert proc.returncode == 1 and "already exists" in proc.stderr


def test_unknown_template(tmp_path: Path):
    proc = humeval("init", "s", "--template", "pairwize", cwd=tmp_path)
    assert proc.returncode == 1 and "Did you mean 'pairwise'" in proc.stderr and "Traceback" not in proc.stderr
