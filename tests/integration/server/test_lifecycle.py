"""A server that can no longer serve its study stops, with status 1 and a message, within 60 s (real processes);
the test run's own servers are ended whatever happens, and the run finds one left running.

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
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ROOT
from tests.integration.server.conftest import PG, pg_scratch
from tests.integration.server.server import ServerProcess
from tests.integration.server.studies import pairwise_study
from tests.processes import RUN_ENV, end_group, leftover_servers

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
            server.start()
            shutil.rmtree(server.study_dir)
            code, seconds = _exit_within(server, DEADLINE)
            log = server.log.read_text()
            assert code == 1, log[-3000:]
            last = log.strip().splitlines()[-1]  # what serve says as it exits
            assert last == (f"error: the server on {server.url}: the study's protocol {server.study_dir / 'humeval.yaml'} "
                            "is gone (the study folder or the file was removed); the server stopped (restore the study "
                            "folder, then start `humeval serve` again)"), log[-3000:]
            print(f"\nfolder removed [{backend}]: serve exited 1 after {seconds:.1f} s")
            assert seconds < DEADLINE
        finally:
            server.kill()


@pytest.mark.postgres
def test_a_server_whose_workers_cannot_start_exits_with_1(tmp_path: Path) -> None:
    with pg_scratch("SCHEMA", "hv_life_") as schema:
        server = _server(tmp_path, f"{PG}?options=-csearch_path%3D{schema}", 2)
        try:
            server.start()
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
            print(f"\nworkers that cannot start: serve exited 1 after {seconds:.1f} s")
            assert seconds < DEADLINE
        finally:
            server.kill()



def test_a_server_that_does_not_come_up_in_time_is_ended(tmp_path: Path) -> None:
    server = _server(tmp_path, None, 1)
    with pytest.raises(RuntimeError, match="did not start"):
        server.start(timeout=0.01)  # it is still importing
    assert server.proc is not None and server.proc.poll() is not None
    assert server not in ServerProcess.running
    assert server.proc.pid not in [pid for pid, _ in leftover_servers(os.environ[RUN_ENV])]


def test_the_runs_check_finds_a_server_left_running(tmp_path: Path) -> None:
    run = f"check-{os.getpid()}"
    # a process whose command line is `... humeval serve`, started by a run named `run`
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "humeval", "serve"],
                            env=dict(os.environ, **{RUN_ENV: run}), start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not leftover_servers(run) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the process has its command line
        assert [pid for pid, _ in leftover_servers(run)] == [proc.pid]
        assert leftover_servers(f"{run}-other") == []  # another run's processes are not this run's
    finally:
        end_group(proc, grace=0)
    assert leftover_servers(run) == []


def test_a_run_that_leaves_a_server_running_fails_and_kills_it(tmp_path: Path) -> None:
    """A whole pytest run (a subprocess, with this suite's conftest as a plugin) whose one test passes but leaves a
    `humeval serve` process running: the run fails, names the process, and kills it."""
    left = tmp_path / "pid"
    (tmp_path / "test_leaves.py").write_text(
        "import subprocess, sys\n"
        "def test_leaves_a_server():\n"
        "    p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', 'humeval', 'serve'])\n"
        f"    open({str(left)!r}, 'w').write(str(p.pid))\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q",
                          "-n", "0", "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_leaves.py")],
                         cwd=ROOT, env={k: v for k, v in os.environ.items() if k != RUN_ENV}, capture_output=True,
                         text=True, timeout=300, check=False)
    pid = int(left.read_text())
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 passed" in run.stdout and f"pid {pid}:" in run.stdout, run.stdout
    assert "were still running after it (killed now)" in run.stdout
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and b"zombie" not in _state(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or b"zombie" in _state(pid)


def _state(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/status").read_bytes().lower()
    except OSError:
        return b"zombie"
