"""The arena's models as endpoints: recorded answers (LLMFAO's real outputs) and an OpenAI-compatible endpoint
streamed from an in-process fake server that streams, stalls, rate-limits, overruns and answers garbage."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from humeval.arena.models import (
    ARENA_CACHE,
    ARENA_LEDGER,
    ENDPOINT_KINDS,
    GenerationError,
    GenerationLimits,
    build_endpoints,
    normalise_prompt,
)
from humeval.errors import DataError, ProtocolError
from humeval.judging.ledger import spend
from humeval.protocol.arena import MODEL_KINDS, models_schema, parse_models

# --- the recorded kind, on LLMFAO ---------------------------------------------------------------------------------


def _llmfao(shared_data: Path) -> tuple[list[dict[str, Any]], dict[int, str]]:
    folder = shared_data / "arena"
    results = [json.loads(line) for line in (folder / "llmfao-results.jsonl").read_text(encoding="utf-8").splitlines()]
    prompts = {p["id"]: p["text"]
               for p in map(json.loads, (folder / "llmfao-prompts.jsonl").read_text(encoding="utf-8").splitlines())}
    return results, prompts


def _llmfao_spec(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name.replace(" ", "-").replace("(", "").replace(")", ""), "kind": "recorded",
            "table": "llmfao-results.jsonl", "prompts": "llmfao-prompts.jsonl", "model": name,
            "model_column": "name", "output_column": "result", **extra}


def test_every_llmfao_output_is_answered_as_recorded(shared_data: Path) -> None:
    results, prompts = _llmfao(shared_data)
    names = sorted({r["name"] for r in results})
    endpoints = build_endpoints([_llmfao_spec(n) for n in names], root=shared_data / "arena")
    assert len(endpoints) == len(names) == 70
    answered = empty = 0
    limits = GenerationLimits(max_chars=100_000)
    for row in results:  # 1,133 outputs of 70 models on 19 prompts, checked against the file read here
        endpoint = endpoints[_llmfao_spec(row["name"])["name"]]
        if not row["result"].strip():
            with pytest.raises(GenerationError) as err:
                endpoint.generate(prompts[row["prompt"]], limits=limits)
            assert err.value.reason == "empty"
            empty += 1
            continue
        assert endpoint.answers[normalise_prompt(prompts[row["prompt"]])] == row["result"]
        answered += 1
    assert (answered, empty) == (1133 - 69, 69)
    # one through the stream itself, whole
    row = next(r for r in results if r["result"].strip())
    gen = endpoints[_llmfao_spec(row["name"])["name"]].generate(prompts[row["prompt"]], limits=limits)
    assert gen.text == row["result"] and gen.error == "" and gen.first_token_seconds is not None


def test_recorded_streaming_is_simulated_in_pieces_with_delays(shared_data: Path) -> None:
    results, prompts = _llmfao(shared_data)
    row = next(r for r in results if len(r["result"]) > 200)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    spec = _llmfao_spec(row["name"], chunk_chars=50, chunk_seconds=0.2, first_token_delay=1.5)
    endpoint = build_endpoints([spec], root=shared_data / "arena", sleep=sleep)[spec["name"]]
    stream = endpoint.stream("  " + prompts[row["prompt"]].replace(" ", "  ") + "\n", limits=GenerationLimits(max_chars=10**6))
    pieces = list(stream)
    n = -(-len(row["result"]) // 50)
    assert "".join(pieces) == row["result"] and len(pieces) == n and all(len(p) == 50 for p in pieces[:-1])
    assert waits == [1.5] + [0.2] * (n - 1)
    assert stream.generation.tokens_out == -(-len(row["result"]) // 4) and stream.generation.cost == 0.0


def test_recorded_delays_are_real_time_and_the_limits_cut_them(tmp_path: Path) -> None:
    table = tmp_path / "out.csv"
    with table.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([["model", "prompt", "output"], ["m", "Say hi.", "hi " * 40], ["m", "Other", "x"]])
    slow = {"name": "m", "kind": "recorded", "table": "out.csv", "first_token_delay": 0.5}
    with pytest.raises(GenerationError) as err:
        build_endpoints([slow], root=tmp_path)["m"].generate("Say hi.", limits=GenerationLimits(first_token_seconds=0.05))
    assert err.value.reason == "first_token_timeout" and err.value.generation.text == ""
    trickle = {"name": "m", "kind": "recorded", "table": "out.csv", "chunk_chars": 3, "chunk_seconds": 0.05}
    with pytest.raises(GenerationError) as err:
        build_endpoints([trickle], root=tmp_path)["m"].generate(
            "Say hi.", limits=GenerationLimits(first_token_seconds=0.2, total_seconds=0.3))
    assert err.value.reason == "timeout" and 0 < len(err.value.generation.text) < 120
    with pytest.raises(GenerationError) as err:
        build_endpoints([{**trickle, "chunk_seconds": 0}], root=tmp_path)["m"].generate(
            "Say hi.", limits=GenerationLimits(max_chars=10))
    assert err.value.reason == "too_long" and len(err.value.generation.text) == 12  # cut at the piece that passed
    with pytest.raises(GenerationError) as err:
        build_endpoints([trickle], root=tmp_path)["m"].generate("Not recorded")
    assert err.value.reason == "no_recording"


def test_recorded_tables_that_do_not_fit_say_what_is_wrong(tmp_path: Path, shared_data: Path) -> None:
    root = shared_data / "arena"
    with pytest.raises(DataError, match=r"has no column\(s\) output .*set model_column"):
        build_endpoints([{**_llmfao_spec("Airoboros L2 70B"), "output_column": "output"}], root=root)
    with pytest.raises(DataError, match=r"no row whose name is 'GPT-5'; it has 70 model\(s\)"):
        build_endpoints([_llmfao_spec("GPT-5")], root=root)
    with pytest.raises(DataError, match="not found"):
        build_endpoints([{"name": "m", "kind": "recorded", "table": "missing.jsonl"}], root=tmp_path)


# --- the protocol's section ---------------------------------------------------------------------------------------


def test_the_specs_are_checked_with_paths_and_the_schema_lists_every_kind() -> None:
    with pytest.raises(ProtocolError) as err:
        parse_models([{"name": "a", "kind": "openai", "url": "ftp://x", "model": "m"},
                      {"name": "b", "kind": "recorded"},
                      {"name": "c", "kind": "hosted"},
                      {"name": "d", "kind": "openai", "url": "http://x/v1", "model": "m", "params": {"stream": False}},
                      {"name": "e", "kind": "local", "key_env": "OPENAI_API_KEY"},
                      {"name": "f", "kind": "recorded", "table": "t.csv",
                       "limits": {"first_token_seconds": 30, "total_seconds": 10}}])
    problems = err.value.problems
    assert any(p.startswith("arena.models[0].url: String should match pattern") for p in problems), problems
    assert "arena.models[1].table: Field required" in problems
    assert "arena.models[2]: kind must be one of recorded, openai, local (got 'hosted')" in problems
    assert any(p.startswith("arena.models[3]") and "params: stream cannot be set" in p for p in problems), problems
    assert any(p.startswith("arena.models[4]") and "no key and no price" in p for p in problems), problems
    assert any("arena.models[5].limits" in p and "first_token_seconds (30) must be at most" in p for p in problems)
    with pytest.raises(ProtocolError, match=r"arena.models\[0\]: kind is missing: one of recorded, openai, local"):
        parse_models([{"name": "a"}])
    with pytest.raises(ProtocolError, match=r"arena.models\[1\].name: 'a' is the name of arena.models\[0\] too"):
        parse_models([{"name": "a", "kind": "local"}, {"name": "a", "kind": "local"}])
    kinds = {branch["properties"]["kind"]["const"] for branch in models_schema()["$defs"].values()
             if "kind" in branch.get("properties", {})}
    assert kinds == set(MODEL_KINDS) == set(ENDPOINT_KINDS.names())
    local = parse_models([{"name": "small", "kind": "local"}])[0]
    assert (local.url, local.key_env, local.price_output) == ("http://127.0.0.1:8100/v1", "", 0.0)


# --- the openai kind against a fake server ------------------------------------------------------------------------


def _sse(*events: Any, done: bool = True) -> bytes:
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events]
    return ("".join(lines) + ("data: [DONE]\n\n" if done else "")).encode()


def _chunk(content: str | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    delta = {"content": content} if content is not None else {"role": "assistant"}
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra}


def _streamed(*pieces: str, usage: dict[str, int] | None = None, finish: str = "stop") -> bytes:
    events: list[Any] = [_chunk(), *(_chunk(p) for p in pieces), _chunk(finish=finish)]
    if usage is not None:
        events.append({"object": "chat.completion.chunk", "choices": [], "usage": usage})
    return _sse(*events)


class _Fake:
    """An OpenAI-compatible server in-process: each request gets the next of ``answers`` (a response, or a
    callable of the request), and is kept."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return answer(request) if callable(answer) else answer

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def _events(body: bytes, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers={"content-type": "text/event-stream", **headers}, content=body)


class _Slow(httpx.AsyncByteStream):
    """A body that sends ``head``, then stalls ``pause`` seconds before each of ``rest``."""

    def __init__(self, head: bytes, rest: list[bytes], pause: float) -> None:
        self.head, self.rest, self.pause = head, rest, pause

    async def __aiter__(self) -> Any:
        if self.head:
            yield self.head
        for part in self.rest:
            await asyncio.sleep(self.pause)
            yield part


def _endpoint(tmp_path: Path, fake: _Fake, waits: list[float] | None = None, **spec: Any) -> Any:
    async def sleep(seconds: float) -> None:
        (waits if waits is not None else []).append(seconds)

    model = {"name": "gpt", "kind": "openai", "url": "http://models.test/v1", "model": "gpt-x", "retries": 2,
             "price_input": 2.0, "price_output": 8.0, **spec}
    return build_endpoints([model], root=tmp_path, transport=httpx.MockTransport(fake), sleep=sleep)["gpt"]


def test_a_streamed_answer_arrives_in_pieces_with_its_usage_cost_and_ledger(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_TEST_KEY", "sk-arena-test-0123456789abcdef")
    fake = _Fake(_events(_streamed("Hello", ", ", "world.", usage={"prompt_tokens": 12, "completion_tokens": 3})))
    endpoint = _endpoint(tmp_path, fake, key_env="ARENA_TEST_KEY", system="Be brief.", seed=7)
    stream = endpoint.stream("Say hello.", limits=GenerationLimits(max_tokens=64))
    assert list(stream) == ["Hello", ", ", "world."]
    gen = stream.generation
    assert (gen.text, gen.finish_reason, gen.tokens_in, gen.tokens_out, gen.usage_estimated) == \
        ("Hello, world.", "stop", 12, 3, "")
    assert gen.cost == pytest.approx(12 * 2.0 / 1e6 + 3 * 8.0 / 1e6)
    assert fake.requests[0].headers["authorization"] == "Bearer sk-arena-test-0123456789abcdef"
    assert str(fake.requests[0].url) == "http://models.test/v1/chat/completions"
    assert fake.bodies()[0] == {"model": "gpt-x", "messages": [{"role": "system", "content": "Be brief."},
                                                               {"role": "user", "content": "Say hello."}],
                                "temperature": 0.7, "max_tokens": 64, "seed": 7, "stream": True,
                                "stream_options": {"include_usage": True}}
    ledger = (tmp_path / ARENA_LEDGER).read_text(encoding="utf-8")
    assert "sk-arena-test" not in ledger and [json.loads(line)["event"] for line in ledger.splitlines()] == ["sent", "answered"]
    cost = spend(tmp_path / ARENA_LEDGER, "gpt")
    assert (cost.answered, cost.tokens_in, cost.tokens_out, cost.unknown) == (1, 12, 3, 0)


def test_the_async_stream_gives_the_same_pieces(tmp_path: Path) -> None:
    fake = _Fake(_events(_streamed("A", "B")))
    endpoint = _endpoint(tmp_path, fake)

    async def read() -> tuple[list[str], Any]:
        stream = endpoint.astream("Q")
        return [piece async for piece in stream], stream.generation

    pieces, gen = asyncio.run(read())
    assert pieces == ["A", "B"] and gen.text == "AB" and gen.usage_estimated == "no usage in the answer"


def test_a_stall_before_the_first_token_and_one_midway_fail_on_their_limits(tmp_path: Path) -> None:
    head = _sse(_chunk(), done=False)
    stalled = _Fake(lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"},
                                             stream=_Slow(head, [_streamed("late")], 5.0)))
    with pytest.raises(GenerationError) as err:
        _endpoint(tmp_path, stalled).generate("Q", limits=GenerationLimits(first_token_seconds=0.2, total_seconds=5))
    assert err.value.reason == "first_token_timeout" and err.value.generation.seconds < 2
    midway = _Fake(lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"},
                                            stream=_Slow(_sse(_chunk("one "), done=False),
                                                         [_sse(_chunk("two "), done=False)] * 20, 0.1)))
    with pytest.raises(GenerationError) as err:
        _endpoint(tmp_path, midway).generate("Q", limits=GenerationLimits(first_token_seconds=0.3, total_seconds=0.5))
    assert err.value.reason == "timeout" and err.value.generation.text.startswith("one two")
    assert 0.4 < err.value.generation.seconds < 3


def test_429_waits_retry_after_then_streams(tmp_path: Path) -> None:
    waits: list[float] = []
    fake = _Fake(httpx.Response(429, headers={"Retry-After": "7"}, json={"error": {"message": "slow down"}}),
                 httpx.Response(503, json={"error": {"message": "overloaded"}}),
                 _events(_streamed("fine")))
    gen = _endpoint(tmp_path, fake, waits, backoff=0.5).generate("Q")
    assert gen.text == "fine" and len(fake.requests) == 3
    assert waits[0] == 7.0 and 0.25 <= waits[1] <= 1.0  # Retry-After, then the backoff of the second attempt
    events = [json.loads(line)["event"] for line in (tmp_path / ARENA_LEDGER).read_text().splitlines()]
    assert events == ["sent", "rate_limited", "sent", "server_error", "sent", "answered"]
    with pytest.raises(GenerationError) as err:
        _endpoint(tmp_path, _Fake(httpx.Response(429, headers={"Retry-After": "1"})), []).generate("Q")
    assert err.value.reason == "endpoint" and "after 3 attempt(s); last: 429" in str(err.value)
    waits = []
    late = _Fake(httpx.Response(429, headers={"Retry-After": "30"}), _events(_streamed("too late")))
    with pytest.raises(GenerationError) as err:  # a wait past the first-token time is not waited
        _endpoint(tmp_path, late, waits).generate("Q", limits=GenerationLimits(first_token_seconds=10))
    assert err.value.reason == "endpoint" and "would wait 30 s, past the time" in str(err.value)
    assert waits == [] and len(late.requests) == 1


def test_answers_past_the_length_limits_fail(tmp_path: Path) -> None:
    long = _Fake(_events(_streamed(*["word " * 20] * 10)))
    with pytest.raises(GenerationError) as err:
        _endpoint(tmp_path, long).generate("Q", limits=GenerationLimits(max_chars=250))
    assert err.value.reason == "too_long" and len(err.value.generation.text) == 300
    cut = _Fake(_events(_streamed("a cut answ", finish="length")))
    with pytest.raises(GenerationError) as err:
        _endpoint(tmp_path, cut).generate("Q", limits=GenerationLimits(max_tokens=3))
    assert err.value.reason == "too_long" and "max_tokens" in str(err.value)
    assert _endpoint(tmp_path, cut).generate("Q", limits=GenerationLimits(max_tokens=3, cut="keep")).text == "a cut answ"
    huge = _Fake(_events(_streamed("x" * 1000)))
    from humeval.judging.client import ChatClient, JudgeError

    async def read() -> list[Any]:  # the client's byte cap (4 MiB by default) bounds what is read of a stream
        async with ChatClient("http://models.test/v1", transport=httpx.MockTransport(huge), max_bytes=200,
                              retries=0) as client:
            return [item async for item in client.stream({"model": "m", "messages": []})]

    with pytest.raises(JudgeError, match="the stream passed 200 bytes"):
        asyncio.run(read())


def test_garbage_is_retried_before_the_first_piece_and_fails_after_it(tmp_path: Path) -> None:
    fake = _Fake(_events(b"data: <html>oops</html>\n\n"), _events(_sse({"choices": "no"})), _events(_streamed("ok")))
    assert _endpoint(tmp_path, fake).generate("Q").text == "ok" and len(fake.requests) == 3
    broken = _Fake(_events(_sse(_chunk("half an "), "{not json", done=False)))
    with pytest.raises(GenerationError) as err:
        _endpoint(tmp_path, broken).generate("Q")
    assert err.value.reason == "endpoint" and "broke after 8 characters" in str(err.value)
    assert len(broken.requests) == 1  # a reader saw "half an ": not asked again
    dropped = _Fake(_events(_sse(_chunk("half"), done=False)))
    with pytest.raises(GenerationError, match="ended before"):
        _endpoint(tmp_path, dropped).generate("Q")
    error_event = _Fake(_events(_sse({"error": {"message": "model crashed"}})))
    with pytest.raises(GenerationError, match="model crashed"):
        _endpoint(tmp_path, error_event, retries=0).generate("Q")
    html = _Fake(httpx.Response(200, headers={"content-type": "text/html"}, content=b"<html>gateway</html>"))
    with pytest.raises(GenerationError, match="neither an event stream nor a chat completion"):
        _endpoint(tmp_path, html).generate("Q")
    assert len(html.requests) == 3


def test_refusals_of_the_request_and_of_the_model_are_not_retried(tmp_path: Path) -> None:
    denied = _Fake(httpx.Response(401, json={"error": {"message": "bad key"}}))
    with pytest.raises(GenerationError, match="401, the API key was refused") as err:
        _endpoint(tmp_path, denied).generate("Q")
    assert err.value.reason == "endpoint" and len(denied.requests) == 1
    filtered = _Fake(_events(_streamed("I can", finish="content_filter")))
    with pytest.raises(GenerationError) as err:
        _endpoint(tmp_path, filtered).generate("Q")
    assert err.value.reason == "refused"
    blank = _Fake(_events(_streamed("  ", "\n")))
    with pytest.raises(GenerationError) as err:
        _endpoint(tmp_path, blank).generate("Q")
    assert err.value.reason == "empty"


def test_a_server_that_ignores_stream_is_read_as_one_piece(tmp_path: Path) -> None:
    whole = _Fake(httpx.Response(200, json={"choices": [{"message": {"content": "all at once"}, "finish_reason": "stop"}],
                                             "usage": {"prompt_tokens": 4, "completion_tokens": 3}}))
    stream = _endpoint(tmp_path, whole).stream("Q")
    assert list(stream) == ["all at once"] and stream.generation.tokens_out == 3


def test_the_cache_answers_a_repeated_prompt_without_a_request(tmp_path: Path) -> None:
    fake = _Fake(_events(_streamed("cached answer", usage={"prompt_tokens": 5, "completion_tokens": 2})))
    first = _endpoint(tmp_path, fake, cache=True).generate("Q")
    again = _endpoint(tmp_path, fake, cache=True).generate("Q")
    other = _endpoint(tmp_path, fake, cache=True).generate("Another")
    assert (first.text, again.text, first.cached, again.cached) == ("cached answer",) * 2 + (False, True)
    assert len(fake.requests) == 2 and again.cost == 0.0 and first.cost > 0 and not other.cached
    assert (tmp_path / ARENA_CACHE).is_file()


def test_a_missing_key_fails_before_any_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_NO_SUCH_KEY", raising=False)
    fake = _Fake(_events(_streamed("x")))
    with pytest.raises(GenerationError, match=r"\$ARENA_NO_SUCH_KEY is not set") as err:
        _endpoint(tmp_path, fake, key_env="ARENA_NO_SUCH_KEY").generate("Q")
    assert err.value.reason == "endpoint" and fake.requests == []


def test_closing_a_stream_stops_the_generation(tmp_path: Path) -> None:
    slow = _Fake(lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"},
                                          stream=_Slow(_sse(_chunk("first "), done=False),
                                                       [_sse(_chunk("more "), done=False)] * 100, 0.05)))
    stream = _endpoint(tmp_path, slow).stream("Q")
    assert next(stream) == "first "
    stream.close()
    assert list(stream) == []
    assert stream.generation.text == "first " and stream.generation.seconds > 0  # the record of a stopped stream


class _Words:
    """A stand-in for the local model behind ``humeval local-model``'s real server (humeval.local_model.app)."""

    name = "tiny"

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        return sum(len(m["content"].split()) for m in messages)

    def answer_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(self, messages: list[dict[str, str]], *, max_tokens: int, temperature: float, seed: int | None) -> Any:
        yield from ["You ", "said: ", messages[-1]["content"]][:max_tokens]


def test_the_local_kind_streams_from_the_local_model_server(tmp_path: Path) -> None:
    from humeval.local_model import app

    endpoint = build_endpoints([{"name": "small", "kind": "local"}], root=tmp_path,
                               transport=httpx.ASGITransport(app(_Words())))["small"]
    stream = endpoint.stream("hello there", limits=GenerationLimits(max_tokens=8))
    assert "".join(stream) == "You said: hello there"
    gen = stream.generation
    assert gen.finish_reason == "stop" and gen.usage_estimated == "no usage in the answer" and gen.cost == 0.0
    with pytest.raises(GenerationError) as err:  # the server's own 400 (max_tokens above its 1024): not retried
        endpoint.generate("hello", limits=GenerationLimits(max_tokens=5000))
    assert err.value.reason == "endpoint" and "max_tokens: an integer from 1 to 1024" in str(err.value)
    assert err.value.generation.attempts == 1


def test_events_split_anywhere_and_crlf_lines_are_read_and_an_endless_line_is_cut(tmp_path: Path) -> None:
    body = _streamed("Grüße, ", "world").replace(b"\n", b"\r\n")
    parts = [body[i:i + 7] for i in range(0, len(body), 7)]  # cuts inside events, inside "\r\n" and inside "ü"
    split = _Fake(lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"},
                                           stream=_Slow(parts[0], parts[1:], 0.0)))
    assert _endpoint(tmp_path, split).generate("Q").text == "Grüße, world"
    from humeval.judging.client import ChatClient, JudgeError

    endless = _Fake(lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"},
                                             stream=_Slow(b"data: ", [b"x" * 100] * 1000, 0.0)))

    async def read() -> list[Any]:
        async with ChatClient("http://models.test/v1", transport=httpx.MockTransport(endless), max_bytes=5000,
                              retries=0) as client:
            return [item async for item in client.stream({"model": "m", "messages": []})]

    with pytest.raises(JudgeError, match="the stream passed 5,000 bytes"):
        asyncio.run(read())


def test_two_streams_in_one_event_loop_interleave_as_a_battle_reads_them(tmp_path: Path) -> None:
    table = tmp_path / "out.jsonl"
    table.write_text("\n".join(json.dumps({"model": m, "prompt": "Q", "output": m * 40}) for m in ("a", "b")),
                     encoding="utf-8")
    endpoints = build_endpoints([{"name": m, "kind": "recorded", "table": "out.jsonl", "chunk_chars": 4,
                                  "chunk_seconds": 0.02} for m in ("a", "b")], root=tmp_path)

    async def battle() -> tuple[list[str], float, list[Any]]:
        order: list[str] = []
        streams = [endpoints[m].astream("Q") for m in ("a", "b")]

        async def read(stream: Any) -> None:
            async for piece in stream:
                order.append(piece[0])

        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.gather(*(read(s) for s in streams))
        return order, loop.time() - start, [s.generation for s in streams]

    order, seconds, gens = asyncio.run(battle())
    assert sorted(order) == ["a"] * 10 + ["b"] * 10 and order != sorted(order)  # the pieces alternate
    assert all(g.text == g.model * 40 for g in gens)
    assert seconds < sum(g.seconds for g in gens)  # concurrent: the battle takes about one answer's time, not two
