"""The Origin check: against the study's public origin, never the request's own Host."""

from __future__ import annotations

import asyncio

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from humeval.errors import HumevalError
from humeval.server.security import SecurityMiddleware, origin_of
from humeval.server.throttle import TrustedProxies


async def _ok(request: object) -> PlainTextResponse:
    return PlainTextResponse("ok")


def _status(origin: str | None, *, host: str = "study.example", server: tuple[str, int] = ("10.0.0.11", 8000),
            client: str = "198.51.100.7", scheme: str = "http", headers: dict[str, str] | None = None,
            **kw: object) -> int:
    """The status of a POST through the middleware, with the connection's addresses chosen."""
    app = SecurityMiddleware(Starlette(routes=[Route("/x", _ok, methods=["POST"])]), **kw)  # type: ignore[arg-type]
    raw = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin else [])
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    scope = {"type": "http", "method": "POST", "path": "/x", "raw_path": b"/x", "query_string": b"", "headers": raw,
             "scheme": scheme, "server": server, "client": (client, 4321), "http_version": "1.1", "root_path": ""}
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return int(sent[0]["status"])  # type: ignore[arg-type]


def test_the_public_url_is_the_only_origin() -> None:
    public = {"public_url": "https://eval.example.org/"}
    assert _status("https://eval.example.org", **public) == 200
    assert _status("https://eval.example.org:443", **public) == 200  # the default port is no other origin
    assert _status("http://eval.example.org", **public) == 403  # another scheme
    assert _status("https://evil.example", host="evil.example", **public) == 403  # the request's Host counts for nothing
    assert _status("https://other.example", **public, allowed_origins=["https://other.example"]) == 200
    assert _status(None, **public) == 200  # no Origin: a script with a bearer token
    assert _status(None, headers={"sec-fetch-site": "cross-site"}, **public) == 403


def test_without_a_public_url_the_address_the_server_is_reached_at() -> None:
    assert _status("http://10.0.0.11:8000") == 200
    assert _status("http://evil.example", host="evil.example") == 403  # a foreign Host with its matching Origin
    assert _status("https://10.0.0.11:8000") == 403  # https for a study served over plain http
    assert _status("https://10.0.0.11:8000", scheme="https") == 200
    loopback = {"server": ("127.0.0.1", 8000), "host": "localhost:8000", "client": "127.0.0.1"}
    for origin in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"):
        assert _status(origin, **loopback) == 200, origin
    assert _status("http://localhost:9000", **loopback) == 403
    assert _status("http://evil.example:8000", **{**loopback, "host": "evil.example:8000"}) == 403


def test_behind_a_proxy_the_host_it_forwards_with_the_clients_scheme() -> None:
    proxy = {"trusted": TrustedProxies(["10.0.0.2"]), "client": "10.0.0.2"}
    https = {"x-forwarded-proto": "https", "x-forwarded-for": "198.51.100.7"}
    assert _status("https://study.example", headers=https, **proxy) == 200
    assert _status("http://study.example", headers=https, **proxy) == 403
    assert _status("https://study.example", headers=https, **{**proxy, "client": "198.51.100.9"}) == 403  # not the proxy
    local = {"server": ("127.0.0.1", 8000), "client": "127.0.0.1"}  # a proxy on the server's machine (uvicorn's default)
    assert _status("https://study.example", headers=https, **local) == 200
    assert _status("https://study.example", **local) == 403  # no proxy said so: the loopback address only


def test_a_public_url_is_checked() -> None:
    assert origin_of("https://Eval.Example.org:443/") == "https://eval.example.org"
    assert origin_of("http://10.0.0.11:8080") == "http://10.0.0.11:8080"
    for bad in ("eval.example.org", "ftp://x", "https://", "https://x/path", "https://x?q=1", "https://u:p@x",
                "https://x:99999"):
        with pytest.raises(HumevalError, match="--public-url"):
            origin_of(bad)
