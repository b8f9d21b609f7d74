"""The watchdog's two reasons to stop a server: its study folder gone, its workers failing again and again."""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path
from typing import Any

from humeval.server.watchdog import STARTUP_FAILURE, Watchdog

_fork = multiprocessing.get_context("fork")


def _exit_when_told(go: Any, code: int) -> None:
    go.wait(30)
    sys.exit(code)


def _ended(dog: Watchdog, code: int) -> None:
    """A child process that the watchdog sees running, then exits with ``code`` (as a worker that failed, or
    stopped, would) and is joined (so that it is no longer one of this process's active children)."""
    go = _fork.Event()
    p = _fork.Process(target=_exit_when_told, args=(go, code))
    p.start()
    dog._look_at_workers()  # a worker lives a second or more as it starts: one look sees it
    go.set()
    p.join(timeout=30)
    assert p.exitcode == code


def _study(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "humeval.yaml").write_text("version: 1\n", encoding="utf-8")
    return folder, folder / "humeval.yaml"


def test_the_study_folder_or_its_protocol_gone_stops_the_server(tmp_path: Path) -> None:
    folder, protocol = _study(tmp_path)
    dog = Watchdog(protocol)
    assert dog.check() is None
    protocol.unlink()
    gone = (f"the study's protocol {protocol} is gone (the study folder or the file was removed); the server stopped "
            "(restore the study folder, then start `humeval serve` again)")
    assert dog.check() == gone
    folder.rmdir()
    assert dog.check() == gone


def test_workers_that_fail_again_and_again_stop_the_server(tmp_path: Path) -> None:
    dog = Watchdog(_study(tmp_path)[1], failures=3)
    dog.check()
    _ended(dog, 0)  # a worker that stopped cleanly is no failure
    _ended(dog, 1)
    _ended(dog, -9 % 256)  # (exit code 247: any code but 0 counts)
    assert dog.check() is None  # two failures: a worker replaced twice is still served
    _ended(dog, 1)
    assert dog.check() == ("3 server processes failed within 60 s (exit codes 1, 247, 1; their errors above): the "
                           "workers cannot start, so the server stopped instead of starting them again")


def test_failures_older_than_the_window_are_forgotten(tmp_path: Path) -> None:
    dog = Watchdog(_study(tmp_path)[1], failures=2, window=0.0)
    _ended(dog, 1)
    assert dog.check() is None
    _ended(dog, 1)
    assert dog.check() is None  # each failure left the (empty) window before the next came


def test_the_watchdog_stops_the_server_once_and_says_why(tmp_path: Path) -> None:
    _, protocol = _study(tmp_path)
    stops: list[str] = []
    dog = Watchdog(protocol, every=0.01, stop=lambda: stops.append("stop"))
    dog.start()
    protocol.unlink()
    dog._thread.join(timeout=30)
    assert stops == ["stop"] and str(dog.failure).startswith(f"the study's protocol {protocol} is gone")
    dog.close()


def test_a_worker_that_failed_at_start_is_reported_after_uvicorn_stopped(tmp_path: Path) -> None:
    dog = Watchdog(_study(tmp_path)[1], every=60)
    dog.start()
    _ended(dog, STARTUP_FAILURE)  # uvicorn's supervisor stops by itself on this code, before the next look
    dog.close()
    assert dog.failure is not None and dog.failure.startswith("a server process failed to start (exit code 3")
