"""SQLite takes one server process: ``--workers`` above 1 on SQLite is refused before anything is seeded.

Two SQLite processes were measured no faster than one with a 99th percentile up to 9x worse
(each writer waits in ``BEGIN IMMEDIATE`` for the other's lock; issue 15), so ``serve`` says
so and points to PostgreSQL instead of starting them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval.collect import serve
from humeval.errors import StoreError
from tests.cli import humeval
from tests.integration.server.studies import pairwise_study


def test_two_workers_on_sqlite_are_refused(tmp_path: Path) -> None:
    study = pairwise_study(tmp_path / "study", items=6, per_participant=2)
    with pytest.raises(StoreError, match=r"--workers 2: a SQLite store takes one server process.*postgresql://"):
        serve(study, workers=2, db=str(tmp_path / "other.db"))
    assert not (tmp_path / "other.db").exists() and not study.db_file.exists()  # refused before seeding
    done = humeval("serve", study.root, "--workers", "3", process=True)
    assert done.returncode == 1 and "--workers 3: a SQLite store takes one server process" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr
