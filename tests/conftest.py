"""Shared fixtures: where the reference data sets are, and a scratch study."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.cli import humeval

ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """The reference data sets: ``$HUMEVAL_SHARED_DATA`` or ``../shared/data`` next to the project."""
    return Path(os.environ.get("HUMEVAL_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not path.is_dir():
        pytest.fail(f"reference data not found at {path}; set HUMEVAL_SHARED_DATA")
    return path


#: the folder the demo writes, as README and docs/getting-started.md run it (the protocol's hash, and so the signature,
#: depends on the study's name)
DEMO_STUDY = "example-study"


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str, float]:
    """``humeval demo example-study --format json``, run once per test session (it takes a while): the study
    folder, the summary, stderr and the wall time. tests/integration/test_demo.py checks the run;
    tests/docs/test_outputs.py checks the docs' copies of its output."""
    cwd = tmp_path_factory.mktemp("demo")
    started = time.monotonic()
    proc = humeval("demo", DEMO_STUDY, "--format", "json", cwd=cwd, process=True, timeout=240, expect=0)
    return cwd / DEMO_STUDY, json.loads(proc.stdout), proc.stderr, time.monotonic() - started
