"""``GET /healthz``: whether this server process can serve, and whether its store can write.

200 ``{"status": "ok", "store": "writable", "process": <pid>}``; 503 with ``Retry-After`` and
``{"status": "unavailable", "store": "unwritable", "reason": ...}`` while the last write failed
for lack of space (a load balancer then sends participants elsewhere). The state clears with
the next write that commits. ``process`` names the server process that answered, so that
``humeval serve`` (and a benchmark) can tell when every one of several processes listens.
"""

from __future__ import annotations

import os

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = ["health_routes"]


async def health(request: Request) -> Response:
    reason = request.app.state.store.writer.unwritable
    if reason is None:
        return JSONResponse({"status": "ok", "store": "writable", "process": os.getpid()})
    return JSONResponse({"status": "unavailable", "store": "unwritable", "reason": reason, "process": os.getpid()},
                        status_code=503,
                        headers={"Retry-After": "60"})


def health_routes() -> list[Route]:
    return [Route("/healthz", health, methods=["GET"])]
