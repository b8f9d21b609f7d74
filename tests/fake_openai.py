"""A local fake of an OpenAI-compatible chat-completions server, with injectable faults and a request count.

``POST /v1/chat/completions`` answers ``{"choices": [{"message": {"role": "assistant", "content": ...},
"finish_reason": "stop"}], "usage": {"prompt_tokens", "completion_tokens", "total_tokens"}}`` as the
OpenAI API does. The content comes from ``state.answer(body)`` (a test sets it); the default reads the
two outputs between the markers ``<A>...</A>`` and ``<B>...</B>`` of the prompt and prefers the longer
(``A`` for equal lengths), or for a single ``<O>...</O>`` answers its length in words.

Prompt tokens are the characters of the messages / 4 (rounded up); completion tokens the characters of
the answer / 4 (at least 1).

Faults: ``state.fail(kind, times=1)`` makes the next ``times`` requests answer ``429`` (``Retry-After``
header of ``state.retry_after`` seconds), ``500``, ``timeout`` (the answer is held ``state.hold`` seconds,
longer than the client waits), ``malformed`` (200 with a body that is not JSON), or ``refusal`` (200
with ``message.refusal`` set and no content). ``state.down = True`` answers 503 to everything;
``state.answers_left = n`` answers n requests, then 503 (a server that goes away part way).

``state.key`` set: a request without ``Authorization: Bearer <key>`` answers 401. ``state.delay`` holds every answer that long; ``state.max_in_flight`` is the most requests served at once.
``state.requests`` counts every request served (after ``delay``), ``state.received`` every request as it
arrives; ``state.answered`` counts the answers (200 with content) per request body, so a test can show no
answered request was asked twice.

Hostile faults (the issue's probes): ``trickle`` (200, then one byte every ``state.trickle_every`` seconds,
for at most ``state.trickle_for`` seconds), ``huge`` (200 with a body of ``state.huge_bytes``, 1 GiB by
default, streamed 1 MiB a chunk without a length), ``echo401`` and ``echo400`` (an error whose message
repeats the request's ``Authorization`` header). ``state.echo_key = True`` puts that header in every
answer's content too. ``state.usage`` replaces the usage of every answer (``ABSENT``: no ``usage`` key).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.threaded import ThreadedServer

KEY = "sk-fake-judge-0123"
ABSENT = object()  # state.usage = ABSENT: answers without a usage key
MIB = 1 << 20


def default_answer(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    pair = re.search(r"<A>(.*?)</A>.*?<B>(.*?)</B>", prompt, re.DOTALL)
    if pair:
        a, b = pair.group(1), pair.group(2)
        return "[[A]]" if len(a) >= len(b) else "[[B]]"
    one = re.search(r"<O>(.*?)</O>", prompt, re.DOTALL)
    return str(len(one.group(1).split())) if one else "?"


@dataclass
class FakeState:
    answer: Callable[[dict[str, Any]], str] = default_answer
    faults: list[str] = field(default_factory=list)
    retry_after: str = "1"
    hold: float = 2.0
    down: bool = False
    answers_left: int | None = None
    delay: float = 0.0
    key: str | None = None
    trickle_every: float = 1.0
    trickle_for: float = 60.0
    huge_bytes: int = 1 << 30
    echo_key: bool = False
    usage: Any = None
    received: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    requests: int = 0
    answered: Counter[str] = field(default_factory=Counter)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    seen_keys: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail(self, kind: str, times: int = 1) -> None:
        with self.lock:
            self.faults += [kind] * times


def make_app(state: FakeState) -> Starlette:
    async def completions(request: Request) -> Response:
        with state.lock:
            state.received += 1
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            if state.delay:
                await asyncio.sleep(state.delay)
            return await answer(request)
        finally:
            with state.lock:
                state.in_flight -= 1

    async def answer(request: Request) -> Response:
        with state.lock:
            state.requests += 1
            state.seen_keys.append(request.headers.get("authorization", ""))
            fault = state.faults.pop(0) if state.faults else None
        with state.lock:
            exhausted = state.answers_left is not None and state.answers_left <= 0 and fault is None
            if state.answers_left is not None and not exhausted and fault is None:
                state.answers_left -= 1
        sent = request.headers.get("authorization", "")
        if fault == "echo401" or state.key is not None and sent != f"Bearer {state.key}":
            echo = f": you sent 'Authorization: {sent}'" if fault == "echo401" or state.echo_key else ""
            return JSONResponse({"error": {"message": f"Incorrect API key provided{echo}"}}, status_code=401)
        if fault == "echo400":
            return JSONResponse({"error": {"message": f"unknown parameter in a request with Authorization: {sent}"}},
                                status_code=400)
        if fault == "trickle":
            async def trickle() -> Any:
                yield b'{"choices": '
                for _ in range(int(state.trickle_for / state.trickle_every)):
                    await asyncio.sleep(state.trickle_every)
                    yield b" "
            return StreamingResponse(trickle(), media_type="application/json")
        if fault == "huge":
            async def huge() -> Any:
                yield b'{"choices": [{"message": {"content": "'
                chunk = b"x" * MIB
                for _ in range(state.huge_bytes // MIB):
                    yield chunk
                yield b'"}}]}'
            return StreamingResponse(huge(), media_type="application/json")
        if state.down or exhausted:
            return JSONResponse({"error": {"message": "service unavailable"}}, status_code=503)
        if fault == "429":
            return JSONResponse({"error": {"message": "rate limited"}}, status_code=429,
                                headers={"Retry-After": state.retry_after})
        if fault == "500":
            return JSONResponse({"error": {"message": "internal error"}}, status_code=500)
        if fault == "timeout":
            await asyncio.sleep(state.hold)
        if fault == "malformed":
            return Response('{"choices": [{"message": {"content": "[[A]]"', media_type="application/json")
        try:
            body = await request.json()
        except ClientDisconnect:  # a client killed while its request was held (a SIGKILL test): nobody to answer
            return Response(status_code=499)
        key = json.dumps(body, sort_keys=True)
        chars = sum(len(m["content"]) for m in body["messages"])
        if fault == "refusal":
            message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
            content = ""
        else:
            content = state.answer(body) + (f" (asked with {sent})" if state.echo_key else "")
            message = {"role": "assistant", "content": content}
        usage: Any = {"prompt_tokens": math.ceil(chars / 4), "completion_tokens": max(1, math.ceil(len(content) / 4))}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if state.usage is not None:
            usage = state.usage
        with state.lock:
            state.answered[key] += 1
            state.bodies.append(body)
        answer = {"id": f"chatcmpl-{state.requests}", "object": "chat.completion", "model": body["model"],
                  "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}
        if usage is ABSENT:
            del answer["usage"]
        return JSONResponse(answer)

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


class FakeOpenAI(ThreadedServer):
    """The fake served by uvicorn in a thread on 127.0.0.1 (real sockets, so timeouts are real); ``url`` ends in /v1."""

    def __init__(self) -> None:
        self.state = FakeState()
        super().__init__(make_app(self.state), "/v1")
