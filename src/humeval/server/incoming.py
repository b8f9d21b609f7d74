"""Reading a request: its JSON body (``application/json``, bounded, well-formed) and its participant session."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from humeval.server.errors import BadRequest, InvalidValue, Unauthorized, UnsupportedMedia
from humeval.server.tokens import Session, read_token
from humeval.wire import read_body

__all__ = ["TOKEN_COOKIE", "json_media_type", "optional_session", "read_body", "read_json", "session_of"]

TOKEN_COOKIE = "humeval_token"
#: JSON nested deeper than this is refused before it is parsed (the contract's bodies are 3 deep)
MAX_DEPTH = 32


def json_media_type(content_type: str) -> bool:
    """Whether ``content_type`` is ``application/json``, with at most a ``charset=utf-8`` parameter."""
    media, *params = content_type.split(";")
    if media.strip().lower() != "application/json":
        return False
    for param in params:
        name, _, value = param.strip().partition("=")
        if name.strip().lower() != "charset" or value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


def _depth(body: bytes) -> int:
    """How deep arrays and objects nest in ``body`` (brackets inside strings are skipped), counted in bytes."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                return deepest
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


async def read_json(request: Request) -> dict[str, Any]:
    """The body as a JSON object; 415 (not application/json), 413, 400 (malformed, too deep, lone surrogates), 422."""
    ctype = request.headers.get("content-type", "")
    if not json_media_type(ctype):
        raise UnsupportedMedia("unsupported_media_type",
                               f"send JSON (Content-Type: application/json; charset=utf-8 at most), not {ctype[:60]!r}")
    body = await read_body(request)
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH and _depth(body) > MAX_DEPTH:
        raise BadRequest("too_deep", f"the body nests arrays or objects more than {MAX_DEPTH} deep")
    try:
        data = json.loads(body.decode("utf-8"))
        json.dumps(data, ensure_ascii=False).encode("utf-8")  # a lone surrogate (\ud800) cannot be stored or echoed
    except UnicodeError:
        raise BadRequest("invalid_unicode", "the body holds invalid Unicode (not UTF-8, or a lone surrogate "
                         "escape such as \\ud800)") from None
    except (ValueError, RecursionError) as exc:
        raise BadRequest("malformed_json", f"the body is not valid JSON: {str(exc)[:120]}") from None
    if not isinstance(data, dict):
        raise InvalidValue("invalid_value", f"the body must be a JSON object, got {type(data).__name__}")
    return data


def optional_session(request: Request, *, cookie: bool = True) -> Session | None:
    """The participant session of a bearer token, or (``cookie``: the pages) of the token cookie, if valid."""
    secret = request.app.state.store.context.secret
    auth = request.headers.get("authorization", "")
    token = auth[7:].strip() if auth[:7].lower() == "bearer " else (request.cookies.get(TOKEN_COOKIE) if cookie else None)
    return read_token(secret, token)


def session_of(request: Request) -> Session:
    """The participant session of a JSON API request: its bearer token only; 401 without a valid one.

    The API never reads the pages' cookie: a browser attaches a cookie to requests that other sites' pages
    make, a bearer token only to those the study's own client makes, so an API call cannot be made in a
    participant's name by a page that merely has their browser."""
    session = optional_session(request, cookie=False)
    if session is None:
        raise Unauthorized("unauthorized", "missing or invalid participant token (Authorization: Bearer <token>; "
                           "POST /api/v1/enter gives one); the API does not read the pages' cookie")
    return session
