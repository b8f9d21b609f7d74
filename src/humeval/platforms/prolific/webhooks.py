"""Prolific webhooks (``hooks``) as an alternative to polling ``prolific status``.

Prolific signs each hook request: ``X-Prolific-Request-Signature`` is the base64 of
HMAC-SHA256 over ``timestamp + body`` with the workspace's hook secret, and
``X-Prolific-Request-Timestamp`` is the UNIX time it was sent (Prolific API reference,
"Webhooks > Verifying"). :func:`verify_signature` checks both (a request older than
``max_age`` seconds is refused, so a recorded request cannot be replayed later).

:func:`webhook_routes` gives one Starlette route, ``POST /prolific/hook``: a verified
``submission.status.change`` (or any study event) runs :func:`prolific_status`, which
releases the lists of returned and timed-out participants at once. The handler never
trusts the payload beyond its signature: it asks Prolific for the submissions.
The secret comes from ``$PROLIFIC_HOOK_SECRET``: the workspace's signing secret, created with
``humeval prolific hooks secret``; :mod:`humeval.platforms.prolific.hooks` subscribes and confirms.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time
from collections.abc import Callable
from typing import Any

__all__ = ["HOOK_SECRET_ENV", "SIGNATURE_HEADER", "TIMESTAMP_HEADER", "sign", "verify_signature", "webhook_routes"]

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
HOOK_SECRET_ENV = "PROLIFIC_HOOK_SECRET"


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature Prolific sends: base64(HMAC-SHA256(secret, timestamp + body))."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify_signature(secret: str, body: bytes, timestamp: str | None, signature: str | None, *,
                     max_age: float = 300.0, now: float | None = None) -> bool:
    """Whether a hook request is Prolific's: a valid signature and a timestamp within ``max_age`` seconds."""
    if not secret or not timestamp or not signature:
        return False
    try:
        sent = float(timestamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - sent) > max_age:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body).encode(), signature.encode())


def webhook_routes(sync: Callable[[], Any], secret: str | None = None) -> list[Any]:
    """``POST /prolific/hook``: verify the signature, then run ``sync`` (e.g. ``prolific_status`` bound to a study).

    401 for a bad or stale signature, 204 when handled.
    """
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    key = secret if secret is not None else os.environ.get(HOOK_SECRET_ENV, "")

    async def hook(request: Request) -> Response:
        body = await request.body()
        if not verify_signature(key, body, request.headers.get(TIMESTAMP_HEADER), request.headers.get(SIGNATURE_HEADER)):
            return JSONResponse({"error": {"code": "unauthorized", "message": "bad or stale Prolific signature"}},
                                status_code=401)
        await run_in_threadpool(sync)
        return Response(status_code=204)

    return [Route("/prolific/hook", hook, methods=["POST"])]
