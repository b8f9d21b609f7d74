"""The chat-completions client: Retry-After, backoff, refusals of the request, the key."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from humeval.judging.client import ChatClient, JudgeError, read_key


def _run(handler: Any, body: dict[str, Any] | None = None, **options: Any) -> tuple[Any, list[float], ChatClient]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    client = ChatClient("http://judge.test/v1/", "sk-1", transport=httpx.MockTransport(handler), sleep=sleep,
                        rng=random.Random(0), **options)

    async def go() -> Any:
        async with client:
            return await client.complete(body or {"model": "m", "messages": []})

    try:
        return asyncio.run(go()), waits, client
    except JudgeError as exc:
        return exc, waits, client


def _ok(content: str | None = "[[A]]", **message: Any) -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"content": content, **message}, "finish_reason": "stop"}],
                                     "usage": {"prompt_tokens": 11, "completion_tokens": 2}})


def test_the_request_and_the_answer() -> None:
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return _ok()

    reply, waits, _ = _run(handler, {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0})
    assert (reply.content, reply.tokens_in, reply.tokens_out, reply.refused) == ("[[A]]", 11, 2, False)
    request = seen[0]
    assert (request.method, str(request.url)) == ("POST", "http://judge.test/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-1"
    assert json.loads(request.content) == {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    assert waits == []


def test_retry_after_is_honoured_and_5xx_backs_off_exponentially() -> None:
    answers = iter([httpx.Response(429, headers={"Retry-After": "7"}), httpx.Response(503), httpx.Response(502),
                    httpx.Response(429), _ok()])
    reply, waits, client = _run(lambda r: next(answers), backoff=0.5, retries=5)
    assert reply.content == "[[A]]"
    rng = random.Random(0)
    jitter = [0.5 + rng.random() / 2 for _ in range(4)]
    # 429 with Retry-After: its seconds; 5xx: backoff x 2^attempt x jitter; 429 without the header: the backoff
    assert waits == pytest.approx([7.0, 0.5 * 2 * jitter[1], 0.5 * 4 * jitter[2], 0.5 * 8 * jitter[3]])
    assert (client.counters.requests, client.counters.rate_limited, client.counters.server_errors) == (5, 2, 2)


def test_retry_after_is_capped() -> None:
    answers = iter([httpx.Response(429, headers={"Retry-After": "3600"}), _ok()])
    _, waits, _ = _run(lambda r: next(answers))
    assert waits == [60.0]


def test_a_refused_request_is_not_sent_again_and_retries_end() -> None:
    calls = []

    def unauthorised(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(401, json={"error": {"message": "Incorrect API key provided"}})

    error, _, _ = _run(unauthorised)
    assert isinstance(error, JudgeError) and "401, the API key was refused" in str(error)
    assert "Incorrect API key" in str(error) and len(calls) == 1
    error, waits, client = _run(lambda r: httpx.Response(200, text="<html>gateway</html>"), retries=2)
    assert "no usable answer after 3 attempt(s)" in str(error) and "not a chat completion" in str(error)
    assert client.counters.malformed == 3 and len(waits) == 2


def test_an_explicit_refusal_is_an_answer() -> None:
    reply, _, _ = _run(lambda r: _ok(None, refusal="I can't help with that."))
    assert reply.refused and reply.content is None


def test_the_key_comes_from_the_environment_or_a_file_outside_the_study(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    study = tmp_path / "study"
    study.mkdir()
    inside, outside = study / "key.txt", tmp_path / "key.txt"
    inside.write_text("sk-in\n")
    outside.write_text("sk-out\n")
    monkeypatch.setenv("JUDGE_KEY", "sk-env")
    llm = SimpleNamespace(api_key_env="JUDGE_KEY", api_key_file=str(outside))
    assert read_key(llm, study, "j") == "sk-env"
    monkeypatch.delenv("JUDGE_KEY")
    assert read_key(llm, study, "j") == "sk-out"
    with pytest.raises(JudgeError, match="inside the study folder"):
        read_key(SimpleNamespace(api_key_env="", api_key_file="key.txt"), study, "j")
    assert read_key(SimpleNamespace(api_key_env="", api_key_file=""), study, "j") == ""
    assert "sk-1" not in repr(ChatClient("http://x/v1", "sk-1"))


@pytest.mark.parametrize(("usage", "expected", "why"), [
    ({"prompt_tokens": 11, "completion_tokens": 2}, (11, 2), ""),
    ({"prompt_tokens": -5, "completion_tokens": 2}, (3, 2), "prompt_tokens -5 is outside 0..10,000,000"),
    ({"prompt_tokens": 10**15, "completion_tokens": 10**15}, (3, 2), "completion_tokens 1000000000000000 is outside"),
    ({"prompt_tokens": "11", "completion_tokens": 2.0}, (3, 2), "completion_tokens '2.0' is not an integer"),
    ({"prompt_tokens": False, "completion_tokens": 2}, (3, 2), "prompt_tokens 'False' is not an integer"),
    ({"completion_tokens": 2}, (3, 2), "prompt_tokens missing"),
    (None, (3, 2), "no usage in the answer"),
    ("lots", (3, 2), "no usage in the answer"),
])
def test_usage_is_taken_only_when_it_is_valid(usage: Any, expected: tuple[int, int], why: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body: dict[str, Any] = {"choices": [{"message": {"content": "[[A]]"}, "finish_reason": "stop"}]}
        return httpx.Response(200, json=body | ({"usage": usage} if usage is not None else {}))

    # the request's 10 characters are ceil(10 / 4) = 3 tokens; the answer's 5, ceil(5 / 4) = 2
    reply, _, client = _run(handler, {"model": "m", "messages": [{"role": "user", "content": "0123456789"}]})
    assert (reply.tokens_in, reply.tokens_out) == expected
    assert why in reply.usage_estimated and bool(reply.usage_estimated) == bool(why)
    assert client.counters.usage_estimated == bool(why)


def test_an_answer_past_the_limit_is_cut_and_read_no_further() -> None:
    sent = []

    async def endless() -> Any:
        yield b'{"choices": [{"message": {"content": "'
        for _ in range(10_000):  # 10 GB if it were read to the end
            sent.append(1)
            yield b"x" * (1 << 20)

    error, _, client = _run(lambda r: httpx.Response(200, content=endless()), retries=1, max_bytes=2 << 20)
    assert isinstance(error, JudgeError) and "an answer longer than 2,097,152 bytes" in str(error)
    assert client.counters.oversized == 2 and len(sent) <= 2 * 3  # three 1 MiB chunks an attempt at most


def test_an_answer_that_trickles_is_cut_at_the_attempts_deadline() -> None:
    async def trickle() -> Any:
        yield b'{"choices": '
        for _ in range(100):
            await asyncio.sleep(0.05)
            yield b" "

    started = time.monotonic()
    error, _, client = _run(lambda r: httpx.Response(200, content=trickle()), retries=1, timeout=0.3)
    assert "no whole answer within 0.3 s" in str(error) and client.counters.timeouts == 2
    assert time.monotonic() - started < 2.0  # 2 x 0.3 s, not 2 x 5 s


def test_each_attempt_is_recorded_before_it_is_sent_and_when_it_ends() -> None:
    events: list[dict[str, Any]] = []
    seen: list[int] = []
    answers = iter([httpx.Response(429, headers={"Retry-After": "nan"}), httpx.Response(503), _ok()])

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(len(events))  # what the record held when the request arrived
        return next(answers)

    async def go() -> Any:
        async with client:
            return await client.complete({"model": "m", "messages": []}, events.append)

    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    client = ChatClient("http://judge.test/v1", "", transport=httpx.MockTransport(handler), sleep=sleep,
                        rng=random.Random(0), backoff=0.5)
    asyncio.run(go())
    assert [e["event"] for e in events] == ["sent", "rate_limited", "sent", "server_error", "sent", "answered"]
    assert seen == [1, 3, 5]  # each request arrived after its `sent` line
    assert events[-1]["tokens_in"] == 11 and 0.25 <= waits[0] <= 0.5  # Retry-After nan: the backoff


def test_a_refused_connection_is_recorded_as_not_sent() -> None:
    events: list[dict[str, Any]] = []
    answers = iter([httpx.ConnectError("connection refused"), httpx.ReadError("connection reset"), None])

    def handler(request: httpx.Request) -> httpx.Response:
        problem = next(answers)
        if problem is not None:
            raise problem
        return _ok()

    async def sleep(seconds: float) -> None:
        pass

    client = ChatClient("http://judge.test/v1", "", transport=httpx.MockTransport(handler), sleep=sleep)

    async def go() -> Any:
        async with client:
            return await client.complete({"model": "m", "messages": []}, events.append)

    asyncio.run(go())
    # refused before anything left (not billed), dropped after it was sent (may have been billed), answered
    assert [e["event"] for e in events] == ["sent", "not_connected", "sent", "connection_error", "sent", "answered"]
