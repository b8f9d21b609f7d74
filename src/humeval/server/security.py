"""ASGI middleware: refuse cross-origin writes, and send security headers with every response.

A ``POST`` whose ``Origin`` (or, without one, ``Sec-Fetch-Site: cross-site``) names
another site than the one serving the study is answered 403 before any handler runs.
Non-browser clients send no ``Origin`` and are let through (they authenticate with
a bearer token). Pages get a strict Content-Security-Policy: scripts and styles only from
this server, no inline script, no framing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["SecurityMiddleware"]

_UNSAFE = {b"POST", b"PUT", b"PATCH", b"DELETE"}
_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'"),
]


class SecurityMiddleware:
    def __init__(self, app: Any, allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = {o.rstrip("/").lower() for o in allowed_origins}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if scope["method"].encode() in _UNSAFE and not self._same_origin(scope, headers):
            await self._refuse(scope, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + _HEADERS
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _same_origin(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> bool:
        origin = headers.get(b"origin")
        if origin is None:
            return headers.get(b"sec-fetch-site", b"same-origin") != b"cross-site"
        value = origin.decode("latin-1").rstrip("/").lower()
        host = headers.get(b"host", b"").decode("latin-1").lower()
        own = {f"http://{host}", f"https://{host}"}
        return value in own or value in self.allowed

    async def _refuse(self, scope: dict[str, Any], send: Any) -> None:
        message = "cross-origin request refused: the Origin header names another site than this study server"
        if scope["path"].startswith("/api/"):
            body = json.dumps({"error": {"code": "forbidden_origin", "message": message}}).encode()
            ctype = b"application/json"
        else:
            body = f"<!doctype html><title>Forbidden</title><h1>403 Forbidden</h1><p>{message}</p>".encode()
            ctype = b"text/html; charset=utf-8"
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", ctype), (b"content-length", str(len(body)).encode()), *_HEADERS]})
        await send({"type": "http.response.body", "body": body})
