"""The participant pages: entry, consent, instructions, tasks, completion, nothing left.

Pages are server-rendered (Jinja2, autoescaped: an output containing HTML is shown as
text) and post plain forms, so they work without JavaScript; the small script in
``static/`` only adds timing, the magnitude-estimation warning and slider read-outs.
Pages call the same store functions as the JSON API.
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from humeval.platforms.completion import completion_json
from humeval.platforms.entry import LINK_FIELDS, MTURK_PREVIEW, resolve_entry
from humeval.server.errors import ApiError
from humeval.server.incoming import TOKEN_COOKIE, optional_session, read_body
from humeval.server.payload import assignment_json
from humeval.server.tokens import Session, make_token, read_invite
from humeval.store.records import Progress
from humeval.store.refusal import Refusal
from humeval.store.store import Store

__all__ = ["page_routes"]

_MAX_FORM = 16 * 1024


def _store(request: Request) -> Store:
    return request.app.state.store


def _render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    store = _store(request)
    base = {"study": store.context.protocol.study.name}
    return request.app.state.templates.TemplateResponse(request, name, base | context, status_code=status)


def _session(request: Request) -> Session:
    session = optional_session(request)
    if session is None:
        raise ApiError("no_session", "Your session was not found. Please open the link you were given to start the study again; your progress is kept.", status=401)
    return session


async def _form(request: Request) -> dict[str, str]:
    body = await read_body(request, _MAX_FORM)
    try:
        return dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=200))
    except (UnicodeDecodeError, ValueError):
        raise ApiError("malformed_form", "the form could not be read", status=400) from None


def _after_entry(request: Request, consented: bool) -> str:
    pres = _store(request).context.protocol.presentation
    if pres.consent and not consented:
        return "/consent"
    return "/instructions" if pres.instructions else "/task"


async def _enter(request: Request, data: dict[str, Any]) -> Response:
    store = _store(request)
    entry = resolve_entry(data, lambda inv: read_invite(store.context.secret, inv))
    session_id = await store.enter(entry.participant_id, entry.platform, entry.params, user_agent=request.headers.get("user-agent", ""))
    consented = not store.context.protocol.presentation.consent or await store.has_consented(entry.participant_id)
    response = RedirectResponse(_after_entry(request, consented), status_code=303)
    response.set_cookie(TOKEN_COOKIE, make_token(store.context.secret, entry.participant_id, session_id),
                        max_age=30 * 24 * 3600, httponly=True, samesite="lax")
    return response


async def home(request: Request) -> Response:
    query = {k: v for k, v in request.query_params.items() if k in LINK_FIELDS}
    if query.get("assignmentId") == MTURK_PREVIEW:
        return _render(request, "preview.html", {})
    if query:
        return await _enter(request, query)
    if optional_session(request) is not None:
        return RedirectResponse("/task", status_code=303)
    return _render(request, "entry.html", {"description": _store(request).context.protocol.study.description})


async def start(request: Request) -> Response:
    form = await _form(request)
    pid = form.get("participant_id", "").strip() or f"anon-{secrets.token_hex(8)}"
    return await _enter(request, {"participant_id": pid})


async def consent_page(request: Request) -> Response:
    _session(request)
    return _render(request, "consent.html", {"consent": _store(request).context.protocol.presentation.consent})


async def consent_post(request: Request) -> Response:
    session = _session(request)
    form = await _form(request)
    if form.get("agree") != "yes":
        return _render(request, "consent.html", {"consent": _store(request).context.protocol.presentation.consent,
                                                  "error": "Please tick the box to agree before you continue."}, status=422)
    await _store(request).consent(session.participant_id)
    return RedirectResponse(_after_entry(request, True), status_code=303)


async def instructions(request: Request) -> Response:
    _session(request)
    return _render(request, "instructions.html", {"instructions": _store(request).context.protocol.presentation.instructions})


async def task_page(request: Request, error: Refusal | None = None, status: int = 200) -> Response:
    session = _session(request)
    store = _store(request)
    try:
        result = await store.next_assignment(session.participant_id)
    except Refusal as exc:
        if exc.code == "consent_required":
            return RedirectResponse("/consent", status_code=303)
        raise
    if isinstance(result, Progress):
        return RedirectResponse("/done" if result.completed else "/nothing-left", status_code=303)
    data = assignment_json(store, result)
    letters = [chr(ord("A") + i) for i in range(len(data["outputs"]))]
    return _render(request, "task.html", {
        "a": data, "letters": letters, "key": f"form-{result.assignment_id}-{secrets.token_hex(8)}",
        "error": error, "progress": data["progress"],
    }, status=status)


def _form_values(store: Store, criteria: list[str], n_outputs: int, form: dict[str, str]) -> dict[str, Any]:
    protocol = store.context.protocol
    values: dict[str, Any] = {}
    for name in criteria:
        ctype = protocol.criterion(name).type
        if ctype == "rankme":
            values[name] = [_number(form.get(f"{name}.{i}", "")) for i in range(n_outputs)]
        elif name not in form or form[name] == "":
            continue  # missing: the store says "required"
        elif ctype == "2afc":
            values[name] = form[name]
        elif ctype == "likert":
            values[name] = int(form[name]) if form[name].isdigit() else form[name]
        else:
            values[name] = _number(form[name])
    return values


def _number(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return text


async def task_post(request: Request) -> Response:
    session = _session(request)
    store = _store(request)
    form = await _form(request)
    aid, key = form.get("assignment_id", ""), form.get("idempotency_key", "")
    task = None
    result = await store.next_assignment(session.participant_id)
    if not isinstance(result, Progress) and result.assignment_id == aid:
        task = result
    if task is None:
        return RedirectResponse("/task", status_code=303)  # a stale form (already submitted, or expired)
    values = _form_values(store, list(task.task.criteria), len(task.display), form)
    seconds = _number(form.get("seconds", ""))
    try:
        await store.submit(session.participant_id, aid, key[:128], values, seconds if isinstance(seconds, float) else None)
    except Refusal as exc:
        if exc.status >= 500:
            raise
        return await task_page(request, error=exc, status=422)
    return RedirectResponse("/task", status_code=303)


async def done(request: Request) -> Response:
    session = _session(request)
    store = _store(request)
    prog = await store.progress(session.participant_id)
    if not prog.completed:
        return RedirectResponse("/task", status_code=303)
    return _render(request, "done.html", {"completion": completion_json(store.context.protocol.platform), "progress": prog.to_json()})


async def nothing_left(request: Request) -> Response:
    return _render(request, "nothing_left.html", {})


async def health(request: Request) -> Response:
    return Response("ok", media_type="text/plain")


def page_routes() -> list[Route]:
    return [
        Route("/", home, methods=["GET"]),
        Route("/start", start, methods=["POST"]),
        Route("/consent", consent_page, methods=["GET"]),
        Route("/consent", consent_post, methods=["POST"]),
        Route("/instructions", instructions, methods=["GET"]),
        Route("/task", task_page, methods=["GET"]),
        Route("/task", task_post, methods=["POST"]),
        Route("/done", done, methods=["GET"]),
        Route("/nothing-left", nothing_left, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
    ]
