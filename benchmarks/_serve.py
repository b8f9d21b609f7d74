"""What the benchmarks that start ``humeval serve`` share: a free loopback port and stopping the server.

Imported by the scripts of this directory (run as ``python benchmarks/<name>.py``, which puts it
on ``sys.path``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess

__all__ = ["free_port", "stop"]


def free_port() -> int:
    """A port nothing listens on, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Stop a server started with ``start_new_session=True``: SIGTERM to its process group (the supervisor and
    its workers), SIGKILL when it has not exited within ``timeout`` seconds; reaped either way."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
