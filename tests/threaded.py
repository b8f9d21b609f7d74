"""An ASGI app served by uvicorn in a thread on 127.0.0.1 (real sockets, so timeouts are real), for the fakes."""

from __future__ import annotations

import threading
import time
from typing import Any, Self

import uvicorn


class ThreadedServer:
    """``with ThreadedServer(app, path) as s:`` serves ``app``; ``s.url`` is its address followed by ``path``."""

    def __init__(self, app: Any, path: str = "") -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.path = path
        self.url = ""

    def __enter__(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + 60  # a loaded machine starts it late, not never
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{type(self).__name__} did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}{self.path}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.server.force_exit = True  # a request the fake holds on purpose (a timeout) is not waited for
        self.thread.join(timeout=10)
