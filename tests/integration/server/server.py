"""A real ``humeval serve`` in a subprocess on 127.0.0.1 and a random free port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ADMIN = "test-admin-token-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """``humeval serve`` with ``workers`` processes; ``kill()`` SIGKILLs the whole process group.

    ``prelude``: Python code the server process runs before the CLI (e.g. an import blocker);
    ``host``: the address it listens on; ``args``: more ``serve`` options; ``wrapper``: a command
    the server runs under (e.g. ``ip netns exec NAME``).
    """

    def __init__(self, study_dir: Path, db: str | None, *, workers: int = 1, port: int | None = None,
                 prelude: str = "", host: str = "127.0.0.1", args: list[str] | None = None,
                 wrapper: list[str] | None = None) -> None:
        self.study_dir, self.db, self.workers, self.prelude = study_dir, db, workers, prelude
        self.host, self.args, self.wrapper = host, list(args or []), list(wrapper or [])
        self.port = port or free_port()
        self.url = f"http://{host}:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = study_dir / f"server-{self.port}.log"

    def start(self, timeout: float = 30.0) -> ServerProcess:
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
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log.read_text()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"server did not start in {timeout}s:\n{self.log.read_text()}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
