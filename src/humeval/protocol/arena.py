"""The models of an arena study (``arena.models``) and the limits on one generation, as frozen pydantic models.

An arena names its models; each is one *kind* of endpoint (:data:`MODEL_KINDS`, the registry
:data:`humeval.arena.models.ENDPOINT_KINDS` builds them):

* ``recorded``: answers each prompt from a table of recorded outputs (rehearsals, tests, demos);
* ``openai``: an OpenAI-compatible chat-completions endpoint, streamed; the key is never in the protocol, it is
  read from the environment variable named by ``key_env`` (or ``key_file``, outside the study folder);
* ``local``: the model that ``humeval local-model`` serves on this machine (an ``openai`` endpoint at
  ``http://127.0.0.1:8100/v1`` with no key and no price).

This module depends on pydantic and :mod:`humeval.errors` only, so that the protocol can hold an arena section
without importing the endpoints' HTTP code. :func:`parse_models` checks a list of model specs and reports every
problem with its path; :func:`models_schema` is the JSON Schema of the list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from humeval.errors import ProtocolError

__all__ = ["MODEL_KINDS", "Arena", "ArenaModel", "GenerationLimits", "LocalArenaModel", "OpenAIArenaModel",
           "RecordedArenaModel", "models_schema", "parse_models"]

#: the kinds of arena model, as ``kind`` names them
MODEL_KINDS = ("recorded", "openai", "local")
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,127}$"

#: names of models and makers an answer must not use, beside those derived from the arena's models (the
#: identity filter; matched as whole words, case-insensitive)
IDENTITY_WORDS = ("ChatGPT", "GPT-3", "GPT-3.5", "GPT-4", "GPT-4o", "OpenAI", "Claude", "Anthropic", "Llama",
                  "Meta AI", "Meta", "Gemini", "Bard", "PaLM", "Gemma", "Google", "DeepMind", "Mistral", "Mixtral",
                  "Qwen", "Alibaba", "DeepSeek", "Cohere", "Command R", "Phi-3", "Microsoft", "Vicuna", "LMSYS",
                  "Grok", "xAI", "Yi-Large", "01.AI", "Zhipu", "ChatGLM", "Falcon", "Hugging Face", "SmolLM")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GenerationLimits(_Model):
    """Bounds on one generation. A generation that breaks one fails (:class:`humeval.arena.models.GenerationError`):
    it is never shown as a battle and never counted."""

    first_token_seconds: float = Field(20.0, gt=0, le=600, description="Seconds from the request to the first piece of the answer (retries of a 429 or a 5xx included); later: the generation fails (`first_token_timeout`).")
    total_seconds: float = Field(120.0, gt=0, le=3600, description="Seconds the whole answer may take; later: the generation fails (`timeout`).")
    max_tokens: int = Field(1024, ge=1, le=100_000, description="`max_tokens` sent to the endpoint (a recorded answer has no tokens: `max_chars` bounds it).")
    max_chars: int = Field(16_000, ge=1, le=4_000_000, description="Most characters of one answer; a longer answer fails (`too_long`) as soon as it passes the bound.")
    min_chars: int = Field(1, ge=1, le=10_000, description="Fewest characters of an answer, surrounding white space not counted; a shorter one fails (`empty`).")
    cut: Literal["drop", "keep"] = Field("drop", description="An answer the endpoint stopped at `max_tokens` (`finish_reason: length`): `drop` fails it (`too_long`: a cut answer loses votes for being cut), `keep` shows it.")

    @model_validator(mode="after")
    def _times(self) -> GenerationLimits:
        if self.first_token_seconds > self.total_seconds:
            raise ValueError(f"first_token_seconds ({self.first_token_seconds:g}) must be at most total_seconds "
                             f"({self.total_seconds:g})")
        if self.min_chars > self.max_chars:
            raise ValueError(f"min_chars ({self.min_chars}) must be at most max_chars ({self.max_chars})")
        return self


class _ArenaModelBase(_Model):
    name: str = Field(pattern=_NAME, description="The model's name in the arena (votes, leaderboard, reveal); unique among `arena.models`.")
    maker: str = Field("", description="Who made the model (e.g. `OpenAI`); an answer naming it is caught by the identity filter.")
    aliases: list[str] = Field(default_factory=list, description="Other names of the model or its maker that an answer may use (e.g. `ChatGPT`); caught by the identity filter.")
    limits: GenerationLimits | None = Field(None, description="This model's own limits (empty: the arena's).")


class RecordedArenaModel(_ArenaModelBase):
    """A model that answers from a table of recorded outputs: one row per (model, prompt), JSONL or CSV."""

    kind: Literal["recorded"] = Field(description="`recorded`: answers from a table of recorded outputs.")
    table: str = Field(min_length=1, description="File of recorded outputs (.jsonl or .csv), relative to the study folder.")
    model: str = Field("", description="This model's value in the table's model column (empty: `name`).")
    model_column: str = Field("model", min_length=1, description="The table's column naming the model.")
    prompt_column: str = Field("prompt", min_length=1, description="The table's column holding the prompt: its text, or its id in `prompts`.")
    output_column: str = Field("output", min_length=1, description="The table's column holding the recorded answer.")
    prompts: str = Field("", description="File of prompts (.jsonl or .csv: `id`, `text`) that maps the table's prompt ids to texts (empty: the prompt column holds the text).")
    chunk_chars: int = Field(0, ge=0, le=100_000, description="Simulated streaming: the answer in pieces of this many characters (0: all at once).")
    chunk_seconds: float = Field(0.0, ge=0, le=60, description="Simulated streaming: seconds between pieces.")
    first_token_delay: float = Field(0.0, ge=0, le=600, description="Simulated latency: seconds before the first piece.")


class OpenAIArenaModel(_ArenaModelBase):
    """A model behind an OpenAI-compatible chat-completions endpoint, asked with `stream: true`."""

    kind: Literal["openai"] = Field(description="`openai`: an OpenAI-compatible chat-completions endpoint, streamed.")
    url: str = Field(pattern=r"^https?://\S+$", description="Root of the OpenAI-compatible API (e.g. `https://api.openai.com/v1`); requests go to `{url}/chat/completions`.")
    model: str = Field(min_length=1, description="The `model` sent with every request.")
    key_env: str = Field("", pattern=r"^([A-Za-z_][A-Za-z0-9_]*)?$", description="Environment variable holding the API key (sent as `Authorization: Bearer <key>`); empty with no `key_file`: no key.")
    key_file: str = Field("", description="File holding the API key, outside the study folder; used when `key_env` is empty or unset.")
    system: str = Field("", description="A system message sent before the prompt (empty: none).")
    temperature: float = Field(0.7, ge=0, le=2, description="Sampling temperature.")
    top_p: float | None = Field(None, gt=0, le=1, description="Nucleus sampling `top_p` (empty: not sent).")
    seed: int | None = Field(None, description="The `seed` sent to endpoints that support it (empty: not sent).")
    params: dict[str, Any] = Field(default_factory=dict, description="Other request fields sent as given (e.g. `{presence_penalty: 0}`); part of the cache key.")
    stream_usage: bool = Field(True, description="Ask for the token counts in the stream (`stream_options: {include_usage: true}`); false for a server that refuses the field (the counts are then estimated from the text).")
    cache: bool = Field(False, description="Keep each answer by its request (`.humeval/arena-cache.sqlite`): the same prompt gets the same answer again, without a request (true for rehearsals; false: a fresh sample each battle).")
    timeout: float = Field(60.0, gt=0, le=3600, description="Seconds the HTTP client waits to connect or for the next bytes (the limits bound the whole answer).")
    retries: int = Field(3, ge=0, le=20, description="Retries after a 429, a 5xx, a timeout, a dropped connection or a body that is not a chat-completion stream, while no piece of the answer has arrived (within `first_token_seconds`).")
    backoff: float = Field(0.5, ge=0, le=60, description="Seconds of the first retry's wait (doubled each retry, with jitter); a 429's `Retry-After` is honoured instead (up to 60 s); a wait that would end after `limits.first_token_seconds` fails the generation at once.")
    price_input: float = Field(0.0, ge=0, description="Price of 1M input (prompt) tokens, in `currency`.")
    price_output: float = Field(0.0, ge=0, description="Price of 1M output (completion) tokens, in `currency`.")
    currency: str = Field("USD", pattern=r"^[A-Z]{3}$", description="Currency of the prices.")

    @model_validator(mode="after")
    def _params(self) -> OpenAIArenaModel:
        taken = sorted(set(self.params) & {"model", "messages", "stream", "stream_options", "n", "temperature",
                                           "top_p", "seed", "max_tokens", "max_completion_tokens"})
        if taken:
            raise ValueError(f"params: {', '.join(taken)} cannot be set in params (they have their own fields, or "
                             "the arena sets them: one streamed choice, `limits.max_tokens`)")
        return self


class LocalArenaModel(OpenAIArenaModel):
    """The model `humeval local-model` serves on this machine: an `openai` endpoint with no key and no price."""

    kind: Literal["local"] = Field(description="`local`: the model of `humeval local-model` (docs/local-model.md).")  # type: ignore[assignment]
    url: str = Field("http://127.0.0.1:8100/v1", pattern=r"^https?://\S+$", description="Root of the local server's API (`humeval local-model --port`).")
    model: str = Field("local", min_length=1, description="The `model` sent (the local server serves one model and ignores it).")

    @model_validator(mode="after")
    def _no_key(self) -> LocalArenaModel:
        if self.key_env or self.key_file or self.price_input or self.price_output:
            raise ValueError("a `local` model has no key and no price (use kind `openai` for a paid endpoint)")
        return self


class ArenaPrompts(_Model):
    """Where an arena's prompts come from, and what a prompt may be (see docs/arena.md#prompts); a string is the
    short form of `{file: ...}`. With no file and no typed prompts, the caller supplies them (the data's items)."""

    file: str = Field("", description="File of prompts, relative to the study folder: .jsonl or .csv (`text` or `prompt`, optional `id`) or .txt (one prompt a line); empty: typed prompts only.")
    typed: bool = Field(False, description="Participants may type their own prompt.")
    min_chars: int = Field(2, ge=1, le=10_000, description="Fewest characters of a prompt (surrounding white space not counted).")
    max_chars: int = Field(4000, ge=1, le=100_000, description="Most characters of a prompt.")
    blocklist: list[str] = Field(default_factory=list, description="Words or phrases a prompt may not contain (whole words, case-insensitive, after Unicode NFKC normalisation).")
    blocklist_regex: list[str] = Field(default_factory=list, description="Regular expressions (Python `re`, case-insensitive) a prompt may not match.")
    max_repeats: int = Field(3, ge=1, le=1_000_000, description="A typed prompt is used at most this many times (by its normalised text: case, accents, punctuation and white space ignored); after that, `repeats` applies.")
    repeats: Literal["file", "refuse"] = Field("file", description="A typed prompt used `max_repeats` times already: `file` serves a prompt from `file` instead (refused when there is no file), `refuse` asks for another.")
    identity_words: list[str] = Field(default_factory=lambda: list(IDENTITY_WORDS), description="Names of models and makers that drop a battle when an answer (or, with `identity_in_prompt`, the prompt) uses one; the arena's model names, API names, makers and aliases are added.")
    identity_in_prompt: bool = Field(True, description="The identity filter reads the prompt too (a prompt that names a model drops its battle, as Chatbot Arena's cleaning does).")

    @model_validator(mode="before")
    @classmethod
    def _file_only(cls, data: Any) -> Any:
        return {"file": data} if isinstance(data, str) else data  # `prompts: FILE`, the short form

    @model_validator(mode="after")
    def _rules(self) -> ArenaPrompts:
        import re

        if self.min_chars > self.max_chars:
            raise ValueError(f"min_chars ({self.min_chars}) must be at most max_chars ({self.max_chars})")
        for i, pattern in enumerate(self.blocklist_regex):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"blocklist_regex[{i}]: {pattern!r} is not a regular expression ({exc})") from None
        empty = [i for i, w in enumerate([*self.blocklist, *self.identity_words]) if not w.strip()]
        if empty:
            raise ValueError("blocklist and identity_words: every entry must have a character that is not white space")
        return self


__all__ += ["IDENTITY_WORDS", "ArenaPrompts"]

ArenaModel = Annotated[RecordedArenaModel | OpenAIArenaModel | LocalArenaModel, Field(discriminator="kind")]
_MODELS: TypeAdapter[list[RecordedArenaModel | OpenAIArenaModel | LocalArenaModel]] = TypeAdapter(list[ArenaModel])


def _where(loc: Sequence[Any], where: str) -> str:
    out = where
    for part in loc:
        if part in MODEL_KINDS:  # the discriminator's branch, not a field
            continue
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def parse_models(data: Any, where: str = "arena.models") -> list[RecordedArenaModel | OpenAIArenaModel | LocalArenaModel]:
    """The checked model specs of ``data`` (a list of mappings or of models); :class:`ProtocolError` lists every
    problem with its path (``arena.models[1].url: ...``), and names given twice."""
    if not isinstance(data, list) or not data:
        raise ProtocolError(f"{where}: a non-empty list of models ({{name, kind: {'|'.join(MODEL_KINDS)}, ...}}) "
                            f"is required, got {type(data).__name__}")
    try:
        models = _MODELS.validate_python(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            message = err["msg"].removeprefix("Value error, ")
            if err["type"] == "union_tag_invalid":
                message = f"kind must be one of {', '.join(MODEL_KINDS)} (got {err['input'].get('kind')!r})"
            elif err["type"] == "union_tag_not_found":
                message = f"kind is missing: one of {', '.join(MODEL_KINDS)}"
            problems.append(f"{_where(err['loc'], where)}: {message}")
        raise ProtocolError(f"{where}: {len(problems)} problem(s): " + "; ".join(problems), problems) from None
    seen: dict[str, int] = {}
    for i, m in enumerate(models):
        if m.name in seen:
            raise ProtocolError(f"{where}[{i}].name: {m.name!r} is the name of {where}[{seen[m.name]}] too; "
                                "each model needs its own name")
        seen[m.name] = i
    return models


def models_schema() -> dict[str, Any]:
    """The JSON Schema of ``arena.models`` (a list of models, one of :data:`MODEL_KINDS` each)."""
    return _MODELS.json_schema()


class Arena(_Model):
    """The protocol's ``arena`` section: the models that answer, the prompts they answer, the limits on one answer,
    and whether a battle's models are named after the vote. Its criteria are of type ``battle``."""

    models: list[ArenaModel] = Field(default_factory=list, description="The models that answer each prompt when a battle is served (`recorded`, `openai`, `local`; see docs/arena.md). Empty: the battles show the data's recorded outputs (the systems are the models).")
    prompts: ArenaPrompts = Field(default_factory=ArenaPrompts, description="Where the prompts come from and what a prompt may be (`prompts: FILE` is short for `{file: FILE}`); with no file and no typed prompts, the data's items are the prompts (their `input` the prompt's text).")
    reveal: bool = Field(False, description="Show the two models' names after the vote (the vote is stored first and cannot be changed).")
    limits: GenerationLimits = Field(default_factory=GenerationLimits, description="Bounds on one generation (a model's own `limits` replace them); a generation that breaks one is never shown as a battle and never counted.")

    @model_validator(mode="after")
    def _models(self) -> Arena:
        if len(self.models) == 1:
            raise ValueError(f"models: a battle needs two models, got one ({self.models[0].name!r}); name at least "
                             "two, or none to battle the data's recorded outputs")
        names = [m.name for m in self.models]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"models: {twice[0]!r} is named {names.count(twice[0])} times; each model needs its own "
                             "name")
        return self

    def model(self, name: str) -> RecordedArenaModel | OpenAIArenaModel | LocalArenaModel:
        """The model called ``name``."""
        for m in self.models:
            if m.name == name:
                return m
        from humeval.errors import did_you_mean

        raise ProtocolError(f"arena.models: no model {name!r}. {did_you_mean(name, [m.name for m in self.models])}")

    def limits_of(self, name: str) -> GenerationLimits:
        """The limits on ``name``'s answers: its own, else the arena's."""
        own = self.model(name).limits
        return own if own is not None else self.limits
