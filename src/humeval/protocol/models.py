"""The study protocol (``humeval.yaml``) as frozen pydantic models.

Every field carries a description; ``docs/protocol.md`` lists them all and a test checks
that nothing is left undocumented. ``humeval schema`` prints the JSON Schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "PROTOCOL_VERSION",
    "Analysis",
    "Assignment",
    "AttentionExclusion",
    "Criterion",
    "DataSpec",
    "Design",
    "DryRun",
    "ExclusionRule",
    "InconsistentExclusion",
    "Likert",
    "Magnitude",
    "MinTimeExclusion",
    "Pairing",
    "Pay",
    "Platform",
    "Presentation",
    "Protocol",
    "RankME",
    "Sampling",
    "Slider",
    "StandardItem",
    "Stopping",
    "StraightLiningExclusion",
    "StudyInfo",
    "TwoAFC",
]

PROTOCOL_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StudyInfo(_Model):
    """Who and what the study is."""

    name: str = Field(min_length=1, description="Short name of the study (used in file names and reports).")
    description: str = Field("", description="What the study asks and why; copied into the report.")
    seed: int = Field(ge=0, description="Master seed: every random step derives from it and records it.")


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
    properties: list[str] = Field(
        default_factory=list, description="Item property columns used for stratified sampling and reports."
    )


class StandardItem(_Model):
    """The fixed reference output that magnitude-estimation scores are relative to."""

    text: str = Field(min_length=1, description="Text of the standard output shown on every page.")
    input: str = Field("", description="Input of the standard output (shown when present).")


class _CriterionBase(_Model):
    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]*$", description="Identifier of the criterion (letters, digits, _ and -).")
    question: str = Field(min_length=1, description="The question shown to participants.")
    definition: str = Field("", description="Definition of the quality criterion, shown with the question.")


class TwoAFC(_CriterionBase):
    """Two outputs side by side; the participant chooses the better one."""

    type: Literal["2afc"] = Field(description="Response type: two-alternative forced choice between two outputs.")
    tie: bool = Field(False, description="Offer a 'tie' option.")
    both_good: bool = Field(False, description="Offer a 'both good' option.")
    both_bad: bool = Field(False, description="Offer a 'both bad' option.")

    def options(self) -> list[str]:
        """The response values this criterion accepts."""
        extra = [n for n, on in (("tie", self.tie), ("both-good", self.both_good), ("both-bad", self.both_bad)) if on]
        return ["A", "B", *extra]

    @staticmethod
    def winner(choice: str, first: str, second: str) -> str:
        """What a choice says: the system shown ``first`` for ``A``, ``second`` for ``B``, else the
        choice itself (``tie``, ``both-good``, ``both-bad``). The one definition of the ``2afc``
        winner: :func:`humeval.judgements.winners` is its vectorised form, and the live stopping
        rule counts votes with it."""
        return first if choice == "A" else second if choice == "B" else choice


class Likert(_CriterionBase):
    """A k-point rating scale."""

    type: Literal["likert"] = Field(description="Response type: k-point Likert scale (integers 1..k).")
    points: int = Field(5, ge=2, le=11, description="Number of scale points k (2-11); values are 1..k.")
    labels: list[str] = Field(
        default_factory=list,
        description="Labels: either one per point, or two (the lowest and highest point); empty for numbers only.",
    )

    @model_validator(mode="after")
    def _labels_fit(self) -> Likert:
        if self.labels and len(self.labels) not in (2, self.points):
            raise ValueError(
                f"labels has {len(self.labels)} entries; give 2 (end points) or {self.points} (one per point)"
            )
        return self


class Magnitude(_CriterionBase):
    """A positive number relative to a standard output with a fixed modulus (plain ME)."""

    type: Literal["magnitude"] = Field(description="Response type: magnitude estimation, one output per task.")
    standard: StandardItem = Field(description="The standard output shown on every page.")
    modulus: float = Field(100.0, gt=0, description="The score given to the standard output.")


class RankME(_CriterionBase):
    """Several outputs side by side, each scored relative to the standard (rank-based ME)."""

    type: Literal["rankme"] = Field(description="Response type: rank-based magnitude estimation, all outputs of an item side by side.")
    standard: StandardItem = Field(description="The standard output shown on every page.")
    modulus: float = Field(100.0, gt=0, description="The score given to the standard output.")


class Slider(_CriterionBase):
    """A bounded continuous scale."""

    type: Literal["slider"] = Field(description="Response type: bounded continuous slider.")
    min: float = Field(0.0, description="Lowest value of the slider.")
    max: float = Field(100.0, description="Highest value of the slider.")
    low_label: str = Field("", description="Label shown at the low end.")
    high_label: str = Field("", description="Label shown at the high end.")

    @model_validator(mode="after")
    def _bounds(self) -> Slider:
        if not self.max > self.min:
            raise ValueError(f"max ({self.max}) must be greater than min ({self.min})")
        return self


Criterion = Annotated[TwoAFC | Likert | Magnitude | RankME | Slider, Field(discriminator="type")]
CRITERION_TYPES = ("2afc", "likert", "magnitude", "rankme", "slider")


class Presentation(_Model):
    """How tasks are shown."""

    setup: Literal["joint", "separate"] = Field(
        "separate", description="`joint`: all criteria in one task; `separate`: one task per criterion."
    )
    randomise_order: bool = Field(True, description="Randomise the display order of outputs per participant (stored with each judgement).")
    show_input: bool = Field(True, description="Show the system input above the outputs.")
    show_references: bool = Field(False, description="Show the reference texts.")
    instructions: str = Field("", description="Instructions shown before the first task (Markdown-free plain text).")
    consent: str = Field("", description="Consent text a participant must accept before starting (empty: no consent page).")


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


class Sampling(_Model):
    """Which items are evaluated (subset selection)."""

    method: str = Field(
        "auto",
        description="Sampler: `auto` (every item at rate 1, else the recommended `balanced`), `all`, `random`, `stratified`, `systematic`, `heuristic`, `balanced`, `casf`, `8m`, `sm`, `ol` (see docs/sampling.md).",
    )
    rate: float = Field(1.0, gt=0, le=1, description="Share of items to select, in (0, 1].")
    params: dict[str, Any] = Field(default_factory=dict, description="Parameters of the sampler (see its documentation).")
    seed: int | None = Field(None, ge=0, description="Seed of the sampler; default: the study seed.")
    pairing: Pairing | None = Field(None, description="Build 2AFC pairs from outputs that are not aligned by input (each output its own item): pair outputs of two systems with matching properties and similar length (see docs/sampling.md).")


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
    balance: list[str] = Field(
        default_factory=list,
        description="Item property columns (from `data.properties`) for a balanced design: every list holds one item of each combination of their values for each system (or pair), and every output is judged once per round (Thomson & Belz 2025, section 4.1). Needs the same number of selected items in every combination (e.g. `stratified` sampling with `allocation: equal`) and `items_per_participant` = combinations x tasks per item.",
    )


class Assignment(_Model):
    """The labelling strategy that decides who judges what."""

    strategy: Literal["list", "one", "fixed", "majority", "max3"] = Field(
        "list",
        description="`list`: precomputed participant lists; `one`: one judgement per request from any participant; `fixed`: one participant does all; `majority`: N judgements, majority vote; `max3`: two, a third on disagreement.",
    )
    workers: int = Field(3, ge=1, le=99, description="N for the `majority` strategy (odd).")
    lease_seconds: int = Field(1800, ge=10, le=7 * 24 * 3600, description="Seconds an assignment is reserved for a participant before it is reclaimed.")

    @model_validator(mode="after")
    def _odd_majority(self) -> Assignment:
        if self.strategy == "majority" and self.workers % 2 == 0:
            raise ValueError(f"workers must be odd for the majority strategy, got {self.workers}")
        return self


class Stopping(_Model):
    """The sequential decision rule for pairwise comparisons."""

    rule: str = Field("anytime", description="Stopping rule: `anytime` (recommended), `hoeffding`, ... (see docs/stopping.md).")
    delta: float = Field(0.05, gt=0, lt=0.5, description="Error probability the rule controls, in (0, 0.5).")
    max_judgements: int | None = Field(None, ge=1, description="Horizon: stop collecting after this many aggregated outcomes even without a decision.")
    systems: list[str] = Field(default_factory=list, description="The two systems compared (empty: the study's two systems; live best-of-K identification is not available).")
    in_flight_share: float = Field(0.05, gt=0, le=1, description="Judgements of a watched comparison in flight (leased, or held until their participant is settled) are at most max(min_in_flight, ceil(in_flight_share * n)), n the outcomes fed so far: it bounds what is collected beyond the decision (see docs/stopping.md).")
    min_in_flight: int = Field(1, ge=1, le=10000, description="The floor of that bound: how many judgements of a watched comparison may be in flight at the start. Higher collects faster with more participants at once, at the price of more judgements collected but unused at the decision.")


class StraightLiningExclusion(_Model):
    """Exclude a participant who gave the same value to every task."""

    rule: Literal["straight-lining"] = Field(description="Same response for every task of a participant.")
    min_tasks: int = Field(5, ge=2, description="Apply only to participants with at least this many tasks.")


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


ExclusionRule = Annotated[
    StraightLiningExclusion | AttentionExclusion | MinTimeExclusion | InconsistentExclusion,
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
        default_factory=lambda: ["krippendorff"], description="Agreement measures to compute."
    )
    agreement_level: Literal["auto", "nominal", "ordinal", "interval", "ratio"] = Field(
        "auto", description="Krippendorff level; `auto` derives it from the criterion type."
    )
    tentative_agreement: float = Field(0.667, ge=-1, le=1, description="Agreement above which conclusions are tentative.")
    reliable_agreement: float = Field(0.8, ge=-1, le=1, description="Agreement above which results are deemed reliable.")
    rankings: list[Literal["mean", "bootstrap", "bradley-terry", "trueskill", "elo"]] = Field(
        default_factory=lambda: ["mean"], description="Ranking methods to report."
    )
    bootstrap: int = Field(1000, ge=100, le=100000, description="Bootstrap resamples for confidence intervals.")
    log_magnitude: bool = Field(True, description="Log-transform magnitude-estimation scores before averaging and ICC.")
    criteria: list[str] = Field(default_factory=list, description="Criteria analysed (empty: all).")


class DryRun(_Model):
    """Dummy responses for rehearsing the pipeline."""

    static: dict[str, float] = Field(default_factory=dict, description="Fixed score per system for `static` and the mean of `normal` dummy responses (default: evenly spaced).")
    sd: float = Field(1.0, gt=0, description="Standard deviation of `normal` dummy responses.")


class Platform(_Model):
    """Where participants come from."""

    kind: Literal["local", "prolific", "mturk", "files"] = Field("local", description="`local` web server, `prolific`, `mturk` or `files` (spreadsheets handed out).")
    completion_code: str = Field("", description="Completion code shown at the end (Prolific/MTurk).")
    completion_url: str = Field("", description="URL a participant is sent to at the end (e.g. Prolific's completion link).")
    reward: float = Field(0.0, ge=0, description="Payment per participant list, in the platform's currency.")


class Pay(_Model):
    """What participants are paid, and the floor the pay must reach (checked by `humeval budget`)."""

    currency: Literal["GBP", "USD", "EUR"] = Field("GBP", description="Currency of the reward, the hourly pay and the fee.")
    hourly: float | None = Field(None, gt=0, description="Pay per hour; the reward per list is hourly x the estimated minutes / 60 (default: `platform.reward` per list).")
    minimum_hourly: float | None = Field(None, gt=0, description="Lowest acceptable pay per hour (default on Prolific: its enforced minimum, 6.00 GBP / 8.00 USD; elsewhere none unless declared; see docs/budget.md).")
    fee_rate: float | None = Field(None, ge=0, le=5, description="Platform service fee as a share of the rewards (default on Prolific: its published platform fee, 0.428; academic and non-profit workspaces pay 0.333; elsewhere 0; see docs/budget.md).")
    minutes_per_list: float | None = Field(None, gt=0, description="Estimated minutes one participant needs for a list (default: measured from a rehearsal or the judgements given).")
    seconds_per_task: float | None = Field(None, gt=0, description="Estimated seconds per task (used when minutes_per_list is not given and nothing was measured).")


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

    def criterion(self, name: str) -> Criterion:
        """The criterion called ``name``."""
        for c in self.criteria:
            if c.name == name:
                return c
        from humeval.errors import ProtocolError, did_you_mean

        raise ProtocolError(f"criteria: no criterion '{name}'. {did_you_mean(name, [c.name for c in self.criteria])}")

    @property
    def pairwise(self) -> bool:
        """Whether the study compares outputs in pairs (any ``2afc`` criterion)."""
        return any(c.type == "2afc" for c in self.criteria)
