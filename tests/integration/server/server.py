"""A real ``humeval serve`` in a subprocess on 127.0.0.1 and a random free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import httpx

from tests.processes import end_group

ADMIN = "test-admin-token-0123456789"
#: seconds a server may take to answer its health check (start-up imports and seeding, on a loaded machine)
START_TIMEOUT = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_free(port: int, seconds: float) -> None:
    """Until ``port`` on 127.0.0.1 can be bound again (a killed server's socket is closed); fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
            try:
                s.bind(("127.0.0.1", port))
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
        time.sleep(0.05)


class ServerProcess:
    """``humeval serve`` with ``workers`` processes, in a process group of its own; ``kill()`` SIGKILLs the whole
    group, ``stop()`` ends it with SIGTERM (then SIGKILL). ``with ServerProcess(...) as server:`` starts it and ends
    it whatever happens; a start that fails (the server exits, or does not answer in time) ends the group before it
    raises. Every server not ended yet is in :attr:`running` (the test run ends those a test forgot).

    ``prelude``: Python code the server process runs before the CLI (e.g. an import blocker);
    ``host``: the address it listens on; ``args``: more ``serve`` options; ``wrapper``: a command
    the server runs under (e.g. ``ip netns exec NAME``).
    """

    #: the servers started and not ended yet, in this process
    running: ClassVar[set[ServerProcess]] = set()

    def __init__(self, study_dir: Path, db: str | None, *, workers: int = 1, port: int | None = None,
                 prelude: str = "", host: str = "127.0.0.1", args: list[str] | None = None,
                 wrapper: list[str] | None = None) -> None:
        self.study_dir, self.db, self.workers, self.prelude = study_dir, db, workers, prelude
        self.host, self.args, self.wrapper = host, list(args or []), list(wrapper or [])
        self.port = port or free_port()
        self.url = f"http://{host}:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = study_dir / f"server-{self.port}.log"

    def start(self, timeout: float = START_TIMEOUT) -> ServerProcess:
        cmd = [sys.executable, "-m", "humeval", "serve", str(self.study_dir), "--port", str(self.port),
               "--workers", str(self.workers), *self.args]
        if self.host != "127.0.0.1":
            cmd += ["--host", self.host]
        if self.db:
            cmd += ["--db", self.db]
        if self.prelude:
            cmd = [sys.executable, "-c", f"{self.prelude}\nimport sys\nfrom humeval.cli import main\n"
                   f"sys.argv = {['humeval', *cmd[3:]]!r}\nmain()"]
        cmd = [*self.wrapper, *cmd]
        env = dict(os.environ, HUMEVAL_ADMIN_TOKEN=ADMIN)
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        ServerProcess.running.add(self)
        try:
            self._wait_until_up(timeout)
        except BaseException:
            self.kill()  # a server that did not come up is not left running
            raise
        return self

    def _wait_until_up(self, timeout: float) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log.read_text()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"server did not start in {timeout}s:\n{self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL the whole process group (also when the server itself has exited: its workers may not have)."""
        if self.proc is not None:
            end_group(self.proc, grace=0)
        ServerProcess.running.discard(self)

    def stop(self) -> None:
        """End the process group: SIGTERM, then SIGKILL after 10 s."""
        if self.proc is not None:
            end_group(self.proc, grace=10)
        ServerProcess.running.discard(self)

    def __enter__(self) -> ServerProcess:
        return self.start() if self.proc is None or self.proc.poll() is not None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
