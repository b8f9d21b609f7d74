"""Shared fixtures: where the reference data sets are, and a scratch study; the run's check for servers left over."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from tests.cli import humeval
from tests.processes import RUN_ENV, leftover_servers

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


def pytest_configure(config: pytest.Config) -> None:
    """Name this test run in the environment every process it starts inherits (pytest-xdist's workers too)."""
    os.environ.setdefault(RUN_ENV, uuid.uuid4().hex)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After the whole run (in the controller, after every xdist worker): a ``humeval serve`` process the run started
    and left running is killed, named, and fails the run."""
    from tests.integration.server.server import ServerProcess

    for server in list(ServerProcess.running):  # this process's own, which a test forgot
        server.kill()
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller looks once every worker is done
    left = leftover_servers(os.environ[RUN_ENV])
    if not left:
        return
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"{len(left)} `humeval serve` process(es) started by this test run were still running after it (killed "
             "now); a test that starts a server must end it whatever happens (ServerProcess as a context manager, "
             "or kill() in finally):"] + [f"  pid {pid}: {argv}" for pid, argv in left]
    if reporter is not None:
        reporter.write_line("")
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True)
        else:
            print(line)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
