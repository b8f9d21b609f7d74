"""The HTTP client of an OpenAI-compatible chat-completions endpoint: the key, bounded concurrency, retries, limits.

One request is ``POST {base_url}/chat/completions`` with a JSON body (``model``, ``messages``,
``temperature``, ``max_tokens``, and the protocol's other fields) and, when a key is
configured, ``Authorization: Bearer <key>``. The answer read is ``choices[0].message.content``
(``message.refusal`` and ``finish_reason``) and ``usage.prompt_tokens`` /
``usage.completion_tokens``. The key comes from the environment or a file outside the study
folder (:func:`read_key`); it is never printed, logged, cached or written, and every message and
every answer kept goes through :func:`humeval.secrets.redact` (an endpoint that echoes the key
in an error or an answer does not put it in a file).

What an endpoint can do is bounded:

* **time**: each attempt has ``timeout`` seconds in all (connecting, sending, and reading the whole
  answer: an endpoint that trickles a byte a second is cut at ``timeout``, not kept alive by each
  byte); the run of one judge, ``run_timeout`` (:func:`humeval.judging.run.ask_judge`);
* **size**: an answer is read as a stream, at most :data:`MAX_ANSWER_BYTES` (4 MiB; an error's body,
  :data:`MAX_ERROR_BYTES`); a longer answer is cut there and counted as ``oversized``;
* **usage**: ``prompt_tokens`` and ``completion_tokens`` must be integers from 0 to
  :data:`MAX_USAGE_TOKENS`; a missing or invalid count is estimated from the text (characters /
  :data:`CHARS_PER_TOKEN`) and the reply says so (``usage_estimated``: why), so a cost is never
  negative, never 10^10 from a typo, and never 0 without a word;
* **waits**: ``Retry-After`` is read by :func:`humeval.retry_after.retry_after` (seconds or an HTTP
  date, at most 60 s; ``nan``, ``inf`` or a negative value: the backoff).

Asking a judge changes nothing on the server, so every failure short of a clear refusal is
retried, at most ``retries`` times per request:

=========================  ===========================================================
answer                     what the client does
=========================  ===========================================================
429                        waits ``Retry-After`` (seconds or a date; capped at 60 s; the backoff when
                           absent or unreadable), then sends again
5xx, timeout, no answer    sends again after an exponential backoff (``backoff`` x 2^k,
                           with jitter)
200 that is not chat JSON  counted as ``malformed`` (``oversized`` past 4 MiB); sends again after the
                           backoff
401, 403                   :class:`JudgeError`: the key is wrong or missing
other 4xx                  :class:`JudgeError` with the server's message (a bad model
                           name or parameter: sending it again would not help)
=========================  ===========================================================

At most ``concurrency`` requests are in flight at once (an :class:`asyncio.Semaphore`). Each attempt
can be reported to a ``record`` callback before it is sent and when its outcome is known (the
judge's ledger, :mod:`humeval.judging.ledger`, writes and fsyncs both).

:meth:`ChatClient.stream` asks with ``stream: true`` and yields the answer's pieces as they arrive (server-sent
events, ``data: {chat.completion.chunk}`` lines ending with ``data: [DONE]``), then the :class:`Reply`. It retries
as :meth:`~ChatClient.complete` does only while no piece has been yielded (a reader has seen nothing yet); after
the first piece, a dropped connection, an error event, a line that is not a chunk or more than ``max_bytes``
raise :class:`JudgeError` at once. An endpoint that ignores ``stream`` and answers one chat-completion JSON is
read as one piece.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from humeval.errors import PlatformError
from humeval.files import read_secret
from humeval.retry_after import MAX_RETRY_AFTER, retry_after
from humeval.secrets import redact, remember

__all__ = ["CHARS_PER_TOKEN", "MAX_ANSWER_BYTES", "MAX_ERROR_BYTES", "MAX_RETRY_AFTER", "MAX_USAGE_TOKENS",
           "ChatClient", "Counters", "JudgeError", "Record", "Reply", "chat_body", "estimate_tokens", "read_key",
           "request_chars"]

#: the most bytes of one answer read (a chat completion of 100,000 tokens is about 400 KB)
MAX_ANSWER_BYTES = 4 * 1024 * 1024
#: the most bytes of an error's body read (its message is shown cut to 300 characters)
MAX_ERROR_BYTES = 64 * 1024
#: the largest token count of one request's usage taken as given (no model reads or writes ten million tokens)
MAX_USAGE_TOKENS = 10_000_000
#: the estimate of a text's tokens: characters / 4 (OpenAI's rule of thumb for English); the budget's too
CHARS_PER_TOKEN = 4

#: ``record(event)``: an attempt about to be sent (``{"event": "sent", "attempt": k}``) or its outcome
Record = Callable[[dict[str, Any]], None]


def estimate_tokens(chars: int) -> int:
    """Tokens of a text of ``chars`` characters: ``ceil(chars / CHARS_PER_TOKEN)``."""
    return math.ceil(chars / CHARS_PER_TOKEN)


def chat_body(model: str, prompt: str, *, system: str = "", temperature: float, max_tokens: int,
              top_p: float | None = None, seed: int | None = None, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The body of one chat-completions request: an optional system message and the prompt, the sampling fields
    (``top_p`` and ``seed`` only when set), then ``params`` as given."""
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature, "max_tokens": max_tokens}
    if top_p is not None:
        body["top_p"] = top_p
    if seed is not None:
        body["seed"] = seed
    return body | dict(params or {})


def request_chars(body: dict[str, Any]) -> int:
    """Characters of a request's messages (the text the prompt tokens count)."""
    return sum(len(m["content"]) for m in body.get("messages", []) if isinstance(m.get("content"), str))


class JudgeError(PlatformError):
    """A judge's endpoint refused a request, or gave no usable answer after every retry (the message redacted);
    ``summary``: what the run did before it stopped (its requests, tokens and spend), for the logbook."""

    def __init__(self, message: str, summary: dict[str, Any] | None = None) -> None:
        super().__init__(redact(message))
        self.summary = summary


@dataclass(frozen=True)
class Reply:
    """What one chat completion said: the text, an explicit refusal, why it stopped, and the tokens billed."""

    content: str | None
    refusal: str | None
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    #: why the tokens are estimated from the text (the endpoint's usage was missing or invalid); "" when reported
    usage_estimated: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "refusal": self.refusal, "finish_reason": self.finish_reason,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "usage_estimated": self.usage_estimated}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reply:
        return cls(data.get("content"), data.get("refusal"), data.get("finish_reason"),
                   int(data.get("tokens_in") or 0), int(data.get("tokens_out") or 0), data.get("usage_estimated") or "")

    @property
    def refused(self) -> bool:
        """An explicit refusal: ``message.refusal`` set, or ``finish_reason: content_filter``."""
        return bool(self.refusal) or self.finish_reason == "content_filter"


@dataclass
class Counters:
    """What the client sent and met, for the logbook."""

    requests: int = 0
    rate_limited: int = 0
    server_errors: int = 0
    timeouts: int = 0
    connection_errors: int = 0
    malformed: int = 0
    oversized: int = 0
    usage_estimated: int = 0
    waited_seconds: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "rate_limited": self.rate_limited, "server_errors": self.server_errors,
                "timeouts": self.timeouts, "connection_errors": self.connection_errors, "malformed": self.malformed,
                "oversized": self.oversized, "usage_estimated": self.usage_estimated,
                "waited_seconds": round(self.waited_seconds, 3)}


def read_key(llm: Any, study_root: Path, judge: str) -> str:
    """The API key of a judge's ``llm`` section: ``$<api_key_env>``, else ``api_key_file``, else none ("").

    A key file inside the study folder is refused (the folder is shared and archived with the study).
    """
    if llm.api_key_env and os.environ.get(llm.api_key_env, "").strip():
        return remember(os.environ[llm.api_key_env])
    if not llm.api_key_file:
        if llm.api_key_env:
            raise JudgeError(f"judge '{judge}': ${llm.api_key_env} is not set (data.judges[{judge}].llm.api_key_env); "
                             "set it, or keep the key in a file outside the study folder (`api_key_file`)")
        return ""
    path = Path(llm.api_key_file).expanduser()  # relative to the study folder, as every path of the protocol
    return read_secret(path if path.is_absolute() else study_root / path, study_root, f"judge '{judge}' API key",
                       JudgeError)


class ChatClient:
    """Asynchronous chat-completion requests to ``base_url`` (see the module docstring for the retries and limits).

    ``sleep`` and ``rng`` are injectable for tests of the backoff; ``transport`` is an httpx transport.
    """

    def __init__(self, base_url: str, key: str = "", *, timeout: float = 60.0, retries: int = 5, backoff: float = 1.0,
                 concurrency: int = 4, max_bytes: int = MAX_ANSWER_BYTES,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 rng: random.Random | None = None, transport: Any = None) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.timeout, self.retries, self.backoff, self.concurrency = timeout, retries, backoff, concurrency
        self.max_bytes = max_bytes
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.counters = Counters()
        self._key = remember(key) if key else ""
        self._transport = transport
        self._http: Any = None
        self._gate: asyncio.Semaphore | None = None

    def __repr__(self) -> str:  # the key never appears in a repr, a traceback or a log
        return f"ChatClient(url={self.url!r}, key={'***' if self._key else 'none'})"

    async def __aenter__(self) -> Self:
        import httpx

        headers = {"Accept": "application/json"} | ({"Authorization": f"Bearer {self._key}"} if self._key else {})
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        self._http = httpx.AsyncClient(timeout=self.timeout, headers=headers, transport=self._transport, limits=limits)
        self._gate = asyncio.Semaphore(self.concurrency)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def complete(self, body: dict[str, Any], record: Record | None = None) -> Reply:
        """Send one chat-completion request (retrying as the module docstring says) and read its answer;
        ``record`` hears of each attempt before it is sent and of its outcome."""
        import httpx

        if self._http is None or self._gate is None:
            raise RuntimeError("ChatClient.complete outside `async with ChatClient(...)`")
        note = record or (lambda event: None)
        chars = request_chars(body)
        problem = ""
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            async with self._gate:
                self.counters.requests += 1
                note({"event": "sent", "attempt": attempt})
                try:
                    async with asyncio.timeout(self.timeout):
                        status, headers, data, cut = await self._post(body)
                except (TimeoutError, httpx.TimeoutException):
                    self.counters.timeouts += 1
                    note({"event": "timeout", "attempt": attempt})
                    problem, wait = f"no whole answer within {self.timeout:g} s", self._backoff(attempt)
                    status = None
                except httpx.TransportError as exc:
                    self.counters.connection_errors += 1
                    # refused before it was sent (nothing to bill), or dropped after (the endpoint may have billed it)
                    note({"event": "not_connected" if isinstance(exc, httpx.ConnectError) else "connection_error",
                          "attempt": attempt})
                    problem, wait = f"{type(exc).__name__}: {exc}", self._backoff(attempt)
                    status = None
            if status is not None:
                self.counters.statuses[str(status)] = self.counters.statuses.get(str(status), 0) + 1
                if status >= 400:
                    problem, wait = self._failed(status, headers, data, attempt, note)
                elif cut:
                    self.counters.oversized += 1
                    note({"event": "oversized", "attempt": attempt, "status": status})
                    problem, wait = (f"{status} with an answer longer than {self.max_bytes:,} bytes (read no further)",
                                     self._backoff(attempt))
                else:
                    reply = _read_reply(data, chars)
                    if reply is not None:
                        self.counters.usage_estimated += bool(reply.usage_estimated)
                        note({"event": "answered", "attempt": attempt, "status": status, "tokens_in": reply.tokens_in,
                              "tokens_out": reply.tokens_out, "usage_estimated": reply.usage_estimated})
                        return reply
                    self.counters.malformed += 1
                    note({"event": "malformed", "attempt": attempt, "status": status})
                    text = data[:120].decode("utf-8", "replace")
                    problem, wait = f"{status} with a body that is not a chat completion: {text!r}", self._backoff(attempt)
            if not last:
                self.counters.waited_seconds += wait
                await self.sleep(wait)
        raise JudgeError(f"POST {self.url}: no usable answer after {self.retries + 1} attempt(s); last: {problem}")

    async def stream(self, body: dict[str, Any], record: Record | None = None, *,
                     wait_until: float | None = None) -> AsyncIterator[str | Reply]:
        """Send ``body`` with ``stream: true`` and yield the answer's text pieces (redacted), then its :class:`Reply`
        (the whole text, ``finish_reason``, the tokens: the stream's ``usage`` when the endpoint sends one, else
        estimated); retried only until the first piece (see the module docstring). ``wait_until``: the event loop's
        time after which no retry could still answer in time (a first-token deadline): a wait that ends later (a
        long ``Retry-After``) is not waited, the request fails at once."""
        import httpx

        if self._http is None or self._gate is None:
            raise RuntimeError("ChatClient.stream outside `async with ChatClient(...)`")
        note = record or (lambda event: None)
        body = {**body, "stream": True}
        chars = request_chars(body)
        problem, wait = "", 0.0
        for attempt in range(self.retries + 1):
            started = False  # a piece was yielded: no retry from here on
            async with self._gate:
                self.counters.requests += 1
                note({"event": "sent", "attempt": attempt})
                try:
                    async with self._http.stream("POST", self.url, json=body) as response:
                        status = response.status_code
                        self.counters.statuses[str(status)] = self.counters.statuses.get(str(status), 0) + 1
                        headers = {k.lower(): v for k, v in response.headers.items()}
                        if status >= 400:
                            data = await _read_capped(response, MAX_ERROR_BYTES)
                            problem, wait = self._failed(status, headers, data, attempt, note)
                        elif "text/event-stream" not in headers.get("content-type", ""):
                            data = await _read_capped(response, self.max_bytes + 1)
                            reply = None if len(data) > self.max_bytes else _read_reply(data, chars)
                            if reply is not None:
                                self.counters.usage_estimated += bool(reply.usage_estimated)
                                note({"event": "answered", "attempt": attempt, "status": status,
                                      "tokens_in": reply.tokens_in, "tokens_out": reply.tokens_out,
                                      "usage_estimated": reply.usage_estimated})
                                if reply.content:
                                    yield reply.content
                                yield reply
                                return
                            kind = "oversized" if len(data) > self.max_bytes else "malformed"
                            setattr(self.counters, kind, getattr(self.counters, kind) + 1)
                            note({"event": kind, "attempt": attempt, "status": status})
                            problem = (f"{status} with a body that is neither an event stream nor a chat completion: "
                                       f"{data[:120].decode('utf-8', 'replace')!r}")
                            wait = self._backoff(attempt)
                        else:
                            events = _sse_chunks(response, self.max_bytes)
                            pieces: list[str] = []
                            finish: str | None = None
                            usage: Any = None
                            try:
                                async for chunk in events:
                                    piece, finish_now, usage_now = chunk
                                    finish = finish_now or finish
                                    usage = usage_now if usage_now is not None else usage
                                    if piece:
                                        started = True
                                        pieces.append(piece)
                                        yield redact(piece)
                            except _StreamBroken as exc:
                                counter = _COUNTER.get(exc.kind, exc.kind)
                                setattr(self.counters, counter, getattr(self.counters, counter) + 1)
                                note({"event": exc.kind, "attempt": attempt, "status": status})
                                if started:
                                    raise JudgeError(f"POST {self.url}: the stream broke after "
                                                     f"{sum(map(len, pieces)):,} characters: {exc}") from None
                                problem, wait = f"{status}: {exc}", self._backoff(attempt)
                            else:
                                text = "".join(pieces)
                                tokens_in, tokens_out, why = _usage(usage, chars, len(text))
                                self.counters.usage_estimated += bool(why)
                                note({"event": "answered", "attempt": attempt, "status": status,
                                      "tokens_in": tokens_in, "tokens_out": tokens_out, "usage_estimated": why})
                                yield Reply(redact(text), None, finish, tokens_in, tokens_out, why)
                                return
                except (TimeoutError, httpx.TimeoutException):
                    self.counters.timeouts += 1
                    note({"event": "timeout", "attempt": attempt})
                    if started:
                        raise JudgeError(f"POST {self.url}: the stream stalled for {self.timeout:g} s") from None
                    problem, wait = f"no answer within {self.timeout:g} s", self._backoff(attempt)
                except httpx.TransportError as exc:
                    self.counters.connection_errors += 1
                    note({"event": "not_connected" if isinstance(exc, httpx.ConnectError) else "connection_error",
                          "attempt": attempt})
                    if started:
                        raise JudgeError(f"POST {self.url}: the connection dropped mid-answer: "
                                         f"{type(exc).__name__}") from None
                    problem, wait = f"{type(exc).__name__}: {exc}", self._backoff(attempt)
            if attempt < self.retries:
                if wait_until is not None and asyncio.get_running_loop().time() + wait > wait_until:
                    raise JudgeError(f"POST {self.url}: {problem}; the next attempt would wait {wait:.3g} s, past "
                                     "the time its answer may take")
                self.counters.waited_seconds += wait
                await self.sleep(wait)
        raise JudgeError(f"POST {self.url}: no usable answer after {self.retries + 1} attempt(s); last: {problem}")

    async def _post(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes, bool]:
        """One attempt: the status, the headers, at most :attr:`max_bytes` of the answer (an error's:
        :data:`MAX_ERROR_BYTES`), and whether the answer was longer (cut)."""
        async with self._http.stream("POST", self.url, json=body) as response:
            status = response.status_code
            limit = self.max_bytes if status < 400 else MAX_ERROR_BYTES
            headers = {k.lower(): v for k, v in response.headers.items()}
            declared = headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit and status < 400:
                return status, headers, b"", True
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    return status, headers, b"".join(chunks)[:limit], status < 400
            return status, headers, b"".join(chunks), False

    def _failed(self, status: int, headers: dict[str, str], data: bytes, attempt: int,
                note: Record) -> tuple[str, float]:
        """``(problem, wait)`` of an error status worth retrying (429: ``Retry-After``; 5xx: the backoff), counted
        and noted; :class:`JudgeError` for any other 4xx (sending it again would not help)."""
        if status == 429:
            self.counters.rate_limited += 1
            note({"event": "rate_limited", "attempt": attempt, "status": status})
            return "429 (rate limited)", retry_after(headers.get("retry-after"), self._backoff(attempt))
        if status >= 500:
            self.counters.server_errors += 1
            note({"event": "server_error", "attempt": attempt, "status": status})
            return f"{status}: {_detail(data)}", self._backoff(attempt)
        note({"event": "refused", "attempt": attempt, "status": status})
        raise JudgeError(self._refused(status, data))

    def _backoff(self, attempt: int) -> float:
        return self.backoff * (2 ** attempt) * (0.5 + self.rng.random() / 2)

    def _refused(self, status: int, data: bytes) -> str:
        if status in (401, 403):
            return (f"POST {self.url}: {status}, the API key was refused or is missing (set the variable named in "
                    f"`api_key_env`, or `api_key_file`): {_detail(data)}")
        return f"POST {self.url}: {status}: {_detail(data)}"


#: the counter of each way a stream breaks
_COUNTER = {"server_error": "server_errors", "connection_error": "connection_errors"}


class _StreamBroken(Exception):
    """An event stream that is not a chat-completion stream (``kind``: the counter and ledger event)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


async def _read_capped(response: Any, limit: int) -> bytes:
    """At most ``limit`` bytes of a response's body (the rest is not read)."""
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks)[:limit]


async def _capped_lines(response: Any, max_bytes: int) -> AsyncIterator[str]:
    """The lines of a body (``\n``, ``\r\n`` or ``\r`` ended), read as bytes so that no more than ``max_bytes`` is
    ever held: a body past it, even one line without an end, raises :class:`_StreamBroken` (``oversized``)."""
    size, buffer = 0, b""
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise _StreamBroken("oversized", f"the stream passed {max_bytes:,} bytes (read no further)")
        buffer += chunk
        *lines, buffer = re.split(rb"\r\n|\r(?!$)|\n", buffer)
        for line in lines:
            yield line.decode("utf-8", "replace")
    if buffer:
        yield buffer.rstrip(b"\r").decode("utf-8", "replace")


async def _sse_chunks(response: Any, max_bytes: int) -> AsyncIterator[tuple[str, str | None, Any]]:
    """``(text piece, finish_reason, usage)`` of each ``data:`` event of a chat-completion stream, until
    ``data: [DONE]``; :class:`_StreamBroken` for an event that is not a chunk, an ``error`` event, more than
    ``max_bytes``, or an end before ``[DONE]`` with no ``finish_reason`` (a dropped stream)."""
    finished = False
    async for line in _capped_lines(response, max_bytes):
        if not line.startswith("data:"):
            continue  # blank lines end an event; comments (":"), `event:`, `id:` and `retry:` carry no text
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
        except ValueError:
            raise _StreamBroken("malformed", f"an event that is not JSON: {data[:120]!r}") from None
        if not isinstance(event, dict):
            raise _StreamBroken("malformed", f"an event that is not a chunk object: {data[:120]!r}")
        if "error" in event:
            raise _StreamBroken("server_error", f"the endpoint sent an error: {_detail(data.encode())}")
        choices = event.get("choices")
        if not isinstance(choices, list):
            raise _StreamBroken("malformed", f"an event with no `choices` list: {data[:120]!r}")
        piece, finish = "", None
        if choices:
            choice = choices[0] if isinstance(choices[0], dict) else {}
            delta = choice.get("delta") or {}
            content, finish = (delta.get("content") if isinstance(delta, dict) else None), choice.get("finish_reason")
            if not (content is None or isinstance(content, str)) or not (finish is None or isinstance(finish, str)):
                raise _StreamBroken("malformed", f"a chunk whose content or finish_reason is not text: {data[:120]!r}")
            piece = content or ""
        finished = finished or finish is not None
        yield piece, finish, event.get("usage")
    if not finished:
        raise _StreamBroken("connection_error", "the stream ended before `data: [DONE]` and before a finish_reason")


def _detail(data: bytes) -> str:
    """The message of an error's body (``error.message``, else the body), cut to 300 characters and redacted."""
    text = data.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        return redact(text[:300])
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        error = error.get("message", error)
    return redact((error if isinstance(error, str) else json.dumps(error))[:300])


def _read_reply(data: bytes, chars: int) -> Reply | None:
    """The reply of a chat-completions body (its texts redacted, its usage checked), or None when the body is not
    one (not JSON, no ``choices``); ``chars``: the request's characters, for an estimate of missing usage."""
    try:
        body = json.loads(data)
        choice = body["choices"][0]
        message = choice.get("message") or {}
        content, refusal, finish = message.get("content"), message.get("refusal"), choice.get("finish_reason")
        if not all(v is None or isinstance(v, str) for v in (content, refusal, finish)):
            return None
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None
    tokens_in, tokens_out, why = _usage(body.get("usage"), chars, len(content or refusal or ""))
    return Reply(redact(content), redact(refusal), finish, tokens_in, tokens_out, why)


def _usage(usage: Any, chars_in: int, chars_out: int) -> tuple[int, int, str]:
    """``(tokens_in, tokens_out, why estimated)``: the endpoint's counts when they are integers from 0 to
    :data:`MAX_USAGE_TOKENS`, else estimated from the text (``why`` names each count replaced; "" when none)."""
    estimates = {"prompt_tokens": estimate_tokens(chars_in), "completion_tokens": estimate_tokens(chars_out)}
    if not isinstance(usage, dict):
        return estimates["prompt_tokens"], estimates["completion_tokens"], "no usage in the answer"
    counts, problems = [], []
    for name, estimate in estimates.items():
        value = usage.get(name)
        if value is None:
            problem = f"{name} missing"
        elif isinstance(value, bool) or not isinstance(value, int):
            problem = f"{name} {str(value)[:24]!r} is not an integer"
        elif not 0 <= value <= MAX_USAGE_TOKENS:
            problem = f"{name} {value} is outside 0..{MAX_USAGE_TOKENS:,}"
        else:
            counts.append(value)
            continue
        counts.append(estimate)
        problems.append(problem)
    return counts[0], counts[1], "; ".join(problems)
