"""The server's watchdog: ``humeval serve`` stops, with a reason, when it can no longer serve its study.

uvicorn's supervisor (``--workers N``) starts a new worker process whenever one dies; a worker that fails as it
starts (its study folder was removed, its database is gone) fails again, so the supervisor would start workers
every few seconds for ever, and a single process whose study folder was removed would go on serving a study that
no longer exists. :class:`Watchdog` runs in the serving process (the supervisor, or the one server process) and
looks every ``every`` seconds at two things:

- the study's protocol (``humeval.yaml``): gone (the study folder removed, or the file), and the server stops;
- the worker processes (the children this process started): when ``failures`` of them ended with an error code
  within ``window`` seconds, the server stops. One worker that dies (killed, out of memory) is replaced as before.
  A worker is noted when a look finds it running, so one that ended within a single look (``every``) would be
  missed; a uvicorn worker takes a second or more to import and start, even when it then fails.

To stop, it sends this process SIGINT, the signal of Ctrl-C, which uvicorn handles as a graceful shutdown in both
modes. Its :attr:`failure` then says why, and ``serve`` exits with status 1 and that message. A worker that ended
with uvicorn's own start-up failure code (3: uvicorn's supervisor then stops by itself) is reported the same way
(:meth:`Watchdog.close` looks a last time). So a server whose study disappears or whose workers cannot start exits
within about ``every`` seconds plus uvicorn's graceful shutdown (5 s), or as soon as its workers have failed
``failures`` times (each start takes a few seconds), well within a minute.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from pathlib import Path

__all__ = ["STARTUP_FAILURE", "Watchdog"]

#: the exit code of a uvicorn worker that failed before it served (uvicorn.config.STARTUP_FAILURE)
STARTUP_FAILURE = 3


def _interrupt() -> None:
    os.kill(os.getpid(), signal.SIGINT)


class Watchdog:
    """Watches the study's ``protocol`` file (``humeval.yaml``) and this process's worker processes; see the module."""

    def __init__(self, protocol: Path, *, failures: int = 3, window: float = 60.0, every: float = 0.5,
                 stop: Callable[[], None] = _interrupt) -> None:
        self.protocol = Path(protocol)
        self.failures, self.window, self.every, self._stop = failures, window, every, stop
        #: why the watchdog stopped the server (None: it did not)
        self.failure: str | None = None
        self._seen: dict[int, BaseProcess] = {}
        self._ended: set[int] = set()
        self._failed: deque[tuple[float, int]] = deque()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="humeval-watchdog")

    def start(self) -> Watchdog:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop watching (the server has stopped); a worker that failed at start since the last look is reported."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if self.failure is None:
            self._look_at_workers()
            started = [code for _, code in self._failed if code == STARTUP_FAILURE]
            if started:
                self.failure = ("a server process failed to start (exit code 3, its error above); the server stopped; "
                                "no judgement was collected by it")

    def check(self) -> str | None:
        """One look: why the server must stop now, or None."""
        if not self.protocol.is_file():  # (the folder removed, or its protocol: one message, whichever a look saw)
            return (f"the study's protocol {self.protocol} is gone (the study folder or the file was removed); the "
                    "server stopped (restore the study folder, then start `humeval serve` again)")
        now = time.monotonic()
        self._look_at_workers(now)
        while self._failed and self._failed[0][0] < now - self.window:
            self._failed.popleft()
        if len(self._failed) >= self.failures:
            codes = ", ".join(str(code) for _, code in self._failed)
            return (f"{len(self._failed)} server processes failed within {self.window:g} s (exit codes {codes}; their "
                    "errors above): the workers cannot start, so the server stopped instead of starting them again")
        return None

    def _look_at_workers(self, now: float | None = None) -> None:
        """Note the worker processes started since the last look, and those that ended with an error code."""
        now = time.monotonic() if now is None else now
        try:
            children = multiprocessing.active_children()
        except RuntimeError:  # the supervisor started a process at that moment: look again next time
            children = []
        for child in children:
            if child.pid is not None:
                self._seen.setdefault(child.pid, child)
        for pid, child in self._seen.items():
            code = child.exitcode
            if code is not None and pid not in self._ended:
                self._ended.add(pid)
                if code != 0:
                    self._failed.append((now, code))

    def _run(self) -> None:
        while not self._done.wait(self.every):
            reason = self.check()
            if reason is not None:
                self.failure = reason
                self._stop()
                return
