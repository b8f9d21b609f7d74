"""A server that can no longer serve its study stops, with status 1 and a message, within 60 s (real processes).

``humeval serve`` in a subprocess (its own process group, killed in ``finally`` whatever happens): the study folder
removed while it serves (one process on SQLite, two workers on PostgreSQL), and workers that cannot start (their
database schema dropped, then the running workers killed, so that every worker started again fails as it starts).
Before the watchdog, the first kept serving a study that no longer existed and the second started a new worker
every few seconds for ever.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from contextlib import nullcontext
from pathlib import Path

import psycopg
import pytest

from tests.integration.server.conftest import PG, pg_scratch
from tests.integration.server.server import ServerProcess
from tests.integration.server.studies import pairwise_study

pytestmark = pytest.mark.timeout(240)
#: the bound the server must stop within, after the cause
DEADLINE = 60.0


def _study(tmp_path: Path) -> Path:
    return pairwise_study(tmp_path / "study", items=12, strategy="list", per_item=1, per_participant=2,
                          stopping=False).root


def _server(tmp_path: Path, db: str | None, workers: int) -> ServerProcess:
    server = ServerProcess(_study(tmp_path), db, workers=workers, args=["--unlocked"])
    server.log = tmp_path / "server.log"  # outside the study folder, which the test removes
    return server


def _exit_within(server: ServerProcess, seconds: float) -> tuple[int, float]:
    """The server's exit status and how long after now it came; fails after ``seconds``."""
    assert server.proc is not None
    started = time.monotonic()
    try:
        code = server.proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the server still runs {seconds:g} s later:\n{server.log.read_text()[-3000:]}")
    return code, time.monotonic() - started


def _workers(server: ServerProcess) -> list[int]:
    """The server's worker processes (its children started by multiprocessing's spawn, not its resource tracker)."""
    assert server.proc is not None
    out = subprocess.run(["pgrep", "-P", str(server.proc.pid)], capture_output=True, text=True, check=False).stdout
    return [int(pid) for pid in out.split() if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_server_whose_study_folder_is_removed_exits_with_1(tmp_path: Path, backend: str) -> None:
    with pg_scratch("SCHEMA", "hv_life_") if backend == "postgres" else nullcontext() as schema:
        db = f"{PG}?options=-csearch_path%3D{schema}" if schema else None
        server = _server(tmp_path, db, 2 if db else 1)
        try:
            server.start(timeout=90)
            shutil.rmtree(server.study_dir)
            code, seconds = _exit_within(server, DEADLINE)
            log = server.log.read_text()
            assert code == 1, log[-3000:]
            assert f"the study folder {server.study_dir} is gone; the server stopped" in log, log[-3000:]
            assert "Traceback" not in log.split("is gone")[0][-2000:]  # the message, not a traceback, says why
            assert seconds < DEADLINE
        finally:
            server.kill()


@pytest.mark.postgres
def test_a_server_whose_workers_cannot_start_exits_with_1(tmp_path: Path) -> None:
    with pg_scratch("SCHEMA", "hv_life_") as schema:
        server = _server(tmp_path, f"{PG}?options=-csearch_path%3D{schema}", 2)
        try:
            server.start(timeout=90)
            with psycopg.connect(PG, autocommit=True) as conn:  # the store's tables are gone: no worker can start
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
                conn.execute(f'CREATE SCHEMA "{schema}"')  # (empty, so that the fixture's drop finds it)
            workers = _workers(server)
            assert len(workers) == 2, workers
            for pid in workers:  # killed: the supervisor starts new ones, which fail as they start
                os.kill(pid, signal.SIGKILL)
            code, seconds = _exit_within(server, DEADLINE)
            log = server.log.read_text()
            assert code == 1, log[-3000:]
            assert "server processes failed within 60 s" in log and "the workers cannot start" in log, log[-3000:]
            assert seconds < DEADLINE
        finally:
            server.kill()

