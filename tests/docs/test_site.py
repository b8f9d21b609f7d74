"""The documentation site builds offline with ``mkdocs build --strict`` (every link and anchor resolves)."""

from __future__ import annotations

import os
import subprocess
import sys

from ..conftest import ROOT


def test_site_builds_strict(tmp_path):
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pages = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    assert {"index.html", "cli/index.html", "protocol/index.html", "api/index.html"} <= pages
