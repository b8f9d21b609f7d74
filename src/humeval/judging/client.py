"""The HTTP client of an OpenAI-compatible chat-completions endpoint: the key, bounded concurrency, retries.

One request is ``POST {base_url}/chat/completions`` with a JSON body (``model``, ``messages``,
``temperature``, ``max_tokens``, and the protocol's other fields) and, when a key is
configured, ``Authorization: Bearer <key>``. The answer read is ``choices[0].message.content``
(``message.refusal`` and ``finish_reason``) and ``usage.prompt_tokens`` /
``usage.completion_tokens``. The key comes from the environment or a file outside the study
folder (:func:`read_key`); it is never printed, logged, cached or written.

Asking a judge changes nothing on the server, so every failure short of a clear refusal is
retried, at most ``retries`` times per request:

=========================  ===========================================================
answer                     what the client does
=========================  ===========================================================
429                        waits ``Retry-After`` (seconds or a date; capped at 60 s; the backoff when
                           absent), then sends again
5xx, timeout, no answer    sends again after an exponential backoff (``backoff`` x 2^k,
                           with jitter)
200 that is not chat JSON  counted as ``malformed``; sends again after the backoff
401, 403                   :class:`JudgeError`: the key is wrong or missing
other 4xx                  :class:`JudgeError` with the server's message (a bad model
                           name or parameter: sending it again would not help)
=========================  ===========================================================

At most ``concurrency`` requests are in flight at once (an :class:`asyncio.Semaphore`).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from humeval.errors import PlatformError
from humeval.files import read_secret

__all__ = ["MAX_RETRY_AFTER", "ChatClient", "Counters", "JudgeError", "Reply", "read_key"]

MAX_RETRY_AFTER = 60.0


class JudgeError(PlatformError):
    """A judge's endpoint refused a request, or gave no usable answer after every retry."""


@dataclass(frozen=True)
class Reply:
    """What one chat completion said: the text, an explicit refusal, why it stopped, and the tokens billed."""

    content: str | None
    refusal: str | None
    finish_reason: str | None
    tokens_in: int
    tokens_out: int

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "refusal": self.refusal, "finish_reason": self.finish_reason,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reply:
        return cls(data.get("content"), data.get("refusal"), data.get("finish_reason"),
                   int(data.get("tokens_in") or 0), int(data.get("tokens_out") or 0))

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
    waited_seconds: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "rate_limited": self.rate_limited, "server_errors": self.server_errors,
                "timeouts": self.timeouts, "connection_errors": self.connection_errors, "malformed": self.malformed,
                "waited_seconds": round(self.waited_seconds, 3)}


def read_key(llm: Any, study_root: Path, judge: str) -> str:
    """The API key of a judge's ``llm`` section: ``$<api_key_env>``, else ``api_key_file``, else none ("").

    A key file inside the study folder is refused (the folder is shared and archived with the study).
    """
    if llm.api_key_env and os.environ.get(llm.api_key_env, "").strip():
        return os.environ[llm.api_key_env].strip()
    if not llm.api_key_file:
        if llm.api_key_env:
            raise JudgeError(f"judge '{judge}': ${llm.api_key_env} is not set (data.judges[{judge}].llm.api_key_env); "
                             "set it, or keep the key in a file outside the study folder (`api_key_file`)")
        return ""
    path = Path(llm.api_key_file).expanduser()  # relative to the study folder, as every path of the protocol
    return read_secret(path if path.is_absolute() else study_root / path, study_root, f"judge '{judge}' API key",
                       JudgeError)


class ChatClient:
    """Asynchronous chat-completion requests to ``base_url`` (see the module docstring for the retries).

    ``sleep`` and ``rng`` are injectable for tests of the backoff; ``transport`` is an httpx transport.
    """

    def __init__(self, base_url: str, key: str = "", *, timeout: float = 60.0, retries: int = 5, backoff: float = 1.0,
                 concurrency: int = 4, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 rng: random.Random | None = None, transport: Any = None) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.timeout, self.retries, self.backoff, self.concurrency = timeout, retries, backoff, concurrency
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.counters = Counters()
        self._key = key
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

    async def complete(self, body: dict[str, Any]) -> Reply:
        """Send one chat-completion request (retrying as the module docstring says) and read its answer."""
        import httpx

        if self._http is None or self._gate is None:
            raise RuntimeError("ChatClient.complete outside `async with ChatClient(...)`")
        problem = ""
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            async with self._gate:
                self.counters.requests += 1
                try:
                    response = await self._http.post(self.url, json=body)
                except httpx.TimeoutException:
                    self.counters.timeouts += 1
                    problem, wait = f"no answer within {self.timeout:g} s", self._backoff(attempt)
                    response = None
                except httpx.TransportError as exc:
                    self.counters.connection_errors += 1
                    problem, wait = f"{type(exc).__name__}: {exc}", self._backoff(attempt)
                    response = None
            if response is not None:
                status = response.status_code
                self.counters.statuses[str(status)] = self.counters.statuses.get(str(status), 0) + 1
                if status == 429:
                    self.counters.rate_limited += 1
                    problem = "429 (rate limited)"
                    wait = _retry_after(response.headers.get("retry-after"), self._backoff(attempt))
                elif status >= 500:
                    self.counters.server_errors += 1
                    problem, wait = f"{status}: {_detail(response)}", self._backoff(attempt)
                elif status >= 400:
                    raise JudgeError(self._refused(status, response))
                else:
                    reply = _read_reply(response)
                    if reply is not None:
                        return reply
                    self.counters.malformed += 1
                    problem, wait = f"{status} with a body that is not a chat completion: {response.text[:120]!r}", \
                        self._backoff(attempt)
            if not last:
                self.counters.waited_seconds += wait
                await self.sleep(wait)
        raise JudgeError(f"POST {self.url}: no usable answer after {self.retries + 1} attempt(s); last: {problem}")

    def _backoff(self, attempt: int) -> float:
        return self.backoff * (2 ** attempt) * (0.5 + self.rng.random() / 2)

    def _refused(self, status: int, response: Any) -> str:
        if status in (401, 403):
            return (f"POST {self.url}: {status}, the API key was refused or is missing (set the variable named in "
                    f"`api_key_env`, or `api_key_file`): {_detail(response)}")
        return f"POST {self.url}: {status}: {_detail(response)}"


def _retry_after(value: str | None, fallback: float, now: float | None = None) -> float:
    """Seconds to wait from a ``Retry-After`` header (seconds, or an HTTP date), capped at
    :data:`MAX_RETRY_AFTER`; the backoff when the header is absent or unreadable."""
    if value is None:
        return fallback
    try:
        seconds = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return fallback
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def _detail(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        error = error.get("message", error)
    return (error if isinstance(error, str) else json.dumps(error))[:300]


def _read_reply(response: Any) -> Reply | None:
    """The reply of a chat-completions body, or None when the body is not one (not JSON, no ``choices``)."""
    try:
        body = response.json()
        choice = body["choices"][0]
        message = choice.get("message") or {}
        content = message.get("content")
        usage = body.get("usage") or {}
        if content is not None and not isinstance(content, str):
            return None
        return Reply(content, message.get("refusal"), choice.get("finish_reason"),
                     int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None
