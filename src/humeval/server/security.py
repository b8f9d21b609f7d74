"""ASGI middleware: refuse cross-origin writes, and send security headers with every response.

A ``POST`` whose ``Origin`` (or, without one, ``Sec-Fetch-Site: cross-site``) names
another origin than the study's is answered 403 before any handler runs. The study's origin
is never read from the request alone (a client chooses its own ``Host``, and a page served
under another name, e.g. after DNS rebinding, would send a matching ``Origin``):

1. ``public_url`` (``humeval serve --public-url``), when configured: that origin only;
2. else, behind a trusted proxy (``--trusted-proxy``, or a proxy on the machine of a server that
   listens on loopback, which sends ``X-Forwarded-For``): the ``Host`` the proxy forwards, with
   the scheme the client used (the connection's, or ``X-Forwarded-Proto`` from the proxy);
3. else: the address the server is reached at (the local address of the connection and its
   port; on loopback also ``localhost`` and ``[::1]``), with the connection's scheme.

``--allow-origin`` adds origins (a custom front end). The scheme is part of the origin: an
``https`` Origin for a study served over plain ``http`` is refused. Non-browser clients send
no ``Origin`` and are let through (they authenticate with a bearer token). Pages get a strict
Content-Security-Policy: scripts and styles only from this server, no inline script, no framing.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from humeval.errors import HumevalError
from humeval.server.errors import JSON_PATHS
from humeval.server.throttle import TrustedProxies

__all__ = ["SecurityMiddleware", "origin_of"]

_UNSAFE = {b"POST", b"PUT", b"PATCH", b"DELETE"}
_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'"),
]
_DEFAULT_PORT = {"http": "80", "https": "443"}
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def _origin(scheme: str, host: str) -> str:
    """``scheme://host[:port]`` in lower case, without the scheme's default port."""
    scheme, host = scheme.lower(), host.lower().rstrip(".")
    name, colon, port = host.rpartition(":")
    if colon and port == _DEFAULT_PORT.get(scheme) and not name.endswith(":"):  # not a bare IPv6 address
        host = name
    return f"{scheme}://{host}"


def _normalised(origin: str) -> str:
    """An ``Origin`` value as :func:`_origin` writes it (``null`` and other values stay as they are, lower case)."""
    scheme, sep, host = origin.strip().rstrip("/").partition("://")
    return _origin(scheme, host) if sep and scheme.lower() in _DEFAULT_PORT else origin.strip().lower()


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def origin_of(url: str, *, what: str = "--public-url") -> str:
    """The origin of a study's public address (``https://eval.example.org`` of ``https://eval.example.org/``);
    a :class:`HumevalError` naming ``what`` for anything but an http(s) URL with a host and nothing after it."""
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme.lower() not in _DEFAULT_PORT or not parts.hostname or port == -1 or parts.query or \
            parts.fragment or parts.path not in ("", "/") or parts.username or parts.password:
        raise HumevalError(f"{what}: expected the address participants open, such as https://eval.example.org "
                           f"(http or https, a host and an optional port, no path), got {url!r}")
    return _origin(parts.scheme, parts.netloc)


class SecurityMiddleware:
    def __init__(self, app: Any, allowed_origins: Iterable[str] = (), public_url: str = "",
                 trusted: TrustedProxies | None = None) -> None:
        self.app = app
        self.allowed = {_normalised(o) for o in allowed_origins}
        self.public = origin_of(public_url) if public_url else None
        self.trusted = trusted or TrustedProxies()

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
        value = _normalised(origin.decode("latin-1"))
        return value in self.allowed or value in self.study_origins(scope, headers)

    def study_origins(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> set[str]:
        """The origins this request may come from (see the module docstring)."""
        if self.public is not None:
            return {self.public}
        scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
        server = scope.get("server")
        local = _is_loopback(str(server[0])) if server else False
        client = (scope.get("client") or ("", 0))[0]
        # through a proxy: one of --trusted-proxy; or, on a server listening on loopback (reached from its own
        # machine only), a local proxy, which uvicorn believes by default and which says so in X-Forwarded-*
        forwarded = b"x-forwarded-for" in headers or b"x-forwarded-proto" in headers
        if self.trusted.networks or (local and forwarded):
            if client in self.trusted or (local and _is_loopback(client)):  # the proxy's own X-Forwarded-Proto
                proto = headers.get(b"x-forwarded-proto", b"").decode("latin-1").split(",")[0].strip().lower()
                scheme = proto if proto in _DEFAULT_PORT else scheme
            host = headers.get(b"host", b"").decode("latin-1")
            return {_origin(scheme, host)} if host else set()
        if not server:
            return set()
        name, port = str(server[0]), server[1]
        try:
            ip = ipaddress.ip_address(name)
        except ValueError:
            names: tuple[str, ...] = (name,)
        else:
            names = _LOOPBACK_NAMES if ip.is_loopback else (f"[{name}]" if ip.version == 6 else name,)
        return {_origin(scheme, f"{n}:{port}" if port else n) for n in names}

    async def _refuse(self, scope: dict[str, Any], send: Any) -> None:
        message = ("cross-origin request refused: the Origin header names another site than this study server "
                   "(its public address is set with --public-url)")
        if scope["path"].startswith(JSON_PATHS):
            body = json.dumps({"error": {"code": "forbidden_origin", "message": message}}).encode()
            ctype = b"application/json"
        else:
            body = f"<!doctype html><title>Forbidden</title><h1>403 Forbidden</h1><p>{message}</p>".encode()
            ctype = b"text/html; charset=utf-8"
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", ctype), (b"content-length", str(len(body)).encode()), *_HEADERS]})
        await send({"type": "http.response.body", "body": body})
