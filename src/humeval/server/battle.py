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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from humeval.server.errors import HttpError
from humeval.server.incoming import optional_session
from humeval.store.records import AssignmentView
from humeval.store.store import Store

__all__ = ["battle_routes", "stream_url"]


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


async def battle_stream(request: Request) -> StreamingResponse:
    session = optional_session(request)
    if session is None:
        raise HttpError("no_session", "Your session was not found. Please open the link you were given.", status=401)
    store: Store = request.app.state.store
    aid = request.query_params.get("assignment", "")
    task = store.context.task_of(aid)
    if not store.context.live_battle(task):
        raise HttpError("not_a_battle", "this assignment is not a live battle", status=404)
    held = await store.current_assignment(session.participant_id)
    if not isinstance(held, AssignmentView) or held.assignment_id != aid:
        raise HttpError("not_your_battle", "this battle is not the one you hold now; open /task", status=409)
    stored = await store.generated(aid)
    events = _replay(stored) if stored is not None else _generate(request, store, held, session.participant_id)
    return StreamingResponse(events, media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})


async def _replay(texts: list[str]) -> AsyncIterator[bytes]:
    for side, text in enumerate(texts):
        yield _event("piece", {"side": side, "text": text})
    yield _event("done", {})


async def _generate(request: Request, store: Store, held: AssignmentView, participant_id: str) -> AsyncIterator[bytes]:
    from humeval.arena.models import GenerationError

    arena = store.context.protocol.arena
    assert arena is not None
    task = held.task
    models = list(held.display)
    prompt = store.texts(task.item_id, models[0])[1]
    if not prompt.strip():  # an item without its prompt text (the data's input): nothing to ask the models
        records = [{"model": m, "prompt": "", "text": "", "error": "no_prompt"} for m in models]
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
    records = [s.generation.to_json() for s in streams]
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
    return [Route("/battle/stream", battle_stream, methods=["GET"])]
