"""The one error shape of the JSON API, and the HTML error page of the participant pages.

Every 4xx of ``/api/`` is ``{"error": {"code": "...", "message": "...", "field": "..."}}``
(``field`` only when one field is at fault).
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from humeval.store.refusal import Refusal

__all__ = ["ApiError", "error_response", "install_handlers"]

_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
          409: "conflict", 413: "too_large", 415: "unsupported_media_type", 422: "invalid_value", 500: "internal_error"}


class ApiError(Refusal):
    """A request refused by the server before it reached the store."""


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def error_response(request: Request, status: int, code: str, message: str, field: str | None = None) -> Response:
    if _wants_json(request):
        body: dict[str, Any] = {"code": code, "message": message}
        if field is not None:
            body["field"] = field
        return JSONResponse({"error": body}, status_code=status)
    templates = request.app.state.templates
    return templates.TemplateResponse(
        request, "error.html", {"status": status, "code": code, "message": message}, status_code=status
    )


async def _refusal(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, Refusal):
        raise exc
    return error_response(request, exc.status, exc.code, exc.message, exc.field)


async def _http(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, HTTPException):
        raise exc
    if exc.status_code == 404:
        message = f"no such endpoint: {request.method} {request.url.path}"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    else:
        message = str(exc.detail)
    return error_response(request, exc.status_code, _CODES.get(exc.status_code, "error"), message)


async def _crash(request: Request, exc: Exception) -> Response:
    return error_response(request, 500, "internal_error", "the server failed on this request; it has been logged")


def install_handlers(app: Any) -> None:
    app.add_exception_handler(Refusal, _refusal)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(Exception, _crash)
