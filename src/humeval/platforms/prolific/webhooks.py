"""Prolific webhooks (``hooks``) as an alternative to polling ``prolific status``.

Prolific signs each hook request: ``X-Prolific-Request-Signature`` is the base64 of
HMAC-SHA256 over ``timestamp + body`` with the workspace's hook secret, and
``X-Prolific-Request-Timestamp`` is the UNIX time it was sent (Prolific API reference,
"Webhooks > Verifying"). :func:`verify_signature` checks both (a request older than
``max_age`` seconds is refused, and a timestamp that is not a finite number is refused); a
replay within that time is recognised by :func:`delivery_key` and handled once.

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
import logging
import math
import os
import time
from collections.abc import Callable
from typing import Any

from humeval.errors import HumevalError, Refused
from humeval.wire import MAX_HOOK_BODY, read_body

__all__ = ["HOOK_SECRET_ENV", "MAX_AGE", "SIGNATURE_HEADER", "TIMESTAMP_HEADER", "delivery_key", "fresh", "sent_at",
           "sign", "verify_signature", "webhook_routes"]

log = logging.getLogger("humeval.server")

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
HOOK_SECRET_ENV = "PROLIFIC_HOOK_SECRET"
#: seconds a hook request's timestamp may be away from now (a delivery is kept as long: a replay within it is a no-op)
MAX_AGE = 300.0


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature Prolific sends: base64(HMAC-SHA256(secret, timestamp + body))."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def sent_at(timestamp: str | None) -> float | None:
    """The UNIX time of ``X-Prolific-Request-Timestamp``: a finite number of seconds (at most 32 characters),
    else None (``nan``, ``inf``, ``1e999``, text: no age can be checked, so the request is refused)."""
    if not timestamp or len(timestamp) > 32:
        return None
    try:
        sent = float(timestamp)
    except ValueError:
        return None
    return sent if math.isfinite(sent) else None


def fresh(timestamp: str | None, *, max_age: float = MAX_AGE, now: float | None = None) -> bool:
    """Whether the timestamp is a finite time within ``max_age`` seconds of ``now`` (either side)."""
    sent = sent_at(timestamp)
    return sent is not None and abs((time.time() if now is None else now) - sent) <= max_age


def verify_signature(secret: str, body: bytes, timestamp: str | None, signature: str | None, *,
                     max_age: float = MAX_AGE, now: float | None = None) -> bool:
    """Whether a hook request is Prolific's: a valid signature and a timestamp within ``max_age`` seconds."""
    if not secret or not timestamp or not signature or not fresh(timestamp, max_age=max_age, now=now):
        return False
    return hmac.compare_digest(sign(secret, timestamp, body).encode(), signature.encode())


def delivery_key(timestamp: str, signature: str) -> str:
    """The key of one signed delivery: a replay of it (the same timestamp and signature) has the same key."""
    return hashlib.sha256(f"{timestamp}|{signature}".encode()).hexdigest()


def webhook_routes(sync: Callable[[], Any], secret: str | None = None, *,
                   first_delivery: Callable[[str], bool] | None = None,
                   forget_delivery: Callable[[str], None] | None = None) -> list[Any]:
    """``POST /prolific/hook``: verify the signature, then run ``sync`` (e.g. ``prolific_status`` bound to a study).

    Every answer is JSON. A request without a fresh timestamp or a signature is refused (401) before its body is
    read; the body is then read through the one bounded reader (:func:`humeval.wire.read_body`, 413 over
    :data:`~humeval.wire.MAX_HOOK_BODY` bytes, counted as it streams in) and its signature checked (401).
    ``first_delivery(key)`` (the store's record of deliveries) says whether a signed delivery is new: a replay
    of one already handled is answered 200 ``{"handled": false}`` and runs nothing. A handled delivery answers
    204; one whose ``sync`` fails answers 502 in the same JSON error shape (and ``forget_delivery(key)`` lets
    Prolific's retry of it be handled).
    """
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    key = secret if secret is not None else os.environ.get(HOOK_SECRET_ENV, "")

    def error(status: int, code: str, message: str) -> Response:
        return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)

    async def hook(request: Request) -> Response:
        timestamp, signature = request.headers.get(TIMESTAMP_HEADER), request.headers.get(SIGNATURE_HEADER)
        if not key or not signature or not fresh(timestamp):
            return error(401, "unauthorized", f"bad or stale Prolific signature: {TIMESTAMP_HEADER} must be the "
                         f"UNIX time within {MAX_AGE:g} s, and {SIGNATURE_HEADER} present")
        try:
            body = await read_body(request, MAX_HOOK_BODY)
        except Refused as exc:
            return error(exc.status, exc.code, exc.message)
        if not verify_signature(key, body, timestamp, signature):
            return error(401, "unauthorized", "bad or stale Prolific signature")
        delivery = delivery_key(str(timestamp), signature)
        if first_delivery is not None and not await run_in_threadpool(first_delivery, delivery):
            return JSONResponse({"handled": False, "reason": "this delivery was received before"})
        try:
            await run_in_threadpool(sync)
        except Exception as exc:
            log.warning("Prolific hook: the sync failed: %s", exc, exc_info=not isinstance(exc, HumevalError))
            if forget_delivery is not None:
                await run_in_threadpool(forget_delivery, delivery)
            return error(502, "sync_failed", f"the hook was verified but the sync with Prolific failed: "
                         f"{str(exc)[:200]}")
        return Response(status_code=204)

    return [Route("/prolific/hook", hook, methods=["POST"])]
