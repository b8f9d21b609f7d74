"""The study protocol (``humeval.yaml``) as frozen pydantic models.

Every field carries a description; ``docs/protocol.md`` lists them all and a test checks
that nothing is left undocumented. ``humeval schema`` prints the JSON Schema.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from functools import reduce
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from humeval.protocol.arena import Arena
from humeval.protocol.platform_kinds import PLATFORM_KINDS, kind_problem, platform_kind, url_entry_kinds
from humeval.tasks import ESA, TASK_TYPES, Likert, Magnitude, RankME, Slider, StandardItem, TwoAFC

__all__ = [
    "ENTRY_ROUTES",
    "ESA",
    "MTURK_CLOSED",
    "PANEL_KINDS",
    "PLATFORM_KINDS",
    "PROTOCOL_VERSION",
    "Analysis",
    "Assignment",
    "AttentionExclusion",
    "Criterion",
    "Crowd",
    "DataSpec",
    "Design",
    "DryRun",
    "ExclusionRule",
    "InconsistentExclusion",
    "Judge",
    "LLMJudge",
    "Likert",
    "Magnitude",
    "MinTimeExclusion",
    "Pairing",
    "Pay",
    "PracticeItem",
    "Platform",
    "Presentation",
    "ProlificSettings",
    "Protocol",
    "RankME",
    "SameSideExclusion",
    "Sampling",
    "Slider",
    "StandardItem",
    "Stopping",
    "StraightLiningExclusion",
    "StudyInfo",
    "TwoAFC",
]

#: the least lease derived from the declared time (seconds): a participant may pause this long and keep their session
MIN_DERIVED_LEASE: Final = 600
#: the lease when the protocol declares no time (``pay.minutes_per_list`` or ``pay.seconds_per_task``)
UNDECLARED_LEASE: Final = 1800

PROTOCOL_VERSION: Final = 1

_T = TypeVar("_T")


def _listed(*values: _T) -> Callable[[], list[_T]]:
    """A default factory of a new list of ``values`` (typed as the field's list, which a lambda is not)."""
    return lambda: list(values)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StudyInfo(_Model):
    """Who and what the study is."""

    name: str = Field(min_length=1, description="Short name of the study (used in file names and reports).")
    description: str = Field("", description="What the study asks and why; copied into the report.")
    seed: int = Field(ge=0, description="Master seed: every random step derives from it and records it.")


class LLMJudge(_Model):
    """How `humeval judge` asks an OpenAI-compatible chat-completions endpoint for the judge's file (see docs/judges.md).

    The key is never in the protocol: it is read from the environment variable `api_key_env`, or from
    `api_key_file`, a file outside the study folder. Everything here is locked with the protocol, and a
    `prompt_file` is locked with the data."""

    base_url: str = Field(pattern=r"^https?://\S+$", description="Root of the OpenAI-compatible API (e.g. `https://api.openai.com/v1`, `http://127.0.0.1:8000/v1` for vLLM, `http://127.0.0.1:11434/v1` for Ollama); requests go to `{base_url}/chat/completions`.")
    model: str = Field(min_length=1, description="The `model` sent with every request.")
    api_key_env: str = Field("", pattern=r"^([A-Za-z_][A-Za-z0-9_]*)?$", description="Environment variable holding the API key (sent as `Authorization: Bearer <key>`); empty with no `api_key_file`: no key (a local server).")
    api_key_file: str = Field("", description="File holding the API key, outside the study folder (refused inside it: the folder is shared and archived); used when `api_key_env` is empty or unset.")
    prompt: str = Field("", description="The prompt template, inline: `{placeholders}` are filled per request (see docs/judges.md); give this or `prompt_file`.")
    prompt_file: str = Field("", description="File holding the prompt template, relative to the study folder; locked and hashed with the data.")
    system: str = Field("", description="A system message sent before the prompt (empty: none).")
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature (0: the most likely answer; with the cache, a re-run repeats it).")
    top_p: float | None = Field(None, gt=0, le=1, description="Nucleus sampling `top_p` (empty: not sent).")
    seed: int | None = Field(None, description="The `seed` sent to endpoints that support it (empty: not sent).")
    max_tokens: int = Field(16, ge=1, le=100_000, description="Most tokens of one answer (`max_tokens`); also the output tokens the budget counts per request.")
    params: dict[str, Any] = Field(default_factory=dict, description="Other request fields sent as given (e.g. `{presence_penalty: 0}`, `{response_format: ...}`); they are part of the cache key.")
    score_min: float | None = Field(None, description="`scores`: lowest valid score; an answer below it is unparseable (empty: no bound).")
    score_max: float | None = Field(None, description="`scores`: highest valid score; an answer above it is unparseable (empty: no bound).")
    swap: Literal["tie", "drop"] = Field("tie", description="`verdicts`: each pair is asked in both orders; when the two answers name different winners, `tie` records a tie and `drop` leaves the pair out.")
    concurrency: int = Field(4, ge=1, le=256, description="Requests in flight at once.")
    timeout: float = Field(60.0, gt=0, le=3600, description="Seconds one attempt may take in all (connecting, sending and reading the whole answer; an endpoint that sends a byte at a time is cut there).")
    run_timeout: float | None = Field(None, gt=0, le=604_800, description="Seconds the whole run of this judge may take (empty: no bound beyond `timeout` and `retries` per request); the answers received by then are cached, so a run again resumes.")
    retries: int = Field(5, ge=0, le=20, description="Retries of one request after a 429, a 5xx, a timeout, a dropped connection or a body that is not chat-completions JSON.")
    backoff: float = Field(1.0, ge=0, le=60, description="Seconds of the first retry's wait (doubled each retry, with jitter); a 429's `Retry-After` is honoured instead (up to 60 s).")
    price_input: float = Field(0.0, ge=0, description="Price of 1M input (prompt) tokens, in `currency`.")
    price_output: float = Field(0.0, ge=0, description="Price of 1M output (completion) tokens, in `currency`.")
    currency: str = Field("USD", pattern=r"^[A-Z]{3}$", description="Currency of the prices (e.g. USD).")

    @model_validator(mode="after")
    def _one_prompt(self) -> LLMJudge:
        taken = sorted(set(self.params) & {"model", "messages", "stream", "n", "temperature", "top_p", "seed", "max_tokens"})
        if taken:
            raise ValueError(f"params: {', '.join(taken)} cannot be set in params (streaming and several choices are not "
                             "read; the others have their own fields)")
        if bool(self.prompt) == bool(self.prompt_file):
            raise ValueError("give the prompt template inline (`prompt`) or in a file (`prompt_file`), exactly one")
        if self.score_min is not None and self.score_max is not None and not self.score_max > self.score_min:
            raise ValueError(f"score_max ({self.score_max}) must be greater than score_min ({self.score_min})")
        return self


class Judge(_Model):
    """Scores an automatic judge (a metric, an LLM judge) gave, read from a file; with `llm`, `humeval judge`
    writes that file by asking an OpenAI-compatible endpoint."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", description="Name the analysis plan uses for this judge (`analysis.judges`).")
    file: str = Field(min_length=1, description="File relative to the study folder (.jsonl, .csv or .parquet); locked and hashed with the data.")
    kind: Literal["scores", "verdicts"] = Field(
        "scores",
        description="`scores`: columns `item_id`, `system`, `score` (one score per output; used for rating criteria); "
        "`verdicts`: columns `item_id`, `system_a`, `system_b`, `winner` (`system_a`'s or `system_b`'s name, or `tie`; used for 2afc criteria).",
    )
    criteria: list[str] = Field(
        default_factory=list,
        description="Criteria the judge stands in for (empty: every criterion its kind fits: ratings for `scores`, 2afc for `verdicts`).",
    )
    llm: LLMJudge | None = Field(
        None,
        description="Ask an LLM for this judge's file with `humeval judge` (endpoint, model, prompt, sampling, retries, prices; see docs/judges.md). Empty: the file is made elsewhere.",
    )


class DataSpec(_Model):
    """Where the system inputs and outputs are and how they are laid out."""

    files: list[str] = Field(
        min_length=1,
        description="Data files relative to the study folder (.jsonl, .csv or .parquet); rows of all files are concatenated.",
    )
    layout: Literal["long", "wide"] = Field(
        "long",
        description="`long`: one row per (item, system); `wide`: one row per item with one output column per system (named in `systems`).",
    )
    item_id: str = Field("item_id", description="Column holding the item id.")
    system: str = Field("system", description="Column holding the system name (long layout).")
    output: str = Field("output", description="Column holding the output text (long layout).")
    input: str | None = Field("input", description="Column holding the system input shown to participants (optional column).")
    references: str | None = Field("references", description="Column holding reference texts (optional column).")
    format: str | None = Field(
        "format",
        description="Column naming each output's format (`text`, `markdown` or `conversation`; optional column): "
        "overrides `presentation.output_format` for that output; an empty cell keeps the study's format.",
    )
    properties: list[str] = Field(
        default_factory=list, description="Item property columns used for stratified sampling and reports."
    )
    judges: list[Judge] = Field(
        default_factory=list,
        description="Automatic judges' scores of the outputs (every item of the data, not only the selected ones), for prediction-powered estimates.",
    )


#: the criterion models, one per task type (:data:`humeval.tasks.TASK_TYPES`), told apart by ``type``
_CRITERIA = tuple(entry.value.model for entry in TASK_TYPES.entries())
if TYPE_CHECKING:  # the same union, spelt out for the type checker in humeval.tasks.registry
    from humeval.tasks.registry import CriterionModel

    Criterion = Annotated[CriterionModel, Field(discriminator="type")]
else:
    Criterion = Annotated[reduce(operator.or_, _CRITERIA), Field(discriminator="type")]
CRITERION_TYPES = TASK_TYPES.names()


class Presentation(_Model):
    """How tasks are shown."""

    setup: Literal["joint", "separate"] = Field(
        "separate", description="`joint`: all criteria in one task; `separate`: one task per criterion."
    )
    randomise_order: bool = Field(True, description="Randomise the display order of outputs per participant (stored with each judgement).")
    show_input: bool = Field(True, description="Show the system input above the outputs.")
    input_heading: str = Field("", max_length=120, description="Heading of the input's card, e.g. `Article` or `Source text` (empty: `Input` in the page's language).")
    input_font: Literal["text", "monospace"] = Field(
        "text", description="Font of the input: `text` (the page's font, for prose such as articles or dialogues) or `monospace` (code, aligned tables)."
    )
    output_labels: list[str] = Field(
        default_factory=list, max_length=26,
        description="Labels of the outputs in display order, e.g. `[Summary A, Summary B]`, or one label for a task that shows one output (`[Summary]`); empty: `Output A`, `Output B`, ... and no label for a single output. Outputs beyond the list keep the default.",
    )
    show_references: bool = Field(False, description="Show the reference texts.")
    instructions: str = Field("", description="Instructions shown before the first task (Markdown-free plain text).")
    consent: str = Field("", description="Consent text a participant must accept before starting (empty: no consent page).")
    title: str = Field("", description="Title shown to participants on every page (empty: none; the study's `name` is internal and never shown).")
    output_format: Literal["text", "markdown", "conversation"] = Field(
        "text",
        description="How outputs are shown: `text` (escaped plain text), `markdown` (CommonMark with tables and "
        "highlighted code, sanitised: raw HTML is shown as text, images are not loaded) or `conversation` "
        "(a JSON list of {role, content} turns shown as a chat). A data column (`data.format`) may override it per output.",
    )
    language: Literal["en", "de", "zh", "ar"] = Field(
        "en",
        description="Language of everything humeval shows participants (buttons, progress, consent and instructions "
        "chrome, errors, completion page): `en`, `de`, `zh` or `ar`; Arabic pages are laid out right to left. "
        "Your own texts (title, consent, instructions, questions) are shown as written.",
    )
    comments: bool = Field(
        False,
        description="Offer an optional free-text comment box on every task (at most 2000 characters): stored with the "
        "judgement, shown escaped on the admin page, exported in the `comment` column, never used by any statistic.",
    )
    highlight_differences: bool = Field(
        False, description="Mark the words that differ between two plain-text outputs shown side by side."
    )


class Pairing(_Model):
    """Pair construction for 2AFC when the two systems' outputs are not aligned by input.

    Each data row is one output with its own item id (the two systems need not share ids);
    outputs of ``systems[0]`` and ``systems[1]`` with equal values of every ``match`` column
    and lengths within ``max_length_difference`` are paired one to one; duplicate outputs are
    dropped first; the order of the pairs and the side each output is shown on are
    randomised (seeded). Each pair becomes an item ``pair-NNNNN`` with one output per system.
    """

    systems: list[str] = Field(min_length=2, max_length=2, description="The two systems whose outputs are paired.")
    match: list[str] = Field(default_factory=list, description="Property columns whose values must be equal within a pair (e.g. the attributes the outputs were generated for).")
    max_length_difference: int = Field(2, ge=0, description="Largest difference in length (whitespace tokens) between the two outputs of a pair.")
    drop_duplicates: bool = Field(True, description="Drop repeated output texts of a system before pairing (the first occurrence is kept).")


def _sampler_enum(schema: dict[str, Any]) -> None:
    """``sampling.method``'s JSON Schema ``enum``: the sampler registry's names, read when the schema is generated
    (loading a protocol imports no registry)."""
    from humeval.sampling.registry import SAMPLERS

    schema["enum"] = list(SAMPLERS.all_names())


def _platform_enum(schema: dict[str, Any]) -> None:
    """``platform.kind``'s JSON Schema ``enum``: the platform registry's names."""
    schema["enum"] = list(PLATFORM_KINDS.all_names())


def _rule_enum(schema: dict[str, Any]) -> None:
    """``stopping.rule``'s JSON Schema ``enum``: the stopping-rule registry's names."""
    from humeval.stopping.registry import RULES

    schema["enum"] = list(RULES.all_names())


class Sampling(_Model):
    """Which items are evaluated (subset selection)."""

    method: str = Field(
        "auto",
        description="Sampler: `auto` (every item at rate 1; below it `stratified` by `data.properties`, or `random` without properties: no method beats random when chosen without the data set it is scored on), `all`, `random`, `stratified`, `systematic`, `heuristic`, `balanced`, `casf`, `8m`, `sm`, `ol`, `casf-faithful` (CASF as the authors' code runs it, to reproduce their paper; up to 5,000 items) (see docs/sampling.md).",
        json_schema_extra=_sampler_enum,
    )
    rate: float = Field(1.0, gt=0, le=1, description="Share of items to select, in (0, 1].")
    params: dict[str, Any] = Field(default_factory=dict, description="Parameters of the sampler (see its documentation).")
    seed: int | None = Field(None, ge=0, description="Seed of the sampler; default: the study seed.")
    pairing: Pairing | None = Field(None, description="Build 2AFC pairs from outputs that are not aligned by input (each output its own item): pair outputs of two systems with matching properties and similar length (see docs/sampling.md).")


def _same_answer(given: Any, valid: Any) -> bool:
    """Whether ``given`` (as a protocol file writes it) is the answer ``valid``: numbers within rounding, text as
    text (YAML's ``A`` or ``"4"`` for the point 4)."""
    if isinstance(given, bool):
        return False
    try:
        return math.isclose(float(given), float(valid), rel_tol=0, abs_tol=1e-9)
    except (TypeError, ValueError):
        return str(given) == str(valid)


class PracticeItem(_Model):
    """One practice item shown before any real task of every list (``design.practice``), with feedback after the
    answer: the answer it expects (when given) and the explanation, in the researcher's own words and language."""

    criterion: str = Field(description="The criterion asked (its type gives the form, as for a real task).")
    input: str = Field("", max_length=20_000, description="The input or source shown above the outputs (empty: none).")
    outputs: list[str] = Field(min_length=1, max_length=10, description="The texts shown, in this order (never shuffled; `A` is the first): one for a one-output type, two for a pair, two or more for a type that shows all outputs.")
    answer: Any = Field(None, description="The answer the feedback calls right: one of the answers an attention check of the criterion may ask for (a pair's `A` or `B`, a Likert point, a slider's minimum, quarters or maximum, ...). Empty: the feedback shows the explanation and judges nothing (e.g. magnitude estimation, where no one number is right).")
    explanation: str = Field(min_length=1, max_length=5_000, description="Shown after the participant answered: why the expected answer is right, or what to look for.")

    def expected(self, criterion: Criterion) -> Any:
        """The answer in the form the criterion's attention checks ask for it (:meth:`TaskType.check_answers`); None
        when the item names none. Raises ValueError when ``answer`` is not one of them."""
        if self.answer is None:
            return None
        valid = criterion.task.check_answers(criterion)
        for v in valid:
            if _same_answer(self.answer, v):
                return v
        raise ValueError(f"{self.answer!r} is not an answer the feedback can judge for criterion {criterion.name!r} "
                         f"({criterion.type}); valid: {', '.join(map(str, valid))}, or leave it empty to show the "
                         "explanation only")

    @field_validator("outputs")
    @classmethod
    def _outputs_not_blank(cls, outputs: list[str]) -> list[str]:
        if any(not text.strip() for text in outputs):
            raise ValueError("a practice item's outputs must not be empty")
        return outputs


class Design(_Model):
    """How items are distributed to participants."""

    judgements_per_item: int = Field(3, ge=1, le=1000, description="Judgements collected per (item, system) or per pair and criterion.")
    items_per_participant: int = Field(20, ge=1, le=100000, description="Tasks in one participant list (excluding attention checks).")
    counterbalancing: Literal["none", "random", "latin-square"] = Field(
        "latin-square",
        description="Order of tasks within lists: `latin-square` rotates positions across lists, `random` shuffles per list, `none` keeps item order.",
    )
    attention_checks: int = Field(0, ge=0, le=100, description="Attention-check tasks inserted into each list.")
    repeated_items: int = Field(0, ge=0, le=100, description="Tasks shown twice in each list to measure consistency.")
    qualification: int = Field(0, ge=0, le=100, description="Attention checks placed at the start of every list, before any real task (the rest of `attention_checks` at seeded random positions, as with 0): the qualification a participant passes (the `attention` rule's `max_failures` on them) before their watched judgements are fed to the stopping rule at once (`stopping.feed: judgement`). At most `attention_checks`.")
    qualification_attempts: int = Field(1, ge=1, le=3, description="Attempts a participant has at each qualification check (`design.qualification`). With 2 (Prolific's policy for comprehension checks), one who answers a qualification check otherwise than it asks is told so at once and answers it again (the page shows it again; the JSON API answers `attempts_left`); the last attempt is the answer judged, and the export's `revision` counts the attempts after the first. An attempt left unused when the participant answers anything after the qualification is given up. 1: one answer, judged as given.")
    practice: list[PracticeItem] = Field(default_factory=list, max_length=20, description="Practice items placed first in every list, before the qualification and every real task, each followed at once by feedback: whether the answer is the one the item names (when it names one), that answer, and the explanation. Stored with the kind `practice`: never analysed, fed to a stopping rule or judged by an exclusion rule; counted in the report (see docs/collection.md, 'Practice').")
    balance: list[str] = Field(
        default_factory=list,
        description="Item property columns (from `data.properties`) for a balanced design: every list holds one item of each combination of their values for each system (or pair), and every output is judged once per round (Thomson & Belz 2025, section 4.1). Needs the same number of selected items in every combination (e.g. `stratified` sampling with `allocation: equal`) and `items_per_participant` = combinations x tasks per item.",
    )

    @model_validator(mode="after")
    def _qualification_within_checks(self) -> Design:
        if self.qualification > self.attention_checks:
            raise ValueError(f"qualification ({self.qualification}) places that many of the list's attention checks first; "
                             f"it must be at most attention_checks ({self.attention_checks})")
        if self.qualification_attempts > 1 and self.qualification == 0:
            raise ValueError(f"qualification_attempts ({self.qualification_attempts}) are attempts at the qualification "
                             "checks, and there are none: set design.qualification (the attention checks placed first) "
                             "or qualification_attempts: 1")
        return self


class Assignment(_Model):
    """The labelling strategy that decides who judges what."""

    strategy: Literal["list", "one", "fixed", "majority", "max3"] = Field(
        "list",
        description="`list`: precomputed participant lists; `one`: one judgement per request from any participant; `fixed`: one participant does all; `majority`: N judgements, majority vote; `max3`: two, a third on disagreement.",
    )
    workers: int = Field(3, ge=1, le=99, description="N for the `majority` strategy (odd).")
    lease_seconds: int | None = Field(None, ge=10, le=7 * 24 * 3600, description="Seconds of inactivity after which a participant's assignment (and, with `stopping`, their session) is reclaimed; they still get their code when they come back. Default: derived from the declared time, twice the minutes per list (`pay.minutes_per_list`, else `pay.seconds_per_task` x the tasks of a list), at least 600; 1800 when no time is declared (see docs/collection.md, 'Pauses').")

    @model_validator(mode="after")
    def _odd_majority(self) -> Assignment:
        if self.strategy == "majority" and self.workers % 2 == 0:
            raise ValueError(f"workers must be odd for the majority strategy, got {self.workers}")
        return self


class ConfirmationWave(_Model):
    """A preregistered confirmation wave (``stopping.drift_check: wave``): after a pair's decision, w more outcomes of the
    same pair collected from the crowd that comes at a preregistered time, never fed to the rule."""

    outcomes: int | None = Field(None, ge=5, le=100_000, description="w, the wave's outcomes (one a judgement of the pair's tasks). Give it, or `late_share` (with `power`) to size it by `humeval.stats.drift.confirmation_wave_size`.")
    late_share: float | None = Field(None, ge=0, lt=0.5, description="The later crowd's share for the decided side that the wave should detect (< 0.5: it prefers the other side); with `power`, sizes w as the smallest wave with that power at `analysis.alpha`.")
    power: float = Field(0.8, gt=0, lt=1, description="The wave's power against `late_share` (only with `late_share`).")
    opens_after_seconds: float = Field(gt=0, le=365 * 24 * 3600, description="When the wave opens: this many seconds after the first participant entered the study (the launch). Set it to the fixed design's collection time (`humeval budget` prints it) so that the wave asks the crowd the fixed design would have ended with. A wave opened before a decision waits for it; one whose time passed at the decision opens at once.")

    @model_validator(mode="after")
    def _one_size(self) -> ConfirmationWave:
        if (self.outcomes is None) == (self.late_share is None):
            raise ValueError("stopping.wave needs exactly one of outcomes (w) or late_share (sized with power), "
                             f"got outcomes={self.outcomes!r}, late_share={self.late_share!r}")
        return self

    def size(self, alpha: float) -> int:
        """w: ``outcomes``, or the smallest wave with ``power`` against ``late_share`` at ``alpha``."""
        if self.outcomes is not None:
            return self.outcomes
        from humeval.stats.drift import confirmation_wave_size

        assert self.late_share is not None  # one of the two (validated)
        return confirmation_wave_size(self.late_share, alpha, self.power)


class Stopping(_Model):
    """The sequential decision rule for pairwise comparisons."""

    rule: str = Field("anytime", description="Stopping rule: `anytime` (recommended), `hoeffding`, ... (see docs/stopping.md).",
                      json_schema_extra=_rule_enum)
    delta: float = Field(0.05, gt=0, lt=0.5, description="Error probability the rule controls, in (0, 0.5).")
    max_judgements: int | None = Field(None, ge=1, description="Horizon: stop collecting after this many aggregated outcomes even without a decision.")
    goal: Literal["pair", "best", "top-k", "ranking"] | None = Field(None, description="What the rule decides: `pair` (which of two systems is better), `best` (the best of K systems), `top-k` (the `top` best systems), `ranking` (the full order); anytime-valid over K systems (pairwise mixture tests, delta split over the pairs; see docs/stopping.md). Empty: `pair` for two systems, `best` for more.")
    top: int | None = Field(None, ge=1, description="k of goal `top-k` (1 <= top < number of systems).")
    pair_choice: Literal["adaptive", "uniform"] = Field("adaptive", description="Goals over K systems with a pool strategy: `adaptive` serves the pair that can end the study soonest (leader vs challengers, with an exploration floor), `uniform` spreads judgements over all pairs.")
    pooling: bool = Field(False, description="Goals `best`, `top-k` and `ranking` over 3 or more systems: decide on the pooled anytime-valid statements (each system's votes against every opponent, virtual duels through common opponents, Davidson's model) instead of the pairs' direct tests, with the fit check that falls back to the direct statements; votes are fed in epochs (`epoch`) whose pairs are chosen before the epoch's votes are seen (see docs/arena.md, 'Pooled goals in serve').")
    epoch: int = Field(200, ge=10, le=1_000_000, description="`pooling: true`: votes of the first epoch and the least of every later one (each holds at least 10 % of the votes before it); the pair weights are set at each epoch's start and the goal is read at its end.")
    systems: list[str] = Field(default_factory=list, description="Goal `pair`: the two systems compared (empty: the study's two systems). Other goals: the systems compared (empty: all of the study's systems).")
    tuned_for: int | None = Field(None, ge=10, le=10_000_000, description="Mixture rules (`anytime`, `mixture`, `normal-mixture`): the number of judgements at which the boundary is tightest, i.e. the effect the rule is tuned for (default: `anytime`/`mixture` Beta(14, 14), `normal-mixture` 1000). Goals over K systems: every pairwise test. `humeval plan` recommends one from a pilot; locked with the protocol, any value keeps the guarantee.")
    in_flight_share: float = Field(0.05, gt=0, le=1, description="Pool strategies: judgements of a watched comparison in flight (leased, or held until their participant is settled) are at most max(min_in_flight, ceil(in_flight_share * n)), n the outcomes fed so far: it bounds what is collected beyond the decision. `list`: that bound minus 1 is added to the allowance that admits sessions (`sessions`; see docs/stopping.md).")
    min_in_flight: int = Field(1, ge=1, le=10000, description="The floor of that bound: how many judgements of a watched comparison may be in flight at the start. Higher collects faster with more participants at once, at the price of more judgements collected but unused at the decision.")
    sessions: int = Field(2, ge=1, le=1000, description="`list` strategy: a participant list is a paid session, admitted whole. A new session of a watched comparison starts while the outcomes admitted but not yet fed stay within the rule's distance to its boundary plus (sessions - 1) lists' worth (plus the in-flight bound): 1 admits only what cannot overshoot the decision, 2 (default) keeps one more session in progress so that a crowd's wall time stays close to the fixed design's; more is faster and pays for more unused judgements. `humeval budget` predicts places, money and wall time for a setting (see docs/stopping.md, 'Sessions').")
    feed: Literal["session", "judgement"] = Field("session", description="`list` strategy: when a participant's watched judgements reach the rule. `session` (default): when their session ends, after every preregistered exclusion rule ran on it. `judgement`: once they passed the qualification (`design.qualification` checks first in every list, judged by the `attention` rule), each watched judgement is fed when it is submitted (a judgement-scope `min-time` decides before feeding); one who fails it is settled at once as excluded. Needs exclusion rules that never take back what was fed: `validate` refuses the others (see docs/stopping.md, 'Live stopping and exclusion').")
    waitlist_seconds: float = Field(600, ge=0, le=24 * 3600, description="`list` strategy: seconds a participant who arrives while the rule admits no session waits for a place instead of being turned away (a launch burst kept): the wait page polls `GET /api/v1/places` and moves on to the study when a place opens; when the time ends it releases them with the platform's route (Prolific: return the study). 0: no waitlist, told at once that no place is open (see docs/stopping.md, 'Sessions').")
    drift_check: Literal["halves", "wave", "none"] = Field("halves", description="Preregistered check that the crowd's preference did not change during collection, run by `analyze` on each decision of a pair. `halves`: the judgements the rule used, split into the first and the second half in the order the rule consumed them, compared by an exact test given the rule's stop (at `analysis.alpha`); it costs nothing at collection time but sees only the judgements the decision used. `wave`: a confirmation wave (`stopping.wave`) of w outcomes collected after the decision at a preregistered time, flagged when it prefers the other side (exact one-sided binomial test at `analysis.alpha`; the halves are reported beside it); it costs the wave's judgements and the wait. A flag qualifies the decision and never changes it. `none` skips it (see docs/stopping.md, 'Whose preference').")
    wave: ConfirmationWave | None = Field(None, description="The confirmation wave of `drift_check: wave`: its size and when it opens (`list` strategy only).")

    @model_validator(mode="after")
    def _wave_with_its_check(self) -> Stopping:
        if (self.drift_check == "wave") != (self.wave is not None):
            raise ValueError("stopping.drift_check: wave needs stopping.wave (its outcomes or late_share, and "
                             "opens_after_seconds), and stopping.wave needs drift_check: wave; got drift_check="
                             f"{self.drift_check!r} and wave {'set' if self.wave is not None else 'not set'}")
        return self


class StraightLiningExclusion(_Model):
    """Exclude a participant who gave the same value to every task."""

    rule: Literal["straight-lining"] = Field(description="Same response for every task of a criterion: for `2afc` the side chosen (always `A`, always `B` or always `tie`, whichever systems were shown), for ratings the value (always the same point).")
    min_tasks: int = Field(5, ge=2, description="Apply only to participants with at least this many tasks.")


class SameSideExclusion(_Model):
    """Exclude a participant who chose the output shown on the same side in (nearly) every pairwise task."""

    rule: Literal["same-side"] = Field(description="The same side (the output shown first, A, or second, B) chosen in the participant's `2afc` tasks, whichever system it showed.")
    min_tasks: int = Field(10, ge=2, description="Apply only to participants with at least this many `2afc` tasks answered A or B (ties and other options do not count). An honest participant with randomised sides picks one side n times with probability about 2 x 0.5^n (0.2 % at 10, 6 % at 5).")
    max_share: float = Field(1.0, gt=0.5, le=1, description="Exclude when the share of the more frequent side among those answers is at least this (1.0: always the same side; 0.9 also excludes 9 of 10).")


class AttentionExclusion(_Model):
    """Exclude a participant who failed attention checks."""

    rule: Literal["attention"] = Field(description="Failed attention checks.")
    max_failures: int = Field(0, ge=0, description="Failures tolerated before exclusion.")


class MinTimeExclusion(_Model):
    """Exclude judgements given faster than a threshold."""

    rule: Literal["min-time"] = Field(description="Completion time below a threshold.")
    seconds: float = Field(gt=0, description="Minimum seconds per task.")
    scope: Literal["judgement", "participant"] = Field("participant", description="Exclude the fast judgements only, or the whole participant when the median is below the threshold.")


class InconsistentExclusion(_Model):
    """Exclude a participant whose answers on repeated tasks disagree."""

    rule: Literal["inconsistent"] = Field(description="Inconsistent answers on repeated tasks.")
    max_difference: float = Field(0.0, ge=0, description="Largest tolerated difference between the two answers (scale units; 0 for choices).")
    max_failures: int = Field(0, ge=0, description="Inconsistent repeats tolerated before exclusion.")


class VoteOutlierExclusion(_Model):
    """Exclude a participant whose pairwise votes a sequential test finds unlike the crowd's Bradley-Terry model."""

    rule: Literal["vote-outlier"] = Field(description="Per pairwise criterion, an e-process per participant of the decisive votes against the Bradley-Terry strengths fitted to every other participant (random voting, one side, a model favoured), valid under continuous monitoring (`humeval.stats.vote_outliers`, docs/analysis.md).")
    alpha: float = Field(0.05, gt=0, lt=1, description="Chance of excluding any honest participant, split over the participants tested (each at alpha / participants).")


class VoteCapExclusion(_Model):
    """Cap the pairwise votes counted per participant."""

    rule: Literal["vote-cap"] = Field(description="A participant's pairwise task judgements after the first `max_votes` (in the order stored) are excluded, per criterion.")
    max_votes: int = Field(ge=1, description="Votes counted per participant and pairwise criterion.")


ExclusionRule = Annotated[
    StraightLiningExclusion | SameSideExclusion | AttentionExclusion | MinTimeExclusion | InconsistentExclusion
    | VoteOutlierExclusion | VoteCapExclusion,
    Field(discriminator="rule"),
]


class Analysis(_Model):
    """The preregistered analysis plan."""

    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level of every test.")
    tests: Literal["auto", "parametric", "nonparametric"] = Field(
        "auto", description="`auto`: Shapiro-Wilk decides parametric (ANOVA, t-tests) or non-parametric (Kruskal-Wallis/Friedman, Wilcoxon)."
    )
    correction: Literal["holm", "bh", "bonferroni", "none"] = Field("holm", description="Multiple-comparison correction for post hoc tests.")
    agreement: list[Literal["krippendorff", "fleiss", "icc"]] = Field(
        default_factory=_listed("krippendorff"), description="Agreement measures to compute."
    )
    agreement_level: Literal["auto", "nominal", "ordinal", "interval", "ratio"] = Field(
        "auto", description="Krippendorff level; `auto` derives it from the criterion type."
    )
    tentative_agreement: float = Field(0.667, ge=-1, le=1, description="Agreement above which conclusions are tentative.")
    reliable_agreement: float = Field(0.8, ge=-1, le=1, description="Agreement above which results are deemed reliable.")
    rankings: list[Literal["mean", "bootstrap", "bradley-terry", "style-controlled", "trueskill", "elo"]] = Field(
        default_factory=_listed("mean"),
        description="Ranking methods to report; `style-controlled` (pairwise criteria): Bradley-Terry on the decisive "
                    "votes with answer length and Markdown features as covariates (docs/analysis.md)."
    )
    bootstrap: int = Field(1000, ge=100, le=100000, description="Bootstrap resamples for confidence intervals.")
    log_magnitude: bool = Field(True, description="Log-transform magnitude-estimation scores before averaging and ICC.")
    criteria: list[str] = Field(default_factory=list, description="Criteria analysed (empty: all).")
    judges: list[str] = Field(
        default_factory=list,
        description="Judges (names from `data.judges`) whose scores give prediction-powered estimates beside the human-only ones.",
    )


class DryRun(_Model):
    """Dummy responses for rehearsing the pipeline."""

    static: dict[str, float] = Field(default_factory=dict, description="Fixed score per system for `static` and the mean of `normal` dummy responses (default: evenly spaced).")
    sd: float = Field(1.0, gt=0, description="Standard deviation of `normal` dummy responses.")


#: the kinds whose participants arrive through the platform's URL parameters
PANEL_KINDS = url_entry_kinds()
ENTRY_ROUTES = ("platform", "invite", "open")
MTURK_CLOSED = (
    "Amazon Mechanical Turk closed on 2026-09-30 and no longer serves HITs: recruit on `prolific`, "
    "`connect` (CloudResearch Connect), `sona` or a generic URL-parameter `panel` instead. Results of old "
    "MTurk batches still import into a study of kind `files` (`humeval import DIR mturk FILE`; set "
    "`platform.source` to say where they were collected); see docs/panels.md"
)

REJECTION_CATEGORIES = (
    "TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK", "LOW_EFFORT",
    "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER",
)
#: the rejection category each exclusion rule maps to unless ``rejection_categories`` says otherwise
DEFAULT_REJECTION_CATEGORIES = {"attention": "FAILED_CHECK", "min-time": "TOO_QUICKLY",
                                "straight-lining": "LOW_EFFORT", "same-side": "LOW_EFFORT", "inconsistent": "LOW_EFFORT",
                                "vote-outlier": "LOW_EFFORT"}
ExclusionRuleName = Literal["attention", "min-time", "straight-lining", "same-side", "inconsistent", "vote-outlier"]


#: fields of ``platform.prolific`` that the ``pay`` section now holds (old protocols get a pointer, not a bare "extra field")
_MOVED_TO_PAY = {"currency": "currency", "hourly_pay": "hourly", "minimum_hourly_pay": "minimum_hourly",
                 "estimated_minutes": "minutes_per_list", "extra_minutes": "extra_minutes", "pilot": "pilot"}


class ProlificSettings(_Model):
    """A study on Prolific through its API (``humeval prolific``; see docs/prolific.md)."""

    study_url: str = Field("", description="Public address of `humeval serve` (https://...); Prolific sends participants there with PROLIFIC_PID, STUDY_ID and SESSION_ID.")
    title: str = Field("", description="Title shown to participants on Prolific (default: the study name).")
    description: str = Field("", description="Description shown to participants on Prolific (default: the study description).")
    bonus: float = Field(0.0, ge=0, description="Bonus per approved participant, in the workspace currency, paid by `humeval prolific bonus` (0: none).")
    reject: list[ExclusionRuleName] = Field(default_factory=_listed("attention"), description="Exclusion rules whose excluded participants `humeval prolific review` rejects; other excluded participants are approved and only left out of the analysis.")
    rejection_categories: dict[str, str] = Field(default_factory=dict, description="Prolific rejection category per exclusion rule (defaults: attention FAILED_CHECK, min-time TOO_QUICKLY, straight-lining, same-side and inconsistent LOW_EFFORT).")
    filters: list[dict[str, Any]] = Field(default_factory=list, description="Prolific screeners, passed as given: `{filter_id, selected_values}` or `{filter_id, selected_range}`.")
    exclude_groups: list[str] = Field(default_factory=list, description="Prolific participant group ids whose members may not take part (earlier waves).")
    completed_group: str = Field("", description="Prolific participant group id every participant who completes is added to, so a later wave can exclude it.")
    devices: list[Literal["desktop", "tablet", "mobile"]] = Field(default_factory=_listed("desktop"), description="Devices participants may use.")
    screenout_reward: float = Field(0.0, ge=0, description="Fixed payment, in the workspace currency, that Prolific pays by itself to a participant who submits `platform.screenout_code` (a `FIXED_SCREENOUT` code with the `FIXED_SCREEN_OUT_PAYMENT` action; below the reward per list). 0: that code is a `FAILED_ATTENTION_CHECK` code reviewed by `humeval prolific review`.")
    screenout_places: int = Field(0, ge=0, description="Most participants Prolific screens out with `screenout_reward` (its `slots`; Prolific pauses the study when they are used). 0: one per participant list.")

    @model_validator(mode="before")
    @classmethod
    def _moved_to_pay(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for old, new in _MOVED_TO_PAY.items():
                if old in data:
                    raise ValueError(f"platform.prolific.{old} moved to pay.{new} (one pay section for every platform; "
                                     "see docs/budget.md)")
        return data

    @model_validator(mode="after")
    def _categories(self) -> ProlificSettings:
        for rule, category in self.rejection_categories.items():
            if rule not in DEFAULT_REJECTION_CATEGORIES:
                raise ValueError(f"rejection_categories: unknown exclusion rule {rule!r}; expected one of {', '.join(DEFAULT_REJECTION_CATEGORIES)}")
            if category not in REJECTION_CATEGORIES:
                raise ValueError(f"rejection_categories.{rule}: unknown Prolific category {category!r}; expected one of {', '.join(REJECTION_CATEGORIES)}")
        return self

    def rejection_category(self, rule: str) -> str:
        """The Prolific rejection category of a participant excluded by ``rule``."""
        return self.rejection_categories.get(rule, DEFAULT_REJECTION_CATEGORIES.get(rule, "OTHER"))


class Platform(_Model):
    """Where participants come from and how they may enter the study."""

    kind: str = Field(
        "local",
        description="; ".join(f"`{e.name}`: {e.summary}" for e in PLATFORM_KINDS.entries())
        + ". `mturk` is refused: MTurk closed on 2026-09-30 (see docs/panels.md).",
        json_schema_extra=_platform_enum,
    )
    entry: list[Literal["platform", "invite", "open"]] = Field(
        default_factory=list,
        description="Entry routes the server accepts: `platform` (the platform's URL parameters), `invite` (signed "
        "invite links from `POST /api/v1/admin/invites`), `open` (any participant id, or none: anyone with the link). "
        "Empty: `[platform]` for prolific/connect/sona/panel, `[open]` for local. A participant always re-enters "
        "through the route of their first entry: an invited participant cannot be entered by id alone.",
    )
    id_parameter: str = Field(
        "",
        pattern=r"^([A-Za-z][A-Za-z0-9_]{0,63})?$",
        description="`panel`: the URL parameter carrying the participant id (e.g. `pid` for `?pid=...`).",
    )
    completion_code: str = Field("", description="Completion code shown at the end (Prolific, Connect).")
    completion_url: str = Field(
        "",
        pattern=r"^(https?://\S+)?$",
        description="URL a participant is sent to at the end. Prolific: built from the code when empty. SONA: the "
        "client-side completion URL (`webstudy_credit.aspx?...&survey_code=XXXX`); humeval puts the participant's "
        "code in `survey_code`. `panel`: `{participant_id}` in the URL is replaced by the participant's id.",
    )
    screenout_code: str = Field("", description="Code shown instead of the completion code to a participant who failed the attention checks (the `attention` exclusion rule).")
    screenout_url: str = Field(
        "",
        pattern=r"^(https?://\S+)?$",
        description="URL a participant who failed the attention checks is sent to instead of `completion_url` "
        "(Prolific: built from `screenout_code` when empty). Empty: they get the completion link.",
    )
    return_url: str = Field(
        "",
        pattern=r"^(https?://\S+)?$",
        description="Where a participant who declines consent is sent back to (e.g. a Prolific completion link with a "
        "no-consent code); empty: the page asks them to return the study on their platform.",
    )
    source: str = Field("", description="`files`: where the judgements were collected, for the report (e.g. `Amazon Mechanical Turk, 2019`).")
    reward: float = Field(0.0, ge=0, description="Payment per participant list, in the platform's currency.")
    prolific: ProlificSettings = Field(default_factory=ProlificSettings, description="Prolific API settings (`humeval prolific`).")

    @field_validator("kind", mode="before")
    @classmethod
    def _not_mturk(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() == "mturk":
            raise ValueError(MTURK_CLOSED)
        if isinstance(value, str) and (problem := kind_problem(value)):
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _routes_fit(self) -> Platform:
        if len(set(self.entry)) != len(self.entry):
            raise ValueError(f"entry lists a route twice: {self.entry}")
        if "platform" in self.entry and self.kind not in PANEL_KINDS:
            raise ValueError(f"entry: `platform` needs a platform kind ({', '.join(PANEL_KINDS)}), not `{self.kind}`")
        if self.kind == "panel" and not self.id_parameter:
            raise ValueError("a `panel` names the URL parameter carrying the participant id in `id_parameter`")
        if self.id_parameter and self.kind != "panel":
            raise ValueError(f"id_parameter is for kind `panel` only (the {self.kind} parameters are fixed)")
        if self.kind == "files" and self.entry:
            raise ValueError("a `files` study is not served: leave `entry` empty")
        return self

    @property
    def routes(self) -> tuple[str, ...]:
        """The entry routes accepted (``entry``, or the kind's default)."""
        if self.entry:
            return tuple(self.entry)
        if self.kind in PANEL_KINDS:
            return ("platform",)
        return () if self.kind == "files" else ("open",)


class Pay(_Model):
    """What participants are paid, and the floor the pay must reach (checked by `humeval budget`)."""

    currency: Literal["GBP", "USD", "EUR"] = Field("GBP", description="Currency of the reward, the hourly pay and the fee.")
    hourly: float | None = Field(None, gt=0, description="Pay per hour; the reward per list is hourly x the estimated minutes / 60 (default: `platform.reward` per list).")
    minimum_hourly: float | None = Field(None, gt=0, description="Lowest acceptable pay per hour (default on Prolific: its enforced minimum, 6.00 GBP / 8.00 USD; elsewhere none unless declared; see docs/budget.md).")
    fee_rate: float | None = Field(None, ge=0, le=5, description="Platform service fee as a share of the rewards (default on Prolific: its published platform fee, 0.428; academic and non-profit workspaces pay 0.333; elsewhere 0; see docs/budget.md).")
    minutes_per_list: float | None = Field(None, gt=0, description="Estimated minutes one participant needs for a list (default: measured from a rehearsal or the judgements given).")
    seconds_per_task: float | None = Field(None, gt=0, description="Declared seconds per task (when minutes_per_list is not given): a list is never priced below it; a measured median (pilot, export or rehearsal) above it is used instead.")
    extra_minutes: float = Field(0.0, ge=0, le=120, description="Minutes added to an estimate from seconds per task (measured or declared) for consent, instructions and the completion page.")
    pilot: str = Field("", description="Judgements file of a pilot (relative to the study folder, any file `humeval plan` reads): its median seconds per task estimate the time, and with dynamic stopping it fits the simulator that predicts the judgements.")


class Crowd(_Model):
    """How participants arrive, for planning dynamic stopping in places, money and wall time, and how places open."""

    arrivals_per_hour: float | None = Field(None, gt=0, le=100_000, description="Participants who start the study per hour while places are open (planning only: `humeval budget` predicts wall time from it; a pilot or an earlier study on the same platform tells it).")
    wave: int = Field(1, ge=1, le=10_000, description="Prolific: places are opened in waves of at least this many (the stopping rule's wanted sessions, rounded up), so that a study is not re-published for every place.")


class Protocol(_Model):
    """A whole study, declared in advance."""

    version: Literal[1] = Field(PROTOCOL_VERSION, description="Protocol file format version.")
    study: StudyInfo = Field(description="Name, description and master seed.")
    data: DataSpec = Field(description="System inputs and outputs.")
    systems: list[str] = Field(default_factory=list, description="Systems evaluated (empty: every system in the data; required for the wide layout).")
    criteria: list[Criterion] = Field(min_length=1, description="Quality criteria and their response types.")
    presentation: Presentation = Field(default_factory=Presentation, description="How tasks are shown.")
    sampling: Sampling = Field(default_factory=Sampling, description="Subset selection.")
    design: Design = Field(default_factory=Design, description="Participant lists.")
    assignment: Assignment = Field(default_factory=Assignment, description="Labelling strategy.")
    stopping: Stopping | None = Field(None, description="Dynamic stopping for pairwise (2afc) criteria.")
    exclusion: list[ExclusionRule] = Field(default_factory=list, description="Preregistered exclusion rules.")
    analysis: Analysis = Field(default_factory=Analysis, description="Preregistered analysis plan.")
    dry_run: DryRun = Field(default_factory=DryRun, description="Dummy responses for rehearsals.")
    platform: Platform = Field(default_factory=Platform, description="Participant source.")
    pay: Pay = Field(default_factory=Pay, description="Participant pay, the minimum hourly pay and the platform fee (see docs/budget.md).")
    crowd: Crowd = Field(default_factory=Crowd, description="How participants arrive and how places open (dynamic stopping plans sessions from it; see docs/stopping.md, 'Sessions').")
    arena: Arena | None = Field(None, description="An arena study: the models that answer the prompts, the prompts, the limits on one answer and the reveal after the vote (see docs/arena.md); its criteria are `battle`s.")

    @model_validator(mode="after")
    def _wave_on_lists(self) -> Protocol:
        if self.stopping is not None and self.stopping.wave is not None and self.assignment.strategy != "list":
            raise ValueError(f"stopping.wave: a confirmation wave is collected in participant lists (assignment.strategy: "
                             f"list); got strategy {self.assignment.strategy!r}. Use drift_check: halves with a pool "
                             "strategy")
        if self.stopping is not None and self.stopping.wave is not None and self.stopping.goal not in (None, "pair"):
            raise ValueError(f"stopping.wave: a confirmation wave checks the decision of a pair; goal "
                             f"{self.stopping.goal!r} decides over K systems. Use drift_check: none or halves")
        return self

    @model_validator(mode="after")
    def _practice_fits(self) -> Protocol:
        if self.design.practice and self.assignment.strategy != "list":
            raise ValueError(f"design.practice: practice items open every participant list (assignment.strategy: "
                             f"list); strategy {self.assignment.strategy!r} serves tasks one at a time. Use "
                             "strategy: list, or remove design.practice")
        names = [c.name for c in self.criteria]
        for i, item in enumerate(self.design.practice):
            where = f"design.practice[{i}]"
            if item.criterion not in names:
                raise ValueError(f"{where}.criterion: no criterion {item.criterion!r}; valid: {', '.join(names)}")
            c = self.criterion(item.criterion)
            family, n = c.task.family, len(item.outputs)
            wanted = {"single": n == 1, "pair": n == 2}.get(family, n >= 2)
            if not wanted:
                need = {"single": "1 output", "pair": "2 outputs"}.get(family, "2 outputs or more")
                raise ValueError(f"{where}.outputs: criterion {c.name!r} ({c.type}) shows {need}; got {n}")
            try:
                item.expected(c)
            except ValueError as exc:
                raise ValueError(f"{where}.answer: {exc}") from None
        return self

    @model_validator(mode="after")
    def _platform_currency(self) -> Protocol:
        facts = platform_kind(self.platform.kind)
        if facts.currencies and self.pay.currency not in facts.currencies:
            raise ValueError(f"pay.currency: {facts.title} pays in {' or '.join(facts.currencies)}, got {self.pay.currency!r}")
        return self

    def criterion(self, name: str) -> Criterion:
        """The criterion called ``name``."""
        for c in self.criteria:
            if c.name == name:
                return c
        from humeval.errors import ProtocolError, did_you_mean

        raise ProtocolError(f"criteria: no criterion '{name}'. {did_you_mean(name, [c.name for c in self.criteria])}")

    def lease(self, tasks_per_list: int | None = None) -> int:
        """Seconds of inactivity before a lease is reclaimed: ``assignment.lease_seconds`` when given, else twice the
        declared minutes per list (``pay.minutes_per_list``, else ``pay.seconds_per_task`` x ``tasks_per_list``,
        by default the design's items and checks per list), at least :data:`MIN_DERIVED_LEASE`; without a declared
        time :data:`UNDECLARED_LEASE`."""
        if self.assignment.lease_seconds is not None:
            return self.assignment.lease_seconds
        d = self.design
        tasks = tasks_per_list or d.items_per_participant + d.attention_checks + len(d.practice)
        if self.pay.minutes_per_list is not None:
            seconds = 60 * self.pay.minutes_per_list
        elif self.pay.seconds_per_task is not None:
            seconds = self.pay.seconds_per_task * tasks
        else:
            return UNDECLARED_LEASE
        return min(7 * 24 * 3600, max(MIN_DERIVED_LEASE, math.ceil(2 * seconds)))

    @property
    def pairwise(self) -> bool:
        """Whether the study compares outputs in pairs (any pairwise criterion, e.g. ``2afc``)."""
        return any(c.task.pairwise for c in self.criteria)
