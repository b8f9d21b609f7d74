"""The participant pages: entry, consent, instructions, tasks, completion, nothing left.

Pages are server-rendered (Jinja2, autoescaped: an output containing HTML is shown as
text) and post plain forms, so they work without JavaScript; the small script in
``static/`` only adds timing, the magnitude-estimation warning and slider read-outs.
Pages call the same store functions as the JSON API.

Entry by link (``GET /?...``) never replaces a session silently: a browser that already
holds another participant's session gets a confirmation page whose POST form carries a
token signed with the store's secret and bound to the current session; a cross-site page
can make the browser open the link but cannot read the token, so it cannot switch the
session. A link naming the participant of the current session simply resumes it.
Participant pages show ``presentation.title``, never the study's internal name.
"""

from __future__ import annotations

import asyncio
import hmac
import math
import secrets
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.routing import Route

from humeval.design.tasks import practice_index
from humeval.errors import Refused
from humeval.judgements.practice import practice_feedback
from humeval.platforms.completion import completion_json, return_link
from humeval.platforms.entry import Entry, link_fields, resolve_entry
from humeval.protocol.platform_kinds import platform_kind
from humeval.server.battle import battle_prompt, offer_prompt, stream_url
from humeval.server.errors import HttpError
from humeval.server.guard import admit_entry
from humeval.server.i18n import field_problem
from humeval.server.incoming import TOKEN_COOKIE, optional_session, read_body
from humeval.server.payload import assignment_json
from humeval.server.platform_entry import check_platform_entry
from humeval.server.recruitment import poll_seconds
from humeval.server.throttle import is_https
from humeval.server.tokens import Session, make_token, read_invite, sign
from humeval.server.view import output_labels
from humeval.store.records import AssignmentView, Progress
from humeval.store.refusal import Refusal
from humeval.store.store import Store
from humeval.tasks.base import MISSING, form_number
from humeval.wire import MAX_FORM

__all__ = ["page_routes"]


def _store(request: Request) -> Store:
    return request.app.state.store


def _render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    store = _store(request)
    base = {"study": store.context.protocol.presentation.title}
    return request.app.state.templates.TemplateResponse(request, name, base | context, status_code=status)


def _session(request: Request) -> Session:
    session = optional_session(request)
    if session is None:
        raise HttpError("no_session", "Your session was not found. Please open the link you were given to start the study again; your progress is kept.", status=401)
    return session


async def _form(request: Request) -> dict[str, str]:
    body = await read_body(request, MAX_FORM)
    try:
        return dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=200))
    except (UnicodeDecodeError, ValueError):
        raise HttpError("malformed_form", "the form could not be read", status=400) from None


def _after_entry(request: Request, consented: bool) -> str:
    pres = _store(request).context.protocol.presentation
    if pres.consent and not consented:
        return "/consent"
    return "/instructions" if pres.instructions else "/task"


def _resolve(request: Request, data: dict[str, Any]) -> Entry:
    store = _store(request)
    return resolve_entry(data, store.context.protocol.platform, lambda inv: read_invite(store.context.secret, inv))


async def _no_place(request: Request, participant_id: str) -> str | None:
    """For someone new to a study whose lists are sessions of a stopping rule: ``wait`` or ``closed`` when no
    session can start now, so that they are told before they begin (consent, instructions); None otherwise."""
    store = _store(request)
    if not store.context.list_watched or await store.route_of(participant_id) is not None:
        return None
    loop = asyncio.get_running_loop()
    found = await loop.run_in_executor(None, store.recruitment)
    if found.wanted > 0:
        return None
    return "closed" if found.finished else "wait"


async def _enter(request: Request, entry: Entry) -> Response:
    store = _store(request)
    reason = await _no_place(request, entry.participant_id)
    if reason is not None:  # told before entering; on the waitlist, the entry link is opened again for a place
        return _nothing_left(request, reason, retry=request.url.path + (f"?{request.url.query}" if request.url.query else ""))
    await check_platform_entry(request, entry)
    session_id = await admit_entry(request, entry)
    consented = not store.context.protocol.presentation.consent or await store.has_consented(entry.participant_id)
    response = RedirectResponse(_after_entry(request, consented), status_code=303)
    response.set_cookie(TOKEN_COOKIE, make_token(store.context.secret, entry.participant_id, session_id),
                        max_age=30 * 24 * 3600, httponly=True, samesite="lax",
                        secure=is_https(request, request.app.state.guard.trusted))
    return response


def _switch_token(request: Request, session: Session, query: dict[str, str]) -> str:
    """The confirmation token of switching ``session`` to the entry ``query``: only this server can make it."""
    canonical = "&".join(f"{k}={v}" for k, v in sorted(query.items()))
    return sign(_store(request).context.secret, f"switch|{session.session_id}|{canonical}")


async def home(request: Request) -> Response:
    platform = _store(request).context.protocol.platform
    fields = link_fields(platform)
    query = {k: v for k, v in request.query_params.items() if k in fields}
    session = optional_session(request)
    if query:
        entry = _resolve(request, query)
        if session is None:
            return await _enter(request, entry)
        if session.participant_id == entry.participant_id:
            return RedirectResponse("/task", status_code=303)  # the same participant: resume, no new session
        return _render(request, "switch.html", {"fields": sorted(query.items()),
                                                "token": _switch_token(request, session, query)})
    if session is not None:
        return RedirectResponse("/task", status_code=303)
    # study.description is the researcher's note (it goes into the report): participants read only the
    # participant-facing texts (presentation: title, consent, instructions)
    return _render(request, "entry.html", {"open": "open" in platform.routes})


async def switch(request: Request) -> Response:
    """Confirmed entry as another participant (from the confirmation page of :func:`home`)."""
    form = await _form(request)
    token = form.pop("token", "")
    session = optional_session(request)
    platform = _store(request).context.protocol.platform
    query = {k: v for k, v in form.items() if k in link_fields(platform)}
    if session is None or not query or not hmac.compare_digest(token.encode(), _switch_token(request, session, query).encode()):
        raise HttpError("invalid_confirmation", "this confirmation is not valid (it expired or was not made by this "
                       "study); open your study link again", status=403)
    return await _enter(request, _resolve(request, query))


async def start(request: Request) -> Response:
    form = await _form(request)
    if "open" not in _store(request).context.protocol.platform.routes:
        raise HttpError("route_not_accepted", "this study is entered only through the link you were given", status=403)
    pid = form.get("participant_id", "").strip() or f"anon-{secrets.token_hex(8)}"
    return await _enter(request, _resolve(request, {"participant_id": pid}))


def _consent_context(request: Request) -> dict[str, Any]:
    protocol = _store(request).context.protocol
    return {"consent": protocol.presentation.consent, "return_url": return_link(protocol.platform)}


async def consent_page(request: Request) -> Response:
    _session(request)
    return _render(request, "consent.html", _consent_context(request))


async def consent_post(request: Request) -> Response:
    session = _session(request)
    form = await _form(request)
    if form.get("decline") == "yes":
        await _store(request).decline(session.participant_id)
        response = _render(request, "declined.html", {"return_url": return_link(_store(request).context.protocol.platform)})
        response.delete_cookie(TOKEN_COOKIE)
        return response
    if form.get("agree") != "yes":
        return _render(request, "consent.html", _consent_context(request)
                       | {"error": "Please tick the box to agree before you continue."}, status=422)
    await _store(request).consent(session.participant_id)
    return RedirectResponse(_after_entry(request, True), status_code=303)


async def instructions(request: Request) -> Response:
    _session(request)
    return _render(request, "instructions.html", {"instructions": _store(request).context.protocol.presentation.instructions})


async def task_page(request: Request, error: Refused | None = None, status: int = 200,
                    answers: dict[str, str] | None = None, typed: tuple[str, str] | None = None) -> Response:
    """The task page; ``typed``: a typed prompt refused (its text, the message shown beside the field)."""
    session = _session(request)
    store = _store(request)
    try:  # a page shown again only reads the lease it shows; it leases only when the participant holds none
        result = await store.current_assignment(session.participant_id)
    except Refusal as exc:
        if exc.code == "consent_required":
            return RedirectResponse("/consent", status_code=303)
        raise
    if isinstance(result, Progress):
        if result.completed:
            return RedirectResponse("/done", status_code=303)
        return RedirectResponse(f"/nothing-left?reason={result.reason or 'closed'}", status_code=303)
    return await _task_view(request, result, error=error, status=status, answers=answers, typed=typed,
                            participant_id=session.participant_id)


async def _task_view(request: Request, result: AssignmentView, *, error: Refused | None = None, status: int = 200,
                     answers: dict[str, str] | None = None, typed: tuple[str, str] | None = None,
                     participant_id: str, again: dict[str, Any] | None = None) -> Response:
    """The task page of ``result`` (``again``: a qualification check shown for another attempt)."""
    store = _store(request)
    data = assignment_json(store, result)
    stream, ask, prompt = None, None, None
    if store.context.live_battle(result.task):  # the answers are generated now: streamed, then shown from the store
        texts = await store.generated(result.assignment_id)
        prompt = await battle_prompt(request, store, result, participant_id)
        if prompt is None:  # typed prompts: the participant writes it first
            rules = store.context.protocol.arena.prompts  # type: ignore[union-attr]
            ask = {"min": rules.min_chars, "max": rules.max_chars, "text": typed[0] if typed else "",
                   "error": typed[1] if typed else ""}
            return _render(request, "prompt.html", {"a": data, "ask": ask, "progress": data["progress"]},
                           status=422 if typed else status)
        stream = stream_url(result.assignment_id) if texts is None else None
        data["outputs"] = texts if texts is not None else [""] * len(data["outputs"])
        if prompt["source"] != "data":
            data["input"] = prompt["text"]
    # the page (never the JSON) knows a check's kind and answer: its instruction is shown in the study's language
    data["task"] = {**data["task"], "kind": result.task.kind, "expected": result.task.expected}
    letters = [chr(ord("A") + i) for i in range(len(data["outputs"]))]
    protocol = store.context.protocol
    labels = output_labels(protocol.presentation.output_labels, len(letters), protocol.presentation.language)
    # a refused answer is shown at its field, saying what is valid there
    problem = (field_problem(error.field, {c.name: c for c in protocol.criteria}, answers or {},
                             protocol.presentation.language)
               if error is not None and error.code == "invalid_value" else None)
    return _render(request, "task.html", {
        "a": data, "letters": letters, "labels": labels, "key": f"form-{result.assignment_id}-{secrets.token_hex(8)}",
        "error": error, "problem": problem, "progress": data["progress"], "answers": answers or {}, "stream": stream,
        "replaced": bool(prompt and prompt.get("reason")), "again": again,
    }, status=status)


async def prompt_form(request: Request) -> Response:
    """The page's typed prompt (``/task/prompt``): stored, then the battle streams; refused, the page asks again
    with the reason beside the field."""
    session = _session(request)
    store = _store(request)
    form = await _form(request)
    aid, text = form.get("assignment_id", ""), form.get("prompt", "")
    held = await store.current_assignment(session.participant_id)
    if (not isinstance(held, AssignmentView) or held.assignment_id != aid or not store.context.live_battle(held.task)
            or not store.context.protocol.arena.prompts.typed):  # type: ignore[union-attr]
        return RedirectResponse("/task", status_code=303)  # a stale form: the page shows what is next
    prompt, _reason, message = await offer_prompt(request, store, held, session.participant_id, text)
    if prompt is None:
        return await task_page(request, typed=(text, message))
    return RedirectResponse("/task", status_code=303)


def _form_values(store: Store, criteria: list[str], n_outputs: int, form: dict[str, str]) -> dict[str, Any]:
    protocol = store.context.protocol
    values: dict[str, Any] = {}
    for name in criteria:
        c = protocol.criterion(name)
        value = c.task.form_value(c, form, n_outputs)
        if value is not MISSING:  # missing: the store says "required"
            values[name] = value
    return values


async def task_post(request: Request) -> Response:
    session = _session(request)
    store = _store(request)
    form = await _form(request)
    aid, key = form.get("assignment_id", ""), form.get("idempotency_key", "")
    # one store operation: the form's task comes from its assignment id (the store checks the assignment is theirs)
    task = store.context.task_of(aid)
    if task is None:
        return RedirectResponse("/task", status_code=303)
    values = _form_values(store, list(task.criteria), len(task.systems), form)
    seconds = form_number(form.get("seconds", ""))
    again = form.get("again") == "1"  # another attempt at a qualification check (an edit of its answer)
    try:
        # the next task is leased with the answer (one operation): the redirected page finds it
        result = await store.submit(session.participant_id, aid, key[:128], values,
                                    seconds if isinstance(seconds, float) else None, only_open=not again,
                                    comment=form.get("comment", "").strip(), then_next=True)
    except Refused as exc:  # (the store's refusals, and values the protocol does not admit)
        if exc.code in _STALE or (again and exc.code == "judgement_final"):
            return RedirectResponse("/task", status_code=303)  # a stale form: nothing stored, the page shows what is next
        if exc.status >= 500:
            raise
        if again:
            return await again_page(request, error=exc, answers=form)
        return await task_page(request, error=exc, status=422, answers=form)  # every answer given is shown again
    if result.attempts_left:
        return RedirectResponse(f"/task/again?assignment={quote(aid)}", status_code=303)
    if task.kind == "practice":
        return RedirectResponse(f"/feedback?assignment={quote(aid)}", status_code=303)
    if _reveals(store, task):
        return RedirectResponse(f"/reveal?assignment={quote(aid)}", status_code=303)
    return RedirectResponse("/task", status_code=303)


async def again_page(request: Request, error: Refused | None = None, answers: dict[str, str] | None = None) -> Response:
    """A qualification check answered otherwise than it asks, shown again for another attempt
    (``design.qualification_attempts``; :mod:`humeval.store.qualify`); the task page once no attempt is left."""
    session = _session(request)
    store = _store(request)
    aid = (answers or {}).get("assignment_id") or request.query_params.get("assignment", "")
    left = await store.attempts_left(session.participant_id, aid)
    task = store.context.task_of(aid)
    answered = await store.answer_of(session.participant_id, aid) if left and task is not None else None
    if task is None or answered is None:
        return RedirectResponse("/task", status_code=303)
    progress = await store.progress(session.participant_id)  # the check counts as done: shown again, it is the last
    view = AssignmentView(aid, task, tuple(answered[0]), time.time(), replace(progress, done=max(0, progress.done - 1)))
    return await _task_view(request, view, error=error, status=422 if error else 200, answers=answers,
                            participant_id=session.participant_id, again={"left": left})


def _reveals(store: Store, task: Any) -> bool:
    """Whether the models of ``task`` are named after the vote: an arena with ``reveal``, a battle (no check)."""
    arena = store.context.protocol.arena
    return (arena is not None and arena.reveal and task.kind == "task"
            and any(store.context.protocol.criterion(c).task.arena for c in task.criteria))


async def reveal(request: Request) -> Response:
    """The models of a battle the participant has voted on (``arena.reveal``); before the vote, or for another
    participant's battle, the task page."""
    session = _session(request)
    store = _store(request)
    aid = request.query_params.get("assignment", "")
    task = store.context.task_of(aid)
    answered = await store.answer_of(session.participant_id, aid) if task is not None and _reveals(store, task) else None
    if task is None or answered is None:
        return RedirectResponse("/task", status_code=303)
    display, values = answered
    votes = [values.get(c) for c in task.criteria if store.context.protocol.criterion(c).task.arena]
    return _render(request, "reveal.html", {"models": display, "vote": votes[0] if votes else "",
                                            "letters": [chr(ord("A") + i) for i in range(len(display))]})


async def feedback(request: Request) -> Response:
    """The feedback on a practice item the participant has answered (``design.practice``): right or not, the answer
    expected and the explanation; before the answer, or for another participant's item, the task page."""
    session = _session(request)
    store = _store(request)
    aid = request.query_params.get("assignment", "")
    task = store.context.task_of(aid)
    answered = await store.answer_of(session.participant_id, aid) if task is not None and task.kind == "practice" else None
    if task is None or answered is None:
        return RedirectResponse("/task", status_code=303)
    protocol = store.context.protocol
    told = practice_feedback(protocol, task, answered[0], answered[1])
    expected = told["expected"]
    return _render(request, "feedback.html", {
        "feedback": told, "number": practice_index(task) + 1, "of": len(protocol.design.practice),
        "expected": f"{expected:g}" if isinstance(expected, int | float) else str(expected)})


#: a form answered elsewhere (another tab), not theirs, expired and given away, no longer needed, or a battle whose
#: generation failed: nothing stored
_STALE = ("already_submitted", "unknown_assignment", "lease_expired", "lease_withdrawn", "generation_failed")


async def done(request: Request) -> Response:
    session = _session(request)
    store = _store(request)
    prog = await store.progress(session.participant_id)
    if not prog.completed:
        return RedirectResponse("/task", status_code=303)
    completion = completion_json(store.context.protocol.platform, session.participant_id,
                                 screened_out=await store.screened_out(session.participant_id))
    return _render(request, "done.html", {"completion": completion, "progress": prog.to_json(),
                                          "ended_early": await store.ended_early(session.participant_id)})


def _nothing_left(request: Request, reason: str, retry: str = "/task") -> Response:
    """No task for the participant: ``wait`` (with ``stopping.waitlist_seconds``, the waitlist page: it asks for a
    place, then opens ``retry``) or ``closed``."""
    store = _store(request)
    platform = store.context.protocol.platform
    stopping = store.context.protocol.stopping
    seconds = float(stopping.waitlist_seconds) if stopping is not None else 0.0
    waitlist = None
    if reason == "wait" and seconds > 0:
        waitlist = {"seconds": seconds, "poll": poll_seconds(seconds), "retry": retry,
                    "minutes": max(1, math.ceil(seconds / 60))}
    return _render(request, "nothing_left.html", {"reason": reason if reason in ("wait", "closed") else "closed",
                                                  "asks_return": platform_kind(platform.kind).asks_return, "waitlist": waitlist,
                                                  "return_url": return_link(platform)})


async def nothing_left(request: Request) -> Response:
    return _nothing_left(request, request.query_params.get("reason", "closed"))


_FAVICON = Path(__file__).parent / "static" / "favicon.svg"


async def favicon(request: Request) -> Response:
    """The icon browsers ask for at ``/favicon.ico`` (pages name ``/static/favicon.svg``): never a 404."""
    return FileResponse(_FAVICON, media_type="image/svg+xml", headers={"cache-control": "public, max-age=86400"})


def page_routes() -> list[Route]:
    return [
        Route("/", home, methods=["GET"]),
        Route("/start", start, methods=["POST"]),
        Route("/switch", switch, methods=["POST"]),
        Route("/consent", consent_page, methods=["GET"]),
        Route("/consent", consent_post, methods=["POST"]),
        Route("/instructions", instructions, methods=["GET"]),
        Route("/task", task_page, methods=["GET"]),
        Route("/task", task_post, methods=["POST"]),
        Route("/task/prompt", prompt_form, methods=["POST"]),
        Route("/task/again", again_page, methods=["GET"]),
        Route("/reveal", reveal, methods=["GET"]),
        Route("/feedback", feedback, methods=["GET"]),
        Route("/done", done, methods=["GET"]),
        Route("/nothing-left", nothing_left, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
    ]
