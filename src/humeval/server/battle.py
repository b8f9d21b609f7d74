"""Live battles: the two models' answers streamed to the page while they are generated (server-sent events).

``GET /battle/stream?assignment=ID`` (the page's cookie, or the API's bearer token) streams the battle the
participant holds: both models of the assignment's display are asked for their answer to the item's prompt (its
``input``) at once (:meth:`humeval.arena.models.Endpoint.astream`, within ``arena.limits`` or the model's own), and
each piece is sent as it arrives, as ``event: piece`` with ``{"side": 0 | 1, "text": ...}``. When both answers are
complete and neither (nor the prompt, with ``identity_in_prompt``) names a model or its maker (the identity filter
of :mod:`humeval.arena.prompts`),
both generations are stored (:mod:`humeval.store.generations`) and ``event: done`` is sent: the page then shows the
stored answers and takes the vote. When one fails (a limit, an endpoint error, no recording, a name), both are stored
with the failure, the lease ends as ``failed`` and ``event: failed`` tells the page to withdraw what it showed and to
ask for another battle (``{"reason", "next": "/task"}``): a failed battle is never shown as one and never counted.
A battle already generated (a reload) is sent again from the store, without asking the models.

**The prompt** (:func:`battle_prompt`). With ``arena.prompts.typed``, the participant writes it first
(``POST /api/v1/battle/prompt`` with ``{"assignment_id", "prompt"}``, or the page's form at ``/task/prompt``): the arena's
:class:`humeval.arena.prompts.PromptPool` checks it (length, blocklist; its repeats are counted in the store, shared by
every server process) and it is used as typed, replaced by a prompt of the file (``repeats: file``; the participant
is told) or refused with the reason in the study's language (``presentation.language``), and the stream is
refused (``prompt_required``) until one is stored. With a prompt file and no typed prompts, each battle draws one
prompt of the file (uniformly; the random stream ``arena-prompt:<assignment id>`` of the study's seed). Otherwise the
prompt is the item's ``input`` (the data's). A typed or drawn prompt is stored before the answers are asked for (the
event ``battle_prompt``, :mod:`humeval.store.generations`) and each generation's record names it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from humeval.server.errors import HttpError
from humeval.server.incoming import optional_session
from humeval.store.records import AssignmentView
from humeval.store.store import Store

__all__ = ["PROMPT_URL", "battle_prompt", "battle_routes", "offer_prompt", "prompt_pool", "stream_url"]

#: where a participant's typed prompt is posted (JSON, the API's bearer token)
PROMPT_URL = "/api/v1/battle/prompt"


def stream_url(assignment_id: str) -> str:
    """Where the page streams the answers of a live battle."""
    return f"/battle/stream?assignment={assignment_id}"


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


def _endpoints(request: Request) -> dict[str, Any]:
    """The arena's endpoints, built once per process (a recorded table is read then)."""
    state = request.app.state
    if getattr(state, "endpoints", None) is None:
        from humeval.arena.models import build_endpoints

        store: Store = state.store
        state.endpoints = build_endpoints(store.context.protocol.arena, root=Path(state.config.study_dir))
    return state.endpoints  # type: ignore[no-any-return]


def _identity(request: Request) -> Any:
    """The identity filter of the arena (:class:`humeval.arena.prompts.IdentityFilter`), built once per process."""
    state = request.app.state
    if not hasattr(state, "identity"):
        from humeval.arena.prompts import IdentityFilter

        arena = state.store.context.protocol.arena
        state.identity = IdentityFilter.for_arena(arena.models, arena.prompts)
    return state.identity


def prompt_pool(store: Store, root: Path) -> Any:
    """The arena's prompt pool (:class:`humeval.arena.prompts.PromptPool`): its file read (a prompt that breaks the
    rules raises :class:`humeval.errors.DataError` naming it; ``humeval validate`` and ``lock`` refuse it first).
    Built when the app is made (:func:`humeval.server.app.create_app`) for an arena with typed prompts or a file.
    The repeats of typed prompts are counted in the store, not in the pool (:func:`offer_prompt`)."""
    from humeval.arena.prompts import PromptPool

    arena = store.context.protocol.arena
    assert arena is not None  # a live battle's
    return PromptPool.from_rules(arena.prompts, root=root)


def _pool(request: Request) -> Any:
    state = request.app.state
    if getattr(state, "prompt_pool", None) is None:
        state.prompt_pool = prompt_pool(state.store, Path(state.config.study_dir))
    return state.prompt_pool


def _rng(store: Store, assignment_id: str) -> Any:
    from humeval.rng import stream

    return stream(store.context.protocol.study.seed, f"arena-prompt:{assignment_id}")


async def battle_prompt(request: Request, store: Store, held: AssignmentView, participant_id: str) -> dict[str, Any] | None:
    """The prompt of the live battle ``held`` (``id``, ``text``, ``source``: ``typed``, ``file`` or ``data``, and
    ``reason``: why a typed prompt was replaced, else ""); None when the participant is to type it first."""
    arena = store.context.protocol.arena
    assert arena is not None
    rules = arena.prompts
    if not rules.typed and not rules.file:  # the data's prompts
        text = store.texts(held.task.item_id, held.display[0])[1]
        return {"id": held.task.item_id, "text": text, "source": "data", "reason": ""}
    stored = await store.battle_prompt(held.assignment_id, participant_id)
    if stored is not None or rules.typed:
        return stored
    drawn = _pool(request).draw(_rng(store, held.assignment_id))
    return await store.record_prompt(held.assignment_id, participant_id,
                                     {"id": drawn.id, "text": drawn.text, "source": "file", "reason": ""})


async def offer_prompt(request: Request, store: Store, held: AssignmentView, participant_id: str,
                       text: str) -> tuple[dict[str, Any] | None, str, str]:
    """A participant's typed prompt for the battle ``held``, checked by the arena's pool (length, blocklist) and
    counted in the store (repeats: one count for every process of the study,
    :func:`humeval.store.generations.claim_typed_prompt`): (the battle's prompt as stored, or None when refused;
    the reason, "" when used as typed; the message for the participant, in the study's language). A battle whose
    prompt is stored already keeps it."""
    from humeval.server.i18n import translations

    stored = await store.battle_prompt(held.assignment_id, participant_id)
    if stored is not None:
        return stored, stored.get("reason", ""), ""
    pool = _pool(request)
    language = store.context.protocol.presentation.language
    decision = pool.refusal(text)
    if decision is None:
        typed = pool.typed_prompt(text)
        stored = await store.claim_typed_prompt(
            held.assignment_id, participant_id, {"id": typed.id, "text": typed.text, "source": "typed", "reason": ""},
            typed.key, pool.rules.max_repeats)
        if stored is not None:
            return stored, stored.get("reason", ""), ""
        decision = pool.repeated(_rng(store, held.assignment_id))
    message = decision.text(translations(language).gettext, language)
    if decision.prompt is None:
        return None, decision.reason, message
    p = decision.prompt
    stored = await store.record_prompt(held.assignment_id, participant_id,
                                       {"id": p.id, "text": p.text, "source": p.source, "reason": decision.reason})
    return stored, decision.reason, message


async def _held(request: Request, store: Store, participant_id: str, aid: str) -> AssignmentView:
    task = store.context.task_of(aid)
    if not store.context.live_battle(task):
        raise HttpError("not_a_battle", "this assignment is not a live battle", status=404)
    held = await store.current_assignment(participant_id)
    if not isinstance(held, AssignmentView) or held.assignment_id != aid:
        raise HttpError("not_your_battle", "this battle is not the one you hold now; open /task", status=409)
    return held


async def prompt_post(request: Request) -> JSONResponse:
    """``POST /api/v1/battle/prompt`` ``{"assignment_id", "prompt"}`` (bearer token): 201 with the battle's prompt
    (``{"prompt": {id, text, source, reason}, "reason", "message", "stream"}``; ``reason`` ``repeated``: a prompt of
    the file in its place), or 422 ``prompt_<reason>`` (``prompt_too_short``, ``prompt_too_long``,
    ``prompt_blocked``, ``prompt_repeated``) with the message for the participant."""
    from humeval.server.incoming import read_json, session_of

    session = session_of(request)
    body = await read_json(request)
    store: Store = request.app.state.store
    aid, text = body.get("assignment_id"), body.get("prompt")
    if not isinstance(aid, str) or not isinstance(text, str):
        raise HttpError("invalid_request", "the body is {\"assignment_id\": string, \"prompt\": string}", status=422)
    held = await _held(request, store, session.participant_id, aid)
    if not store.context.protocol.arena.prompts.typed:  # type: ignore[union-attr]
        raise HttpError("prompt_not_typed", "this arena gives the prompts (arena.prompts.typed is false)", status=409)
    prompt, reason, message = await offer_prompt(request, store, held, session.participant_id, text)
    if prompt is None:  # the one error shape: the code names the reason (prompt_too_short, prompt_blocked, ...)
        raise HttpError(f"prompt_{reason}", message, status=422, field="prompt")
    return JSONResponse({"prompt": prompt, "reason": reason, "message": message, "stream": stream_url(aid)},
                        status_code=201)


async def battle_stream(request: Request) -> StreamingResponse:
    session = optional_session(request)
    if session is None:
        raise HttpError("no_session", "Your session was not found. Please open the link you were given.", status=401)
    store: Store = request.app.state.store
    aid = request.query_params.get("assignment", "")
    held = await _held(request, store, session.participant_id, aid)
    stored = await store.generated(aid)
    if stored is not None:
        events = _replay(stored)
    else:
        prompt = await battle_prompt(request, store, held, session.participant_id)
        if prompt is None:
            raise HttpError("prompt_required", f"this battle's prompt is typed by the participant: post it to "
                            f"{PROMPT_URL} first", status=409)
        events = _generate(request, store, held, session.participant_id, prompt)
    return StreamingResponse(events, media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})


async def _replay(texts: list[str]) -> AsyncIterator[bytes]:
    for side, text in enumerate(texts):
        yield _event("piece", {"side": side, "text": text})
    yield _event("done", {})


async def _generate(request: Request, store: Store, held: AssignmentView, participant_id: str,
                    chosen: dict[str, Any]) -> AsyncIterator[bytes]:
    from humeval.arena.models import GenerationError

    arena = store.context.protocol.arena
    assert arena is not None
    task = held.task
    models = list(held.display)
    prompt = chosen["text"]
    named_prompt = {"prompt_id": chosen["id"], "prompt_source": chosen["source"]}
    if not prompt.strip():  # an item without its prompt text (the data's input): nothing to ask the models
        records = [{"model": m, "prompt": "", "text": "", "error": "no_prompt", **named_prompt} for m in models]
        await store.record_battle(held.assignment_id, participant_id, task.task_id, records)
        yield _event("failed", {"reason": "no_prompt", "next": "/task"})
        return
    endpoints = _endpoints(request)
    streams = [endpoints[m].astream(prompt, limits=arena.limits_of(m)) for m in models]
    queue: asyncio.Queue[tuple[str, int, Any]] = asyncio.Queue()

    async def pump(side: int) -> None:
        try:
            async for piece in streams[side]:
                await queue.put(("piece", side, piece))
            await queue.put(("end", side, None))
        except GenerationError as exc:
            await queue.put(("fail", side, exc))

    pumps = [asyncio.create_task(pump(side)) for side in range(len(streams))]
    ended, failure = 0, None
    try:
        while ended < len(streams) and failure is None:
            kind, side, value = await queue.get()
            if kind == "piece":
                yield _event("piece", {"side": side, "text": value})
            elif kind == "end":
                ended += 1
            else:
                failure = value
    finally:
        for p in pumps:
            p.cancel()
        for p in pumps:
            with contextlib.suppress(asyncio.CancelledError):
                await p
    records = [s.generation.to_json() | named_prompt for s in streams]
    reason = getattr(failure, "reason", "")
    if failure is None:
        identity = _identity(request)
        named = identity.battle([r["text"] for r in records], prompt, in_prompt=arena.prompts.identity_in_prompt)
        if named:
            reason = "identity"
            for r in records:
                r["error"] = r["error"] or "identity"
                r["identity"] = named
    for r in records:
        if reason and not r["error"]:
            r["error"] = "withdrawn"  # the other side of a failed battle: complete or not, never shown as one
    ok = await store.record_battle(held.assignment_id, participant_id, task.task_id, records)
    if ok:
        yield _event("done", {})
    else:
        yield _event("failed", {"reason": reason or "lease", "next": "/task"})


def battle_routes() -> list[Route]:
    return [Route("/battle/stream", battle_stream, methods=["GET"]), Route(PROMPT_URL, prompt_post, methods=["POST"])]
