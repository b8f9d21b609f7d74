"""Admin pages behind the admin token: progress, participants, live decision, agreement, export."""

from __future__ import annotations

import hmac
import io
import json
from typing import Any

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from humeval.server.agreement import agreement_so_far
from humeval.server.errors import NotFound, Unauthorized
from humeval.server.plot import bound_svg
from humeval.server.throttle import is_https
from humeval.server.tokens import admin_cookie, admin_cookie_valid
from humeval.store.store import Store

__all__ = ["admin_routes", "export_bytes"]

ADMIN_COOKIE = "humeval_admin"
FORMATS = {"csv": "text/csv", "jsonl": "application/x-ndjson", "parquet": "application/vnd.apache.parquet"}


def _store(request: Request) -> Store:
    return request.app.state.store


def _require(request: Request) -> None:
    config = request.app.state.config
    if not admin_cookie_valid(_store(request).context.secret, config.admin_token, request.cookies.get(ADMIN_COOKIE),
                              config.admin_session_seconds):
        raise Unauthorized("unauthorized", "Admin pages need the admin token (or the admin session expired): open "
                           "/admin?token=<admin token>.")


def export_bytes(store: Store, fmt: str) -> bytes:
    """The canonical judgements table in ``fmt`` (csv, jsonl, parquet)."""
    import pandas as pd

    from humeval.judgements import JUDGEMENT_COLUMNS

    frame = pd.DataFrame(store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
    buf = io.BytesIO()
    if fmt == "csv":
        frame.to_csv(buf, index=False)
    elif fmt == "parquet":
        frame.to_parquet(buf, index=False)
    else:
        buf.write(frame.to_json(orient="records", lines=True, force_ascii=False).encode())
    return buf.getvalue()


async def admin_page(request: Request) -> Response:
    token = request.query_params.get("token")
    if token is not None:
        config = request.app.state.config
        if not hmac.compare_digest(token.encode(), config.admin_token.encode()):
            raise Unauthorized("unauthorized", "wrong admin token")
        response = RedirectResponse("/admin", status_code=303)
        response.set_cookie(ADMIN_COOKIE, admin_cookie(_store(request).context.secret, config.admin_token),
                            max_age=config.admin_session_seconds, httponly=True, samesite="strict",
                            secure=is_https(request, request.app.state.guard.trusted))
        return response
    _require(request)
    store = _store(request)

    def gather() -> dict[str, Any]:
        rows = store.judgement_rows()
        stopping = store.stopping()
        boards = store.leaderboards()
        for st in stopping:
            st["svg"] = Markup("") if st["comparison"] in boards else Markup(bound_svg(st["curve"]))
            st["board"] = boards.get(st["comparison"])
        comments = [j for j in store.judgements() if j.get("comment")]
        return {"overview": store.overview(), "participants": store.participants(), "stopping": stopping,
                "agreement": agreement_so_far(store.context.protocol, rows), "comments": comments[-200:]}

    data = await run_in_threadpool(gather)
    return request.app.state.templates.TemplateResponse(request, "admin.html", {"study": store.context.protocol.study.name, **data})


async def admin_export(request: Request) -> Response:
    _require(request)
    fmt = request.path_params["fmt"]
    if fmt not in FORMATS:
        raise NotFound("not_found", f"unknown export format '{fmt}'; available: {', '.join(FORMATS)}")
    body = await run_in_threadpool(export_bytes, _store(request), fmt)
    return Response(body, media_type=FORMATS[fmt],
                    headers={"content-disposition": f'attachment; filename="judgements.{fmt}"'})


async def admin_json(request: Request) -> Response:
    _require(request)
    rows = await run_in_threadpool(_store(request).judgements)
    return Response(json.dumps(rows), media_type="application/json")


def admin_routes() -> list[Route]:
    return [
        Route("/admin", admin_page, methods=["GET"]),
        Route("/admin/export.{fmt}", admin_export, methods=["GET"]),
        Route("/admin/judgements.json", admin_json, methods=["GET"]),
    ]
