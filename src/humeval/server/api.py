"""The JSON API v1 of the participant flow (and the admin's judgement dump).

======================================  ==================================================
``POST /api/v1/enter``                   ``{participant_id | platform parameters | invite,
                                         consent?}`` (the routes the protocol accepts)
                                         -> ``{"token"}``
``POST /api/v1/consent``                 record consent -> ``{"consented": true}``
``GET  /api/v1/next``                    the current or next assignment, or 204 (with header
                                         ``Humeval-Reason: wait | closed`` when a participant
                                         who has done nothing is given nothing: see below)
``POST /api/v1/judgements``              ``{assignment_id, idempotency_key, values,
                                         seconds?, next?}`` -> 201 (stored), 200 (repeat);
                                         with ``next``: the next assignment too
``GET  /api/v1/status``                  progress; completion code once completed
``GET  /api/v1/places``                  places open now, for a participant on the waitlist
                                         (no token: ``stopping.waitlist_seconds``)
``GET  /api/v1/admin/judgements``        every stored judgement (admin token)
``GET  /api/v1/admin/status``            progress, live decisions and recruitment (admin token)
``POST /api/v1/admin/invites``           invite links for participant ids (admin token)
``GET  /api/v1/openapi.json``            this API in OpenAPI 3.1
======================================  ==================================================

A participant who has done nothing and is given nothing learns why in the header
``Humeval-Reason`` (a 204 has no body): ``wait`` (the stopping rule admits no new session
now; places may reopen) or ``closed`` (no session is left); a ``next: true`` submit whose
``next`` is null carries the same header. One told ``wait`` may wait for a place for
``stopping.waitlist_seconds``: ``GET /api/v1/places`` every ``poll_seconds`` until ``open`` is
above 0 (then ``GET /api/v1/next`` again: whoever asks first takes the place) or ``finished``.

The bodies are the models of :mod:`humeval.server.contract`, checked with them and published
from them; a refusal of any layer answers in the one error shape of :mod:`humeval.server.errors`.
"""

from __future__ import annotations

import hmac
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from humeval.judgements.practice import practice_feedback
from humeval.platforms.completion import completion_json
from humeval.platforms.entry import resolve_entry
from humeval.server.contract import InvitesIn, JudgementIn, parse
from humeval.server.errors import Conflict, InvalidValue, Unauthorized
from humeval.server.guard import admit_entry
from humeval.server.incoming import read_json, session_of
from humeval.server.openapi import openapi_spec
from humeval.server.payload import assignment_json
from humeval.server.platform_entry import check_platform_entry
from humeval.server.recruitment import places_json, recruitment_view
from humeval.server.tokens import make_invite, make_token, read_invite
from humeval.store.records import Progress
from humeval.store.store import Store

__all__ = ["REASON_HEADER", "api_routes", "require_admin"]


def _store(request: Request) -> Store:
    return request.app.state.store


def require_admin(request: Request) -> None:
    token = request.app.state.config.admin_token
    auth = request.headers.get("authorization", "")
    given = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
    if not given or not hmac.compare_digest(given.encode(), token.encode()):
        raise Unauthorized("unauthorized", "missing or wrong admin token (Authorization: Bearer <admin token>)")


async def enter(request: Request) -> Response:
    data = await read_json(request)
    store = _store(request)
    platform = store.context.protocol.platform
    consent = data.get("consent", False)
    if not isinstance(consent, bool):
        raise InvalidValue("invalid_value", "consent: expected true or false", field="consent")
    entry = resolve_entry(data, platform, lambda inv: read_invite(store.context.secret, inv), extra=("consent",))
    await check_platform_entry(request, entry)
    session_id = await admit_entry(request, entry, consented=consent)
    return JSONResponse({"token": make_token(store.context.secret, entry.participant_id, session_id),
                         "participant_id": entry.participant_id,
                         "consent_required": bool(store.context.protocol.presentation.consent) and not consent})


async def consent(request: Request) -> Response:
    session = session_of(request)
    if await request.body():  # no body is needed; one that is sent must still be a JSON object
        await read_json(request)
    if not await _store(request).consent(session.participant_id):
        raise Unauthorized("unknown_participant", "this token names no participant of this study; enter again")
    return JSONResponse({"consented": True})


async def next_assignment(request: Request) -> Response:
    session = session_of(request)
    store = _store(request)
    result = await store.next_assignment(session.participant_id)
    if isinstance(result, Progress):
        return Response(status_code=204, headers=_reason(result))
    return JSONResponse(assignment_json(store, result))


#: the header that says why a participant was given nothing (a 204 carries no body)
REASON_HEADER = "Humeval-Reason"


def _reason(progress: Progress | None) -> dict[str, str]:
    return {REASON_HEADER: progress.reason} if progress is not None and progress.reason else {}


async def status(request: Request) -> Response:
    session = session_of(request)
    store = _store(request)
    prog = await store.progress(session.participant_id)
    body: dict[str, Any] = {"participant_id": session.participant_id, "progress": prog.to_json()}
    if prog.completed:
        body["completion"] = completion_json(store.context.protocol.platform, session.participant_id,
                                             screened_out=await store.screened_out(session.participant_id))
    return JSONResponse(body)


#: seconds one process answers ``GET /api/v1/places`` from its last reading (a burst on the waitlist polls it
#: together: 30 participants every 0.25 s read the store 4 times a second, not 120)
PLACES_FRESH = 0.25


async def places(request: Request) -> Response:
    state = request.app.state
    now = time.monotonic()
    seen = getattr(state, "places", None)
    if seen is None or now - seen[0] > PLACES_FRESH:
        seen = (now, await _in_thread(lambda: places_json(_store(request))))
        state.places = seen
    return JSONResponse(seen[1])


async def judgements(request: Request) -> Response:
    session = session_of(request)
    body = parse(JudgementIn, await read_json(request))
    store = _store(request)
    result = await store.submit(session.participant_id, body.assignment_id, body.idempotency_key, body.values,
                                body.seconds, comment=body.comment, then_next=body.next)
    data = result.judgement.to_json()
    if result.attempts_left:
        data["attempts_left"] = result.attempts_left
    task = store.context.task_of(body.assignment_id)
    if task is not None and task.kind == "practice":  # shown in the protocol's order: its systems are the display
        data["feedback"] = practice_feedback(store.context.protocol, task, task.systems, result.judgement.values)
    headers: dict[str, str] = {}
    if body.next:
        data["next"] = None if result.next is None or isinstance(result.next, Progress) else assignment_json(store, result.next)
        headers = _reason(result.next) if isinstance(result.next, Progress) else {}
    return JSONResponse(data, status_code=201 if result.judgement.created else 200, headers=headers)


async def admin_judgements(request: Request) -> Response:
    require_admin(request)
    store = _store(request)
    rows = await _in_thread(store.judgements)
    return JSONResponse(rows)


async def admin_status(request: Request) -> Response:
    require_admin(request)
    store = _store(request)
    overview = await _in_thread(store.overview)
    return JSONResponse({"overview": overview, "stopping": await _in_thread(store.stopping),
                         "recruitment": await _in_thread(lambda: recruitment_view(store))})


async def admin_invites(request: Request) -> Response:
    require_admin(request)
    body = parse(InvitesIn, await read_json(request))
    store = _store(request)
    if "invite" not in store.context.protocol.platform.routes:
        raise Conflict("route_not_accepted", "this study does not accept invites: add `invite` to platform.entry in "
                       "the protocol (and lock it again)")
    secret = store.context.secret
    base = str(request.base_url).rstrip("/")
    return JSONResponse({"invites": [{"participant_id": i, "url": f"{base}/?invite={make_invite(secret, i)}"}
                                     for i in body.participant_ids]})


async def openapi(request: Request) -> Response:
    return JSONResponse(openapi_spec(_store(request).context.protocol))


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
        Route("/api/v1/places", places, methods=["GET"]),
        Route("/api/v1/admin/judgements", admin_judgements, methods=["GET"]),
        Route("/api/v1/admin/status", admin_status, methods=["GET"]),
        Route("/api/v1/admin/invites", admin_invites, methods=["POST"]),
        Route("/api/v1/openapi.json", openapi, methods=["GET"]),
    ]
