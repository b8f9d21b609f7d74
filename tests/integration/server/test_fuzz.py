"""Schemathesis fuzzes the JSON API from its OpenAPI spec (bounded in time): never a 5xx."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.integration.server.server import ServerProcess
from tests.integration.server.studies import pairwise_study

pytestmark = pytest.mark.timeout(150)


def test_schemathesis_finds_no_server_error(tmp_path: Path, db_url: str | None) -> None:
    study = pairwise_study(tmp_path / "study", items=30)
    server = ServerProcess(study.root, db_url).start()
    try:
        token = httpx.post(server.url + "/api/v1/enter", json={"participant_id": "fuzzer"}).json()["token"]
        exe = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"
        cmd = [exe, "run", f"{server.url}/api/v1/openapi.json", "--checks", "not_a_server_error",
               "--max-examples", "40", "--max-time", "20", "--seed", "1", "--phases", "examples,coverage,fuzzing",
               "-H", f"Authorization: Bearer {token}"]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        report = result.stdout[-4000:] + result.stderr[-2000:]
        print(report)
        assert result.returncode == 0, report
        passed = re.search(r"(\d+) generated, (\d+) passed", report)
        assert passed is not None and int(passed.group(2)) >= 100, report  # the fuzzer really ran
    finally:
        server.stop()
