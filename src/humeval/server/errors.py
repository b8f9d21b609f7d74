"""The server's own errors, and the one error shape of the JSON API (and the participants' error page).

Every 4xx/5xx of ``/api/`` (and of Prolific's hook, ``/prolific/``) is
``{"error": {"code": "...", "message": "...", "field": "..."}}``
(``field`` only when one field is at fault), with ``Retry-After`` on 429 and 503 answers.

::

    humeval.errors.Refused            anything refused, nothing written (code, message, field, status)
    ├── store.refusal.Refusal         the store said no (unknown assignment, lease expired, too many new
    │                                 participants from one network: 429, full disk: 503)
    ├── platforms.entry.EntryRefused  an entry naming no valid route
    └── HttpError                     the server said no before the store was asked
        ├── BadRequest          400   malformed JSON, a body nested too deep, lone surrogates
        ├── Unauthorized        401   missing or wrong token
        ├── Forbidden           403
        ├── NotFound            404
        ├── Conflict            409
        ├── TooLarge            413
        ├── UnsupportedMedia    415   a JSON endpoint sent something other than application/json
        └── InvalidValue        422   a field of the request contract is missing or out of bounds

The handler maps each :class:`~humeval.errors.Refused` to HTTP through its ``status``; an
exception that is none of these is a bug: 500 in the same shape, logged with its traceback.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from humeval.errors import Refused
from humeval.store.refusal import StoreUnwritable, disk_full

__all__ = [
    "BadRequest",
    "Conflict",
    "Forbidden",
    "HttpError",
    "InvalidValue",
    "NotFound",
    "TooLarge",
    "Unauthorized",
    "UnsupportedMedia",
    "error_response",
    "install_handlers",
    "printable",
]

log = logging.getLogger("humeval.server")

_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
          409: "conflict", 413: "too_large", 415: "unsupported_media_type", 422: "invalid_value", 500: "internal_error"}


class HttpError(Refused):
    """A request refused by the server before it reached the store; subclasses fix the status."""

    default_status: ClassVar[int] = 400

    def __init__(self, code: str, message: str, *, status: int | None = None, field: str | None = None,
                 retry_after: int | None = None) -> None:
        super().__init__(code, message, status=status or self.default_status, field=field, retry_after=retry_after)


class BadRequest(HttpError):
    default_status = 400


class Unauthorized(HttpError):
    default_status = 401


class Forbidden(HttpError):
    default_status = 403


class NotFound(HttpError):
    default_status = 404


class Conflict(HttpError):
    default_status = 409


class TooLarge(HttpError):
    default_status = 413


class UnsupportedMedia(HttpError):
    default_status = 415


class InvalidValue(HttpError):
    default_status = 422


def printable(text: str) -> str:
    """``text`` safe to encode as UTF-8 (a lone surrogate from a request becomes ``\\ud800``)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


#: the paths answered in the JSON error shape (machines call them); every other path is a participant's page
JSON_PATHS = ("/api/", "/prolific/")


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith(JSON_PATHS)


def error_response(request: Request, status: int, code: str, message: str, field: str | None = None,
                   headers: dict[str, str] | None = None) -> Response:
    message = printable(message)
    if _wants_json(request):
        body: dict[str, Any] = {"code": code, "message": message}
        if field is not None:
            body["field"] = printable(field)
        return JSONResponse({"error": body}, status_code=status, headers=headers)
    templates = request.app.state.templates
    return templates.TemplateResponse(
        request, "error.html", {"status": status, "code": code, "message": message}, status_code=status, headers=headers
    )


def refusal_response(request: Request, exc: Refused) -> Response:
    """The one error shape for ``exc``, with ``Retry-After`` when it says when to come back."""
    headers = {"Retry-After": str(int(exc.retry_after))} if exc.retry_after else None
    return error_response(request, exc.status, exc.code, exc.message, exc.field, headers)


async def _refused(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, Refused):
        raise exc
    if exc.status >= 500:
        log.warning("%s %s: %s", request.method, request.url.path, printable(exc.message))
    return refusal_response(request, exc)


async def _http(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, HTTPException):
        raise exc
    if exc.status_code == 404:
        message = f"no such endpoint: {request.method} {request.url.path}"
    elif exc.status_code == 405:
        allow = (exc.headers or {}).get("Allow", "")
        message = f"{request.method} is not allowed on {request.url.path}" + (f"; allowed: {allow}" if allow else "")
    else:
        message = str(exc.detail)
    return error_response(request, exc.status_code, _CODES.get(exc.status_code, "error"), message,
                          headers=dict(exc.headers) if exc.headers else None)


async def _store_failed(request: Request, exc: Exception) -> Response:
    """A full disk under the store (outside its writer: a read, the logbook) answers 503, not a traceback."""
    reason = disk_full(exc)
    if reason is None:
        raise exc
    store = request.app.state.store
    store.writer.mark_unwritable(reason)
    return await _refused(request, StoreUnwritable(store.where, reason))


async def _crash(request: Request, exc: Exception) -> Response:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(request, 500, "internal_error", "the server failed on this request; it has been logged")


def install_handlers(app: Any) -> None:
    app.add_exception_handler(Refused, _refused)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(OSError, _store_failed)
    app.add_exception_handler(DBAPIError, _store_failed)
    app.add_exception_handler(Exception, _crash)
