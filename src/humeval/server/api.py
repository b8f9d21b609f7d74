"""The JSON API v1 of the participant flow (and the admin's judgement dump).

======================================  ==================================================
``POST /api/v1/enter``                   ``{participant_id | platform parameters | invite,
                                         consent?}`` (the routes the protocol accepts)
                                         -> ``{"token"}``
``POST /api/v1/consent``                 record consent -> ``{"consented": true}``
``GET  /api/v1/next``                    the current or next assignment, or 204
``POST /api/v1/judgements``              ``{assignment_id, idempotency_key, values,
                                         seconds?}`` -> 201 (stored), 200 (repeat)
``GET  /api/v1/status``                  progress; completion code once completed
``GET  /api/v1/admin/judgements``        every stored judgement (admin token)
``GET  /api/v1/admin/status``            progress and live decisions (admin token)
``POST /api/v1/admin/invites``           invite links for participant ids (admin token)
``GET  /api/v1/openapi.json``            this API in OpenAPI 3.1
======================================  ==================================================
"""

from __future__ import annotations

import hmac
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from humeval.platforms.completion import completion_json
from humeval.platforms.entry import PARTICIPANT_ID, resolve_entry
from humeval.server.errors import ApiError
from humeval.server.guard import admit_entry
from humeval.server.incoming import read_json, session_of
from humeval.server.openapi import openapi_spec
from humeval.server.payload import assignment_json
from humeval.server.throttle import Throttled, refusal_response
from humeval.server.tokens import make_invite, make_token, read_invite
from humeval.store.participants import StudyFull
from humeval.store.records import Progress
from humeval.store.store import Store

__all__ = ["api_routes", "require_admin"]

IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_.:-]{8,128}$")
_JUDGEMENT_FIELDS = {"assignment_id", "idempotency_key", "values", "seconds", "comment"}


def _store(request: Request) -> Store:
    return request.app.state.store


def require_admin(request: Request) -> None:
    token = request.app.state.config.admin_token
    auth = request.headers.get("authorization", "")
    given = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
    if not given or not hmac.compare_digest(given.encode(), token.encode()):
        raise ApiError("unauthorized", "missing or wrong admin token (Authorization: Bearer <admin token>)", status=401)


async def enter(request: Request) -> Response:
    data = await read_json(request)
    store = _store(request)
    platform = store.context.protocol.platform
    consent = data.get("consent", False)
    if not isinstance(consent, bool):
        raise ApiError("invalid_value", "consent: expected true or false", status=422, field="consent")
    entry = resolve_entry(data, platform, lambda inv: read_invite(store.context.secret, inv), extra=("consent",))
    try:
        session_id = await admit_entry(request, entry, consented=consent)
    except (Throttled, StudyFull) as exc:
        return refusal_response(request, exc)
    return JSONResponse({"token": make_token(store.context.secret, entry.participant_id, session_id),
                         "participant_id": entry.participant_id,
                         "consent_required": bool(store.context.protocol.presentation.consent) and not consent})


async def consent(request: Request) -> Response:
    session = session_of(request)
    if not await _store(request).consent(session.participant_id):
        raise ApiError("unknown_participant", "this token names no participant of this study; enter again", status=401)
    return JSONResponse({"consented": True})


async def next_assignment(request: Request) -> Response:
    session = session_of(request)
    store = _store(request)
    result = await store.next_assignment(session.participant_id)
    if isinstance(result, Progress):
        return Response(status_code=204)
    return JSONResponse(assignment_json(store, result))


async def status(request: Request) -> Response:
    session = session_of(request)
    store = _store(request)
    prog = await store.progress(session.participant_id)
    body: dict[str, Any] = {"participant_id": session.participant_id, "progress": prog.to_json()}
    if prog.completed:
        body["completion"] = completion_json(store.context.protocol.platform, session.participant_id,
                                             screened_out=await store.screened_out(session.participant_id))
    return JSONResponse(body)


async def judgements(request: Request) -> Response:
    session = session_of(request)
    data = await read_json(request)
    unknown = sorted(set(data) - _JUDGEMENT_FIELDS)
    if unknown:
        raise ApiError("invalid_value", f"{unknown[0][:60]}: unknown field; expected {', '.join(sorted(_JUDGEMENT_FIELDS))}", status=422, field=unknown[0][:60])
    aid = data.get("assignment_id")
    if not isinstance(aid, str) or not 1 <= len(aid) <= 64:
        raise ApiError("invalid_value", "assignment_id: required string (from GET /api/v1/next)", status=422, field="assignment_id")
    key = data.get("idempotency_key")
    if not isinstance(key, str) or not IDEMPOTENCY_KEY.match(key):
        raise ApiError("invalid_value", "idempotency_key: required, 8-128 characters from A-Z a-z 0-9 _ . : - (a UUID works)", status=422, field="idempotency_key")
    if "values" not in data:
        raise ApiError("invalid_value", "values: required object {criterion: value}", status=422, field="values")
    seconds = data.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= 7 * 24 * 3600):
        raise ApiError("invalid_value", "seconds: a number of seconds from 0 to 604800", status=422, field="seconds")
    result = await _store(request).submit(session.participant_id, aid, key, data["values"], seconds,
                                          comment=data.get("comment", ""))
    return JSONResponse(result.judgement.to_json(), status_code=201 if result.judgement.created else 200)


async def admin_judgements(request: Request) -> Response:
    require_admin(request)
    store = _store(request)
    rows = await _in_thread(store.judgements)
    return JSONResponse(rows)


async def admin_status(request: Request) -> Response:
    require_admin(request)
    store = _store(request)
    overview = await _in_thread(store.overview)
    return JSONResponse({"overview": overview, "stopping": await _in_thread(store.stopping)})


async def admin_invites(request: Request) -> Response:
    require_admin(request)
    data = await read_json(request)
    ids = data.get("participant_ids")
    if not isinstance(ids, list) or not ids or len(ids) > 10000 or not all(isinstance(i, str) and PARTICIPANT_ID.match(i) for i in ids):
        raise ApiError("invalid_value", "participant_ids: a list of 1-10000 participant ids", status=422, field="participant_ids")
    store = _store(request)
    if "invite" not in store.context.protocol.platform.routes:
        raise ApiError("route_not_accepted", "this study does not accept invites: add `invite` to platform.entry in "
                       "the protocol (and lock it again)", status=409)
    secret = store.context.secret
    base = str(request.base_url).rstrip("/")
    return JSONResponse({"invites": [{"participant_id": i, "url": f"{base}/?invite={make_invite(secret, i)}"} for i in ids]})


async def openapi(request: Request) -> Response:
    return JSONResponse(openapi_spec())


async def _in_thread(fn: Any) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn)


def api_routes() -> list[Route]:
    return [
        Route("/api/v1/enter", enter, methods=["POST"]),
        Route("/api/v1/consent", consent, methods=["POST"]),
        Route("/api/v1/next", next_assignment, methods=["GET"]),
        Route("/api/v1/judgements", judgements, methods=["POST"]),
        Route("/api/v1/status", status, methods=["GET"]),
        Route("/api/v1/admin/judgements", admin_judgements, methods=["GET"]),
        Route("/api/v1/admin/status", admin_status, methods=["GET"]),
        Route("/api/v1/admin/invites", admin_invites, methods=["POST"]),
        Route("/api/v1/openapi.json", openapi, methods=["GET"]),
    ]
