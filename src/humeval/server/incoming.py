"""Reading a request: its JSON body (bounded, well-formed) and its participant session."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from humeval.server.errors import ApiError
from humeval.server.tokens import Session, read_token

__all__ = ["MAX_BODY", "TOKEN_COOKIE", "optional_session", "read_body", "read_json", "session_of"]

MAX_BODY = 64 * 1024
TOKEN_COOKIE = "humeval_token"


async def read_body(request: Request, limit: int = MAX_BODY) -> bytes:
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > limit):
        raise ApiError("too_large", f"request body over {limit} bytes", status=413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError("too_large", f"request body over {limit} bytes", status=413)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request) -> dict[str, Any]:
    """The body as a JSON object; 415/413/400/422 otherwise."""
    ctype = request.headers.get("content-type", "")
    if "json" not in ctype.lower():
        raise ApiError("unsupported_media_type", f"send JSON (Content-Type: application/json), not {ctype[:60]!r}", status=415)
    body = await read_body(request)
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError("malformed_json", f"the body is not valid JSON: {str(exc)[:120]}", status=400) from None
    if not isinstance(data, dict):
        raise ApiError("invalid_value", f"the body must be a JSON object, got {type(data).__name__}", status=422)
    return data


def optional_session(request: Request) -> Session | None:
    """The participant session of a bearer token (API) or the token cookie (pages), if valid."""
    secret = request.app.state.store.context.secret
    auth = request.headers.get("authorization", "")
    token = auth[7:].strip() if auth[:7].lower() == "bearer " else request.cookies.get(TOKEN_COOKIE)
    return read_token(secret, token)


def session_of(request: Request) -> Session:
    """The participant session of the request; 401 without a valid token."""
    session = optional_session(request)
    if session is None:
        raise ApiError("unauthorized", "missing or invalid participant token; POST /api/v1/enter first", status=401)
    return session
