"""The chat-completions client: Retry-After, backoff, refusals of the request, the key."""

from __future__ import annotations

import asyncio
import json
import random
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


def test_retry_after_as_seconds_or_an_http_date() -> None:
    from humeval.judging.client import _retry_after

    assert _retry_after("2.5", 9.0) == 2.5
    assert _retry_after(None, 9.0) == 9.0 and _retry_after("soon", 9.0) == 9.0
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
    assert _retry_after("Tue, 14 Nov 2023 22:13:30 GMT", 9.0, now) == pytest.approx(10.0)
    assert _retry_after("Tue, 14 Nov 2023 22:13:00 GMT", 9.0, now) == 0.0
