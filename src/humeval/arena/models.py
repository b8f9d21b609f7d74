"""An arena's models as endpoints: one prompt in, the answer streamed out, within limits of time and length.

:func:`build_endpoints` turns the protocol's ``arena.models`` (:mod:`humeval.protocol.arena`) into
:class:`Endpoint` objects, one per model, by the registry :data:`ENDPOINT_KINDS`:

* ``recorded`` (:class:`RecordedEndpoint`): the model's recorded answer to the prompt, from a table (JSONL or CSV;
  prompts matched by their text after white space is collapsed, or by id through a prompt file), optionally in
  pieces with delays (a rehearsal's streaming and latency);
* ``openai`` (:class:`OpenAIEndpoint`): an OpenAI-compatible chat endpoint asked with ``stream: true`` through the
  judge stage's client (:meth:`humeval.judging.client.ChatClient.stream`: the key from the environment, retries,
  ``Retry-After``, the 4 MiB cap, usage checked, secrets redacted), every attempt in the ledger
  ``.humeval/arena-ledger.jsonl`` (:mod:`humeval.judging.ledger`, one "judge" per model), answers optionally cached
  in ``.humeval/arena-cache.sqlite``;
* ``local``: the same against the server of ``humeval local-model``.

Both ways of reading a generation give its pieces as they arrive and, once read to the end, its record
(:class:`Generation`: the text, the times, the tokens and the cost):

* ``endpoint.astream(prompt, limits=...)``: an async iterator (:class:`AsyncGenerationStream`), for a server's event
  loop;
* ``endpoint.stream(prompt, limits=...)``: a plain iterator (:class:`GenerationStream`), which runs the async one
  on a thread of its own (the CLI, tests, a thread pool).

A generation that breaks a limit or gets no usable answer raises :class:`GenerationError` from the iterator, with
a ``reason`` (:data:`FAILURES`); pieces may have been yielded before it: a caller that streams them to a page
must withdraw them. Such a generation is never shown as a battle and never counted.
"""

from __future__ import annotations

import asyncio
import csv
import json
import math
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from humeval.errors import DataError, HumevalError
from humeval.protocol.arena import (
    GenerationLimits,
    LocalArenaModel,
    OpenAIArenaModel,
    RecordedArenaModel,
    parse_models,
)
from humeval.registry import Registry

__all__ = ["ENDPOINT_KINDS", "FAILURES", "ARENA_CACHE", "ARENA_LEDGER", "AsyncGenerationStream", "Endpoint",
           "Generation", "GenerationError", "GenerationLimits", "GenerationStream", "OpenAIEndpoint",
           "RecordedEndpoint", "build_endpoints", "normalise_prompt", "read_recorded"]

#: where an arena's ledger and answer cache live, under the study folder
ARENA_LEDGER = Path(".humeval") / "arena-ledger.jsonl"
ARENA_CACHE = Path(".humeval") / "arena-cache.sqlite"

#: why a generation fails (:attr:`GenerationError.reason`)
FAILURES = {
    "first_token_timeout": "no piece of the answer within limits.first_token_seconds",
    "timeout": "the answer not finished within limits.total_seconds",
    "too_long": "longer than limits.max_chars, or cut at limits.max_tokens with limits.cut: drop",
    "empty": "shorter than limits.min_chars (white space not counted)",
    "refused": "the model refused (message.refusal, finish_reason: content_filter)",
    "endpoint": "the endpoint gave no usable answer (HTTP error after the retries, a broken or malformed stream)",
    "no_recording": "a recorded model has no answer to this prompt",
}


class GenerationError(HumevalError):
    """A generation that failed (``reason``: a key of :data:`FAILURES`); ``generation`` holds what it produced
    before it failed (text, times, tokens). Never shown as a battle, never counted."""

    def __init__(self, reason: str, message: str, generation: Generation | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.generation = generation


@dataclass
class Generation:
    """One generation as it went: filled while it streams, complete when the stream ends (or fails)."""

    model: str
    prompt: str
    text: str = ""
    #: UTC seconds since the epoch when it was asked
    started: float = field(default_factory=time.time)
    first_token_seconds: float | None = None
    seconds: float = 0.0
    finish_reason: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    #: why the tokens are estimated (the endpoint sent no usage; a recorded answer: characters / 4); "" when reported
    usage_estimated: str = ""
    cost: float = 0.0
    currency: str = "USD"
    cached: bool = False
    #: the failure's reason ("" when it succeeded)
    error: str = ""
    #: requests sent (retries included), and the last outcome other than an answer (e.g. "rate_limited")
    attempts: int = 0
    last_problem: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def normalise_prompt(text: str) -> str:
    """The prompt as a recorded table is matched: surrounding white space stripped, inner runs collapsed to one space."""
    return " ".join(text.split())


class Endpoint(Protocol):
    """A model an arena can ask: ``name``, and its answer to a prompt as a stream of text pieces."""

    name: str
    spec: Any

    def stream(self, prompt: str, *, limits: GenerationLimits | None = None) -> GenerationStream: ...

    def astream(self, prompt: str, *, limits: GenerationLimits | None = None) -> AsyncGenerationStream: ...


class AsyncGenerationStream:
    """The pieces of one generation, as an async iterator; :attr:`generation` is complete once it is exhausted.

    Limits are enforced here, the same for every kind: the first piece within ``first_token_seconds``, the
    whole within ``total_seconds``, at most ``max_chars``, at least ``min_chars``, and ``cut``.
    """

    def __init__(self, name: str, prompt: str, limits: GenerationLimits, produce: Callable[[Generation], AsyncIterator[str]],
                 currency: str = "USD") -> None:
        self.limits = limits
        self.generation = Generation(name, prompt, currency=currency)
        self._produce = produce
        self._iterator: AsyncIterator[str] | None = None

    def __aiter__(self) -> AsyncIterator[str]:
        if self._iterator is None:
            self._iterator = self._run()
        return self._iterator

    async def __anext__(self) -> str:
        return await self.__aiter__().__anext__()

    async def aclose(self) -> None:
        if self._iterator is not None:
            await self._iterator.aclose()  # type: ignore[attr-defined]

    def _fail(self, reason: str, message: str) -> GenerationError:
        self.generation.error = reason
        return GenerationError(reason, f"model {self.generation.model!r}: {message}", self.generation)

    async def _run(self) -> AsyncIterator[str]:
        gen, limits = self.generation, self.limits
        loop = asyncio.get_running_loop()
        start = loop.time()
        source = self._produce(gen)
        try:
            while True:
                first = gen.first_token_seconds is None
                bound = limits.first_token_seconds if first else limits.total_seconds
                left = bound - (loop.time() - start)
                try:
                    async with asyncio.timeout(max(left, 0.0)):
                        piece = await anext(source)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    gen.seconds = loop.time() - start
                    if first:
                        tried = (f"; {gen.attempts} request(s), the last outcome: {gen.last_problem}"
                                 if gen.last_problem else "")
                        raise self._fail("first_token_timeout", f"no answer within {limits.first_token_seconds:g} s "
                                         f"(limits.first_token_seconds{tried})") from None
                    raise self._fail("timeout", f"the answer was not finished within {limits.total_seconds:g} s "
                                     f"(limits.total_seconds; {len(gen.text):,} characters by then)") from None
                except GenerationError as exc:
                    gen.seconds = loop.time() - start
                    raise self._fail(exc.reason, str(exc)) from None
                except HumevalError as exc:  # the judging client's JudgeError: no usable answer
                    gen.seconds = loop.time() - start
                    raise self._fail("endpoint", str(exc)) from None
                if not piece:
                    continue
                if first:
                    gen.first_token_seconds = loop.time() - start
                gen.text += piece
                if len(gen.text) > limits.max_chars:
                    gen.seconds = loop.time() - start
                    raise self._fail("too_long", f"the answer passed {limits.max_chars:,} characters (limits.max_chars)")
                yield piece
        finally:
            gen.seconds = loop.time() - start  # also when the reader stops it (a cancelled or closed stream)
            await source.aclose()  # type: ignore[attr-defined]
        if gen.error:
            raise self._fail(gen.error, FAILURES[gen.error])
        if gen.finish_reason == "length" and limits.cut == "drop":
            raise self._fail("too_long", f"the endpoint cut the answer at {limits.max_tokens} tokens "
                             "(finish_reason: length; limits.max_tokens, limits.cut: drop)")
        if len(gen.text.strip()) < limits.min_chars:
            raise self._fail("empty", f"an answer of {len(gen.text.strip())} characters, fewer than "
                             f"{limits.min_chars} (limits.min_chars)")


_END = object()


class GenerationStream(Iterator[str]):
    """The pieces of one generation as a plain iterator: the async stream runs on a thread with its own event loop
    and hands each piece over; :attr:`generation` is complete once it is exhausted. :meth:`close` stops it."""

    def __init__(self, stream: AsyncGenerationStream) -> None:
        self._stream = stream
        self._queue: queue.Queue[Any] = queue.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._pump, name=f"generate-{stream.generation.model}", daemon=True)
        self._thread.start()
        self._ready.wait()

    @property
    def generation(self) -> Generation:
        return self._stream.generation

    def _pump(self) -> None:
        async def run() -> None:
            try:
                async for piece in self._stream:
                    self._queue.put(piece)
                self._queue.put(_END)
            except asyncio.CancelledError:
                self._queue.put(_END)
            except BaseException as exc:  # handed to the reader's thread, raised there
                self._queue.put(exc)

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            self._ready.set()
            await run()

        asyncio.run(main())

    def __next__(self) -> str:
        if self._done:
            raise StopIteration
        item = self._queue.get()
        if item is _END:
            self._done = True
            self._thread.join()
            raise StopIteration
        if isinstance(item, BaseException):
            self._done = True
            self._thread.join()
            raise item
        return str(item)

    def close(self) -> None:
        """Stop the generation (the request is dropped) and wait for its thread."""
        if not self._done and self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._done = True
        self._thread.join()

    def __del__(self) -> None:
        if not self._done and self._loop is not None and self._task is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._task.cancel)


class _EndpointBase:
    """What every kind shares: the name, the spec, the limits, and the two ways of streaming."""

    name: str
    spec: Any
    currency = "USD"

    def _limits(self, limits: GenerationLimits | None) -> GenerationLimits:
        return limits or self.spec.limits or GenerationLimits()

    def astream(self, prompt: str, *, limits: GenerationLimits | None = None) -> AsyncGenerationStream:
        """The answer to ``prompt``, streamed within ``limits`` (the caller resolves them: the model's own, else the
        arena's, as ``Arena.limits_of(name)`` does); None: the model's own ``limits``, else the defaults."""
        chosen = self._limits(limits)
        return AsyncGenerationStream(self.name, prompt, chosen, lambda gen: self._produce(prompt, chosen, gen),
                                     self.currency)

    def stream(self, prompt: str, *, limits: GenerationLimits | None = None) -> GenerationStream:
        """:meth:`astream` as a plain iterator (on a thread of its own)."""
        return GenerationStream(self.astream(prompt, limits=limits))

    def generate(self, prompt: str, *, limits: GenerationLimits | None = None) -> Generation:
        """The whole generation at once (its record; :class:`GenerationError` when it fails)."""
        stream = self.stream(prompt, limits=limits)
        for _ in stream:
            pass
        return stream.generation

    def _produce(self, prompt: str, limits: GenerationLimits, gen: Generation) -> AsyncIterator[str]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


# --- recorded --------------------------------------------------------------------------------------------------


def _rows(path: Path, where: str) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DataError(f"{where}: {path} not found")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    if suffix in (".jsonl", ".ndjson"):
        rows = []
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise DataError(f"{where}: {path} line {n} is not JSON ({exc})") from None
                if not isinstance(row, dict):
                    raise DataError(f"{where}: {path} line {n} is not a JSON object")
                rows.append(row)
        return rows
    raise DataError(f"{where}: {path} has suffix {suffix!r}; a table of recorded outputs is .jsonl or .csv")


def _key(value: Any) -> str:
    """A table cell as a lookup key (JSON's 8 and CSV's "8" are the same id)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def read_recorded(spec: RecordedArenaModel, root: Path = Path("."), where: str = "arena.models") -> dict[str, str]:
    """The recorded answers of ``spec``'s model, by normalised prompt text (:func:`normalise_prompt`).

    The table's rows whose model column equals ``spec.model`` (or ``spec.name``); with ``spec.prompts``, the
    prompt column holds ids of that file's ``id`` column, mapped to its ``text``. A prompt recorded twice for
    the model keeps the first row's answer; a row whose answer is missing is kept as "" (asked, it fails as
    ``empty``, as the model's real answer was)."""
    table = root / spec.table
    rows = _rows(table, f"{where}: model {spec.name!r} table")
    if rows and not {spec.model_column, spec.prompt_column, spec.output_column} <= set(rows[0]):
        missing = sorted({spec.model_column, spec.prompt_column, spec.output_column} - set(rows[0]))
        raise DataError(f"{where}: model {spec.name!r}: {table} has no column(s) {', '.join(missing)} "
                        f"(it has {', '.join(rows[0])}); set model_column, prompt_column and output_column")
    texts: dict[str, str] | None = None
    if spec.prompts:
        prompt_rows = _rows(root / spec.prompts, f"{where}: model {spec.name!r} prompts")
        if prompt_rows and not {"id", "text"} <= set(prompt_rows[0]):
            raise DataError(f"{where}: model {spec.name!r}: {root / spec.prompts} needs columns id and text "
                            f"(it has {', '.join(prompt_rows[0])})")
        texts = {_key(r["id"]): str(r["text"]) for r in prompt_rows}
    wanted = spec.model or spec.name
    out: dict[str, str] = {}
    for n, row in enumerate(rows, 1):
        if _key(row.get(spec.model_column)) != wanted:
            continue
        prompt = row.get(spec.prompt_column)
        if texts is not None:
            if _key(prompt) not in texts:
                raise DataError(f"{where}: model {spec.name!r}: {table} row {n} names prompt {prompt!r}, which "
                                f"{root / spec.prompts} does not hold")
            prompt = texts[_key(prompt)]
        answer = row.get(spec.output_column)
        out.setdefault(normalise_prompt(str(prompt)), "" if answer is None else str(answer))
    if not out:
        models = sorted({_key(r.get(spec.model_column)) for r in rows})
        raise DataError(f"{where}: model {spec.name!r}: {table} has no row whose {spec.model_column} is "
                        f"{wanted!r}; it has {len(models)} model(s): {', '.join(models[:12])}"
                        + (", ..." if len(models) > 12 else ""))
    return out


class RecordedEndpoint(_EndpointBase):
    """Answers from a table of recorded outputs (:func:`read_recorded`), optionally in timed pieces."""

    def __init__(self, spec: RecordedArenaModel, *, root: Path = Path("."), answers: Mapping[str, str] | None = None,
                 sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.name, self.spec = spec.name, spec
        self.answers = dict(answers) if answers is not None else read_recorded(spec, root)
        self._sleep = sleep

    def prompts(self) -> list[str]:
        """The (normalised) prompts this model has an answer to."""
        return list(self.answers)

    async def _produce(self, prompt: str, limits: GenerationLimits, gen: Generation) -> AsyncIterator[str]:  # type: ignore[override]
        key = normalise_prompt(prompt)
        if key not in self.answers:
            raise GenerationError("no_recording", f"no recorded answer to the prompt {key[:60]!r}")
        text = self.answers[key]
        gen.tokens_in, gen.tokens_out = math.ceil(len(prompt) / 4), math.ceil(len(text) / 4)
        gen.usage_estimated, gen.finish_reason = "a recorded answer: characters / 4", "stop"
        if self.spec.first_token_delay:
            await self._sleep(self.spec.first_token_delay)
        size = self.spec.chunk_chars or max(len(text), 1)
        for i in range(0, len(text), size):
            if i and self.spec.chunk_seconds:
                await self._sleep(self.spec.chunk_seconds)
            yield text[i:i + size]


# --- openai / local ---------------------------------------------------------------------------------------------


class OpenAIEndpoint(_EndpointBase):
    """An OpenAI-compatible chat endpoint, streamed through :class:`humeval.judging.client.ChatClient`.

    ``root``: the study folder (the ledger, the cache, a relative ``key_file``); ``ledger=False`` keeps no ledger
    (``humeval arena generate`` outside a study); ``transport``: an httpx transport (tests)."""

    def __init__(self, spec: OpenAIArenaModel, *, root: Path = Path("."), ledger: bool = True,
                 transport: Any = None, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.name, self.spec = spec.name, spec
        self.currency = spec.currency
        self.root = root
        self._ledger = ledger
        self._transport = transport
        self._sleep = sleep
        self._key: str | None = None

    def key(self) -> str:
        """The API key (``key_env``, else ``key_file``, else none), read once."""
        if self._key is None:
            from humeval.judging.client import read_key

            llm = type("KeySpec", (), {"api_key_env": self.spec.key_env, "api_key_file": self.spec.key_file})
            try:
                self._key = read_key(llm, self.root, self.name)
            except HumevalError as exc:
                raise GenerationError("endpoint", str(exc).replace(".llm.api_key_env", ".key_env")
                                      .replace("data.judges[", "arena.models[").replace("judge '", "model '")
                                      .replace("`api_key_file`", "`key_file`")) from None
        return self._key

    def body(self, prompt: str, limits: GenerationLimits) -> dict[str, Any]:
        """The request's body (without ``stream``, which the client sets)."""
        from humeval.judging.client import chat_body

        s = self.spec
        usage = {"stream_options": {"include_usage": True}} if s.stream_usage else {}
        return chat_body(s.model, prompt, system=s.system, temperature=s.temperature, max_tokens=limits.max_tokens,
                         top_p=s.top_p, seed=s.seed, params=usage | dict(s.params))

    async def _produce(self, prompt: str, limits: GenerationLimits, gen: Generation) -> AsyncIterator[str]:  # type: ignore[override]
        from humeval.hashing import sha256_json
        from humeval.judging.cache import AnswerCache, request_key
        from humeval.judging.client import ChatClient, Reply, estimate_tokens, request_chars
        from humeval.judging.ledger import Ledger

        s = self.spec
        body = self.body(prompt, limits)
        cache = AnswerCache(self.root / ARENA_CACHE) if s.cache else None
        try:
            key = request_key(f"{s.url.rstrip('/')}/chat/completions", body)
            hit = cache.get(key) if cache is not None else None
            if hit is not None:
                gen.cached = True
                self._settle(gen, hit)
                if hit.content:
                    yield hit.content
                return
            ledger = (Ledger(self.root / ARENA_LEDGER, self.name).recorder(
                sha256_json(body), estimate_tokens(request_chars(body)), limits.max_tokens) if self._ledger else None)

            def record(event: dict[str, Any]) -> None:
                if event["event"] == "sent":
                    gen.attempts += 1
                elif event["event"] != "answered":
                    gen.last_problem = str(event["event"]) + (f" ({event['status']})" if "status" in event else "")
                if ledger is not None:
                    ledger(event)

            client = ChatClient(s.url, self.key(), timeout=s.timeout, retries=s.retries, backoff=s.backoff,
                                concurrency=1, transport=self._transport, sleep=self._sleep)
            async with client:
                deadline = asyncio.get_running_loop().time() + limits.first_token_seconds
                async for item in client.stream(body, record, wait_until=deadline):
                    if isinstance(item, Reply):
                        self._settle(gen, item)
                        if cache is not None and not item.refused and item.content and not gen.error:
                            cache.put(key, client.url, s.model, item)
                    else:
                        yield item
        finally:
            if cache is not None:
                cache.close()

    def _settle(self, gen: Generation, reply: Any) -> None:
        s = self.spec
        gen.finish_reason = reply.finish_reason
        gen.tokens_in, gen.tokens_out, gen.usage_estimated = reply.tokens_in, reply.tokens_out, reply.usage_estimated
        gen.cost = 0.0 if gen.cached else round(reply.tokens_in * s.price_input / 1e6
                                                + reply.tokens_out * s.price_output / 1e6, 9)
        if reply.refused:
            gen.error = "refused"


# --- the registry ------------------------------------------------------------------------------------------------

#: the kinds of arena model: ``kind`` in ``arena.models`` -> a builder ``(spec, root=..., **options) -> Endpoint``
ENDPOINT_KINDS: Registry[Callable[..., Endpoint]] = Registry("arena model kind", "arena.models[].kind",
                                                             error=HumevalError)
ENDPOINT_KINDS.add("recorded", RecordedEndpoint,
                   summary="answers each prompt from a table of recorded outputs (JSONL/CSV), optionally streamed "
                           "in timed pieces")
ENDPOINT_KINDS.add("openai", OpenAIEndpoint,
                   summary="an OpenAI-compatible chat endpoint, streamed (key from the environment, retries, "
                           "Retry-After, ledger, cache)")
ENDPOINT_KINDS.add("local", OpenAIEndpoint,
                   summary="the model of `humeval local-model` on this machine (an OpenAI-compatible endpoint "
                           "at 127.0.0.1:8100, no key)")

_OPTIONS = {"recorded": ("sleep",), "openai": ("ledger", "transport", "sleep"), "local": ("ledger", "transport", "sleep")}


def build_endpoints(spec: Any, *, root: Path | str = ".", **options: Any) -> dict[str, Endpoint]:
    """The endpoints of ``spec``, by model name: ``spec`` is the protocol's arena section (anything with a
    ``models`` attribute), a list of model specs, or a list of mappings (checked by
    :func:`humeval.protocol.arena.parse_models`). ``root``: the study folder the specs' paths are relative to;
    ``options``: passed to the kinds that take them (``ledger``, ``transport``, ``sleep``). A recorded table is
    read here, so a missing file or model fails before the arena opens."""
    models = getattr(spec, "models", spec)
    if isinstance(models, list | tuple):
        models = [m.model_dump() if hasattr(m, "model_dump") else m for m in models]
    checked = parse_models(models)
    out: dict[str, Endpoint] = {}
    for model in checked:
        build = ENDPOINT_KINDS.get(model.kind)
        taken = {k: v for k, v in options.items() if k in _OPTIONS[model.kind]}
        out[model.name] = build(model, root=Path(root), **taken)
    return out


_ = (LocalArenaModel,)  # the local kind's spec: an OpenAIArenaModel subclass, built by OpenAIEndpoint


@dataclass(frozen=True)
class ArenaEndpoints:
    """The endpoints of a protocol file's ``arena`` section, its limits, and the identity words of its models."""

    root: Path
    endpoints: dict[str, Endpoint]
    limits: GenerationLimits
    identity_words: list[str]


def protocol_endpoints(path: Path | str, **options: Any) -> ArenaEndpoints:
    """The endpoints of ``arena.models`` in a protocol file (``humeval.yaml``, or a study folder holding one),
    with ``arena.limits`` and the identity words of ``arena.prompts`` and the models; read from the YAML as it
    is (the section alone is checked), so that a researcher can try the endpoints before the study is complete.
    ``options``: as :func:`build_endpoints`'s."""
    from humeval.arena.prompts import identity_words
    from humeval.errors import ProtocolError
    from humeval.protocol.arena import ArenaPrompts
    from humeval.protocol.load import PROTOCOL_FILE, read_yaml

    file = Path(path)
    file = file / PROTOCOL_FILE if file.is_dir() else file
    data, _ = read_yaml(file)
    arena = data.get("arena") if isinstance(data, dict) else None
    if not isinstance(arena, dict) or "models" not in arena:
        raise ProtocolError(f"{file}: no `arena.models` section (an arena study names its models there; see "
                            "docs/arena.md#models-as-endpoints)")
    try:
        limits = GenerationLimits.model_validate(arena.get("limits") or {})
        rules = ArenaPrompts.model_validate(arena.get("prompts") or {})
    except ValueError as exc:
        raise ProtocolError(f"{file}: arena.limits or arena.prompts: {exc}") from None
    models = parse_models(arena["models"])
    endpoints = build_endpoints(models, root=file.parent, **options)
    return ArenaEndpoints(file.parent, endpoints, limits, identity_words(models, rules.identity_words))


__all__ += ["ArenaEndpoints", "protocol_endpoints"]
