"""The test run's processes: an id each process it starts inherits, the ``humeval serve`` processes it left running,
and ending a process group whatever happens.

``tests/conftest.py`` sets ``$HUMEVAL_TEST_RUN`` to a fresh id when the run starts (pytest-xdist's workers inherit
it), so every process a test starts carries it in its environment, servers and their workers included. After the
whole run, :func:`leftover_servers` lists those still running; the run then kills them and fails.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

__all__ = ["RUN_ENV", "end_group", "leftover_servers"]

#: the environment variable naming the test run that started a process
RUN_ENV = "HUMEVAL_TEST_RUN"


def _argv(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")


def _run_of(pid: int) -> str | None:
    for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
        if entry.startswith(RUN_ENV.encode() + b"="):
            return entry.split(b"=", 1)[1].decode(errors="replace")
    return None


def _is_serve(argv: list[str]) -> bool:
    """``humeval serve ...`` (as ``python -m humeval serve``, the script, or a ``-c`` prelude that calls it)."""
    if any(a == "humeval" or a.endswith("/humeval") for a, b in zip(argv, argv[1:], strict=False) if b == "serve"):
        return True
    return any("'humeval', 'serve'" in a for a in argv)


def _is_orphan_worker(pid: int, argv: list[str]) -> bool:
    """A server worker (a multiprocessing spawn child) whose ``serve`` is gone: the init process adopted it."""
    if not any("spawn_main" in a for a in argv):
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1]) == 1


def leftover_servers(run: str) -> list[tuple[int, str]]:
    """The ``humeval serve`` processes (and orphaned server workers) of the test run ``run`` still running:
    (pid, command line) each."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        try:
            if _run_of(pid) != run:
                continue
            argv = _argv(pid)
            if _is_serve(argv) or _is_orphan_worker(pid, argv):
                found.append((pid, " ".join(argv)[:300]))
        except (OSError, ValueError, IndexError):  # gone meanwhile, or another user's
            continue
    return found


def end_group(proc: subprocess.Popen[bytes] | subprocess.Popen[str], *, grace: float = 10.0) -> None:
    """End ``proc`` and every process of its group (started with ``start_new_session=True``): SIGTERM, then SIGKILL
    after ``grace`` seconds; the group is killed even when ``proc`` itself has already exited (its workers may not
    have)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM if proc.poll() is None and grace > 0 else signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=grace or None)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the group
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)
