"""The local model's OpenAI-compatible routes: checked requests, answers whole or streamed, usage counted.

The routes are tested in-process with a generator that answers from the prompt by a fixed rule (the words of the
last message, reversed), so every byte of the answer is known; humeval's own judge client reads it. The real
model (SmolLM2 on PyTorch) is tested in tests/integration/test_local_model_real.py when the extra is installed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest

from humeval.errors import HumevalError
from humeval.judging.client import ChatClient
from humeval.local_model import MAX_TOKENS, app, parse_request, resolve_model


class Reverser:
    """Answers with the words of the last message in reverse order, one word per piece, at most max_tokens words."""

    name = "reverser"

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        return sum(len(m["content"].split()) + 1 for m in messages)

    def answer_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(self, messages, *, max_tokens, temperature, seed) -> Iterator[str]:
        self.calls.append({"max_tokens": max_tokens, "temperature": temperature, "seed": seed})
        words = messages[-1]["content"].split()[::-1][:max_tokens]
        for i, w in enumerate(words):
            yield w if i == 0 else " " + w


def _post(model, body, **kw) -> httpx.Response:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app(model)), base_url="http://t") as c:
            return await c.post("/v1/chat/completions", json=body, **kw)

    return asyncio.run(go())


MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "one two three"}]


def test_a_whole_answer_with_its_usage():
    model = Reverser()
    r = _post(model, {"model": "x", "messages": MESSAGES, "max_tokens": 10, "temperature": 0, "seed": 3})
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "chat.completion" and body["model"] == "reverser"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "three two one"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert model.calls == [{"max_tokens": 10, "temperature": 0.0, "seed": 3}]


def test_an_answer_cut_at_max_tokens_says_length():
    r = _post(Reverser(), {"messages": MESSAGES, "max_tokens": 2})
    assert r.json()["choices"][0]["message"]["content"] == "three two"
    assert r.json()["choices"][0]["finish_reason"] == "length"


def test_a_streamed_answer_is_server_sent_chunks_ending_in_done():
    r = _post(Reverser(), {"messages": MESSAGES, "stream": True})
    assert r.headers["content-type"].startswith("text/event-stream")
    events = [line.removeprefix("data: ") for line in r.text.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"} and len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant"}
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "three two one"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize(("body", "field"), [
    ([], "JSON object"),
    ({}, "messages"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0]"),
    ({"messages": [{"role": "user", "content": 5}]}, "messages[0]"),
    ({"messages": MESSAGES, "max_tokens": 0}, "max_tokens"),
    ({"messages": MESSAGES, "max_tokens": MAX_TOKENS + 1}, "max_tokens"),
    ({"messages": MESSAGES, "max_tokens": True}, "max_tokens"),
    ({"messages": MESSAGES, "temperature": "hot"}, "temperature"),
    ({"messages": MESSAGES, "temperature": 2.5}, "temperature"),
    ({"messages": MESSAGES, "seed": -1}, "seed"),
    ({"messages": MESSAGES, "stream": "yes"}, "stream"),
])
def test_bad_requests_are_400_naming_the_field(body, field):
    r = _post(Reverser(), body)
    assert r.status_code == 400
    assert field in r.json()["error"]["message"] and r.json()["error"]["type"] == "invalid_request_error"
    with pytest.raises(HumevalError, match=field.replace("[", r"\[")):
        parse_request(body)


def test_a_body_that_is_not_json_is_400():
    r = _post(Reverser(), None, content=b"\xff{", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]["message"]


def test_humevals_judge_client_reads_it():
    async def go():
        transport = httpx.ASGITransport(app=app(Reverser()))
        async with ChatClient("http://t/v1", transport=transport, retries=0) as client:
            return await client.complete({"model": "reverser", "messages": MESSAGES, "max_tokens": 5})

    reply = asyncio.run(go())
    assert (reply.content, reply.tokens_in, reply.tokens_out) == ("three two one", 7, 3)


def test_models_route_names_the_model():
    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app(Reverser())), base_url="http://t") as c:
            return await c.get("/v1/models")

    assert asyncio.run(go()).json()["data"][0]["id"] == "reverser"


def test_model_specs_that_do_not_exist_say_what_is_accepted(tmp_path):
    with pytest.raises(HumevalError, match="not a GGUF file, a folder with a transformers model"):
        resolve_model(str(tmp_path / "nothing"))
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    assert resolve_model(str(tmp_path / "m.gguf")) == (tmp_path, "m.gguf")
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("{}")
    assert resolve_model(str(tmp_path / "hf")) == (tmp_path / "hf", None)
