"""The results of an analysis as typed models: :class:`Results` and the records inside it.

The analysis (:func:`humeval.analysis.plan.analyze`, ``humeval posthoc``) builds a
:class:`Results`; ``results.json`` is its serialisation (:meth:`Results.to_json`,
``model_dump(mode="json")``) with a top-level ``format_version`` (:data:`FORMAT_VERSION`).
A :class:`Results` holds study-level facts (signature, counts, plan, systems) and one
:class:`CriterionResult` per criterion, and inside each the records the plan produced
(descriptives, normality tests, omnibus, post hoc pairs, sign tests, agreement, rankings,
judges) as :class:`Record` subclasses: one number with its uncertainty and its context,
read as attributes (``record.system``, ``record.ci_low``). Method-specific extras of
:mod:`humeval.stats` (a test statistic, ``n_boot``, ...) are kept as extra fields.

Every model keeps the order and presence of its keys, so ``Results.from_json(r.to_json()) == r``
and ``to_json`` gives back the file's content (keys, order and ``null`` s included).
:meth:`Results.read` refuses a file of another format version, naming both versions.
:meth:`Results.tables` is the one walker of the tree: the tidy CSVs, ``humeval analyze``/``posthoc``
and the report read it. Loading is cheap (no pandas until :meth:`Results.tables`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from humeval.errors import DataError
from humeval.files import clean, read_json
from humeval.protocol.models import Analysis

if TYPE_CHECKING:
    import pandas as pd

    from humeval.stats import Estimate

__all__ = [
    "FORMAT_VERSION",
    "TABLES",
    "AgreementRecord",
    "Calibration",
    "CorrelationSet",
    "Counts",
    "CriterionResult",
    "Descriptive",
    "DriftCheck",
    "DriftHalf",
    "ErrorRecord",
    "JudgeEstimate",
    "JudgeResult",
    "Leaderboard",
    "LeaderboardRow",
    "Normality",
    "PairTest",
    "Population",
    "PostHoc",
    "RankRow",
    "RankingResult",
    "Record",
    "Results",
    "SignTest",
    "SpanAgreement",
    "Stopping",
    "SystemRecord",
    "WaveCheck",
    "read_results",
]

#: the layout of ``results.json``; files without ``format_version`` are format 1 (humeval before typed results)
FORMAT_VERSION = 2
#: what a reader of another format version is told to do
RERUN = ("`humeval analyze <study>` (or the command that wrote it: `humeval dry-run`, `humeval rehearse`, "
         "`humeval posthoc <name>`)")
#: the tidy tables of every result (``correlations`` only when a post hoc analysis computed them)
TABLES = ("descriptives", "tests", "agreement", "rankings", "pairs")
_NUMBERS = ("estimate", "ci_low", "ci_high", "p_value")
_FIELDS = [*_NUMBERS, "n", "method"]



def _number(value: Any) -> int | float | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise ValueError(f"expected a number or null, got {type(value).__name__} {value!r}")
    return value


#: a number or null, kept as given (an int stays an int), so the file's numbers are written back as read
Number = Annotated[Any, AfterValidator(_number)]


class _Node(BaseModel):
    """A JSON object of ``results.json``: typed fields, with the keys it was built from kept in their order.

    Only the keys given are written back (an absent optional key stays absent, a ``null`` stays ``null``),
    in the order given; NaN and infinities are stored as ``null`` and numpy values as Python ones.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    _keys: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _keep_keys(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        if not isinstance(data, Mapping):
            return handler(data)
        data = {str(k): v if isinstance(v, BaseModel) else clean(v) for k, v in data.items()}
        node = handler(data)
        node._keys = tuple(data)
        return node

    @model_serializer(mode="wrap")
    def _in_stored_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        return {k: out[k] for k in self._keys if k in out}

    def to_json(self) -> dict[str, Any]:
        """The JSON object this node was built from (``model_dump(mode="json")``)."""
        return self.model_dump(mode="json")

    def stored(self) -> dict[str, Any]:
        """The keys this node was built from, in their order, with their typed values (to build a variant)."""
        return {k: getattr(self, k) for k in self._keys}


# --------------------------------------------------------------------------- records


class Record(_Node):
    """One number with its uncertainty and context: a row of a tidy table.

    ``estimate``/``ci_low``/``ci_high``/``p_value`` are ``None`` where they do not apply
    or could not be computed (``undefined`` then says why; ``no_interval`` says why a method
    gave an estimate without an interval). Method-specific extras (a test statistic,
    ``n_boot``, ``seed``, ...) are extra fields, kept in the order stored.
    """

    model_config = ConfigDict(extra="allow")

    estimate: Number = None
    ci_low: Number = None
    ci_high: Number = None
    p_value: Number = None
    n: int | None = None
    method: str = ""
    undefined: str | None = None
    no_interval: str | None = None

    def extras(self) -> dict[str, Any]:
        """Every stored key but the estimate's fields (context first, then method-specific values)."""
        return {k: v for k, v in self.to_json().items() if k not in _FIELDS}

    def to_estimate(self) -> Estimate:
        """The record as a :class:`humeval.stats.Estimate` (``None`` -> ``nan``; context kept in ``extra``)."""
        from humeval.stats._result import Estimate

        def number(value: float | None) -> float:
            return float("nan") if value is None else value

        return Estimate(number(self.estimate), number(self.ci_low), number(self.ci_high), number(self.p_value),
                        n=self.n or 0, method=self.method, extra=self.extras())


class SystemRecord(Record):
    """A record about one system (a normality test: ``subsample`` is the number of scores tested)."""

    system: str
    subsample: int | None = None


class Descriptive(Record):
    """A system's mean score with its interval, spread and the items it covers."""

    system: str
    sd: Number = None
    median: Number = None
    items: int | None = None


class PairTest(Record):
    """A test of one pair of systems (or criteria, for correlations); p-values corrected over pairs."""

    a: str
    b: str
    p_unadjusted: Number = None
    correction: str | None = None


class SignTest(PairTest):
    """A ``2afc`` pair: wins of each system, ties, and the win rate of ``a`` among decisive judgements."""

    wins_a: int = 0
    wins_b: int = 0
    ties: int = 0
    tie_rate: Number = None


class AgreementRecord(Record):
    """One agreement coefficient with its verdict against the plan's thresholds."""

    measure: str
    level: str | None = None
    form: str | None = None
    judgements_per_unit: int | None = None
    units_left_out: int | None = None
    verdict: str | None = None


class RankRow(Record):
    """One system in a ranking: its score with the interval, and its rank range."""

    system: str
    rank_low: int
    rank_high: int


class ErrorRecord(Record):
    """An ``esa`` criterion's errors per output of one system (minor, major or weighted)."""

    system: str
    measure: str
    outputs_with_errors: int | None = None


class SpanAgreement(Record):
    """Agreement on error spans: pairwise F1 of the characters two participants marked."""

    outputs: int | None = None
    n_both_clean: int | None = None
    severity_agreement: Number = None


class JudgeEstimate(Record):
    """A prediction-powered estimate (a system's mean or a pair's win rate) beside the human-only one."""

    system: str | None = None
    a: str | None = None
    b: str | None = None
    human_only: Number = None
    human_ci_low: Number = None
    human_ci_high: Number = None
    n_labelled: int | None = None
    n_unlabelled: int | None = None
    effective_n: Number = None
    lam: Number = None
    human_items_without_judge: int | None = None

    @property
    def about(self) -> str:
        return self.system or f"{self.a} vs {self.b}"


class Calibration(Record):
    """A judge against the human scores of the labelled items: Pearson r, bias and (verdicts) the same preference."""

    system: str | None = None
    a: str | None = None
    b: str | None = None
    bias: Number = None
    agreement_share: Number = None

    @property
    def about(self) -> str:
        return self.system or f"{self.a} vs {self.b}"


# --------------------------------------------------------------------------- sections of a criterion


class Normality(_Node):
    """Shapiro-Wilk per system and the family it chose."""

    tests: tuple[SystemRecord, ...] = ()
    normal: bool | None = None
    seed: int | None = None
    reason: str = ""


class PostHoc(_Node):
    """Post hoc pairs (run only after a significant omnibus; ``skipped`` says why not)."""

    test: str | None = None
    correction: str | None = None
    unit: str | None = None
    skipped: str | None = None
    pairs: tuple[PairTest, ...] = ()


class RankingResult(_Node):
    """One ranking: systems best first with their scores, intervals and rank ranges (``undefined``: why not)."""

    method: str = ""
    label: str = ""
    systems: tuple[RankRow, ...] = ()
    extra: dict[str, Any] = {}
    undefined: str | None = None
    not_applicable: bool = False
    items_left_out: int | None = None
    n_boot: int | None = None
    battles: int | None = None


class JudgeResult(_Node):
    """Prediction-powered estimates from one judge (per system or pair) and its calibration against humans."""

    judge: str = ""
    kind: str = ""
    assumption: str = ""
    estimates: tuple[JudgeEstimate, ...] = ()
    calibration: tuple[Calibration, ...] = ()


class Population(_Node):
    """Whose preference a decision is about: the participants whose judgements the rule used
    (:func:`humeval.analysis.drift.population`); ``first``/``last``: UTC times (ISO 8601) of the first and last."""

    participants: int
    judgements: int
    first: str | None = None
    last: str | None = None


class DriftHalf(_Node):
    """One half of a drift check: its outcomes, the wins of A, the share for A with its 95% Wilson interval."""

    n: int
    wins_a: int
    share: float
    ci_low: float
    ci_high: float
    first: str | None = None
    last: str | None = None


class WaveCheck(_Node):
    """A decision's confirmation wave (``stopping.drift_check: wave``; :func:`humeval.analysis.drift.wave_check`):
    ``n`` of the preregistered ``size`` outcomes, ``wins`` for the decided ``side``, the exact one-sided binomial
    ``p_value`` (``p_bound``: ``exact``, or for a curtailed wave ``at most``/``at least``), ``flagged`` when it
    prefers the other side, ``settled`` once the flag cannot change."""

    side: str
    size: int
    n: int
    wins: int
    threshold: int
    p_value: float
    p_bound: str
    flagged: bool
    settled: bool
    method: str
    first: str | None = None
    last: str | None = None


class DriftCheck(_Node):
    """The preregistered drift check of a decision (``stopping.drift_check``;
    :func:`humeval.analysis.drift.drift_check`): ``flagged`` when the early and late halves' preference differ
    at ``alpha``; ``undefined`` says why it was not computed. It qualifies the decision and never changes it."""

    check: str
    method: str
    alpha: float
    early: DriftHalf | None = None
    late: DriftHalf | None = None
    p_value: Number = None
    flagged: bool = False
    undefined: str | None = None
    wave: WaveCheck | None = None


class Stopping(_Node):
    """The stopping rule's decision on one comparison, replayed on the valid judgements
    (:func:`humeval.analysis.decisions.replay_decisions`): a pair (``a`` vs ``b``) or a goal over K systems."""

    model_config = ConfigDict(extra="allow")

    criterion: str
    rule: str
    delta: float
    anytime_valid: bool
    outcome: str
    decision: str | list[str]
    n: int
    reason: str = ""
    a: str | None = None
    b: str | None = None
    horizon: int | None = None
    path: list[dict[str, Any]] = []
    live_n: int | None = None
    agrees_with_live: bool | None = None
    collected: int = 0
    after_decision: int = 0
    fixed_design: int | None = None
    saved: int | None = None
    fixed_places: int | None = None
    places: int | None = None
    population: Population | None = None
    drift: DriftCheck | None = None
    # a goal over K systems
    goal: str | None = None
    top: int | None = None
    systems: list[str] = []
    pair_delta: float | None = None
    prior_strength: float | None = None
    contention: list[str] = []
    rank_sets: dict[str, list[int]] = {}
    wins: dict[str, dict[str, int]] = {}
    timeline: list[dict[str, Any]] = []
    sequence: list[list[int]] = []
    reachable: bool = True
    cycles: list[dict[str, Any]] = []
    intransitive: str | None = None

    @property
    def pairwise(self) -> bool:
        """A decision on one pair (not a goal over K systems)."""
        return self.goal in (None, "pair")


class LeaderboardRow(_Node):
    """One system of a goal's leaderboard (see :mod:`humeval.analysis.leaderboard`)."""

    system: str
    rating: Number = None
    ci_low: Number = None
    ci_high: Number = None
    theta: Number = None
    vs_leader_low: Number = None
    vs_leader_high: Number = None
    rank_low: int
    rank_high: int
    in_contention: bool
    judgements: int
    no_interval: str | None = None


class LeaderboardCost(_Node):
    """Judgements the goal used against uniform pair sampling (simulated at the fitted strengths)."""

    spent: int
    uniform_expected: Number = None
    uniform_decided_share: Number = None
    adaptive_expected: Number = None
    runs: int | None = None
    horizon: int | None = None
    seed: int | None = None
    method: str | None = None


class Leaderboard(_Node):
    """The leaderboard of a goal over K systems: ratings, anytime-valid intervals, contention, cost."""

    goal: str
    leader: str
    rows: tuple[LeaderboardRow, ...] = ()
    cost: LeaderboardCost
    rating_method: str = ""
    interval_method: str = ""
    timeline: list[dict[str, Any]] = []


class ArenaBoardRow(_Node):
    """One system of a pairwise criterion's leaderboard (:func:`humeval.stopping.board.arena_board`)."""

    system: str
    score: Number = None
    ci_low: Number = None
    ci_high: Number = None
    rank_low: int
    rank_high: int
    won: int = 0
    lost: int = 0
    ties: int = 0


class ArenaBoardResult(_Node):
    """The leaderboard of a pairwise criterion over K >= 3 systems: Davidson scores with fixed-n bootstrap intervals,
    rank sets from the pooled anytime-valid statements (``basis``: pooled, or direct when the fit check rejected),
    the answer of ``goal`` (None: undecided) and the stopping code's reason."""

    goal: str
    delta: float
    basis: str
    batch: int
    fed: int
    pending: int
    ridge: bool = False
    answer: tuple[str, ...] | None = None
    reason: str = ""
    interval_method: str = ""
    rows: tuple[ArenaBoardRow, ...] = ()


class CriterionResult(_Node):
    """The analysis of one criterion: what the plan ran and every record it produced.

    Rating criteria have ``descriptives``, ``normality`` (under ``tests: auto``),
    ``omnibus`` and ``posthoc``; ``2afc`` criteria ``pairs`` (sign tests), ``win_rates``,
    ``stopping`` and, for a goal over K systems, ``leaderboard``
    (:func:`humeval.analysis.leaderboard.goal_leaderboard`); both ``agreement``, ``rankings`` and, with
    ``analysis.judges``, ``judges``. ``esa`` criteria also have ``errors`` (per system: minor and major
    errors per output and the weighted error score, one record each) and ``span_agreement``.
    ``undefined`` is set when the criterion has no valid judgements. Absent sections are ``None`` (or empty).
    """

    criterion: str = ""
    type: str
    question: str = ""
    seed: int | None = None
    judgements: int = 0
    participants: int = 0
    items: int = 0
    undefined: str | None = None
    transform: str | None = None
    seeds: dict[str, int] = {}
    decision: str = ""
    family: str | None = None
    descriptives: tuple[Descriptive, ...] = ()
    distribution: dict[str, dict[str, int]] | None = None
    normality: Normality | None = None
    omnibus: Record | None = None
    posthoc: PostHoc | None = None
    pairs: tuple[SignTest, ...] = ()
    win_rates: dict[str, dict[str, Number]] | None = None
    stopping: Stopping | None = None
    leaderboard: Leaderboard | None = None
    arena_board: ArenaBoardResult | None = None
    agreement: tuple[AgreementRecord, ...] = ()
    rankings: dict[str, RankingResult] = {}
    battles_from: str | None = None
    judges: dict[str, JudgeResult] = {}
    errors: tuple[ErrorRecord, ...] = ()
    span_agreement: SpanAgreement | None = None


class CorrelationSet(_Node):
    """Correlations between every two criteria (a post hoc analysis)."""

    method: str = ""
    unit: str = ""
    pairs: tuple[PairTest, ...] = ()


class Counts(_Node):
    """How many judgements and participants went in, were left out (and why), and were analysed."""

    model_config = ConfigDict(strict=True)

    judgements: int
    participants: int
    excluded: int
    invalid: int
    attention_or_repeat: int
    analysed: int
    participants_analysed: int


# --------------------------------------------------------------------------- the tree


class Results(_Node):
    """The results of one analysis (preregistered, dry run, rehearsal or post hoc).

    ``criteria`` maps each criterion to its :class:`CriterionResult`; ``counts`` says
    what was analysed; ``signature`` identifies the protocol, seed, plan and version.
    A post hoc analysis has ``post_hoc`` (its name), ``overrides`` and maybe
    ``correlations``, and ``preregistered`` false. ``format_version`` is :data:`FORMAT_VERSION`.
    """

    format_version: int
    study: str = ""
    signature: str
    preregistered: bool = True
    post_hoc: str | None = None
    dry_run: str | None = None
    protocol_sha256: str | None = None
    seed: int | None = None
    version: str | None = None
    plan: Analysis | None = None
    systems: tuple[str, ...] = ()
    counts: Counts | None = None
    criteria: dict[str, CriterionResult]
    overrides: dict[str, Any] | None = None
    correlations: tuple[CorrelationSet, ...] | None = None

    def counted(self) -> Counts:
        """The counts, for what reports them; an error where these results hold none."""
        if self.counts is None:
            raise DataError("results: no counts of judgements and participants (the analysis writes them; "
                            "run `humeval analyze` again)")
        return self.counts

    @property
    def alpha(self) -> float:
        """The plan's significance level (0.05 when the plan is not stored)."""
        return self.plan.alpha if self.plan is not None else 0.05

    @classmethod
    def from_json(cls, data: Any, where: str = "results") -> Results:
        """The results in ``data`` (a parsed ``results.json``); errors name ``where`` and the field path."""
        check_format(data, where)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
            got = first.get("input")
            raise DataError(f"{where}{path}: {first['msg']} (got {type(got).__name__} {str(got)[:60]!r}; "
                            f"{exc.error_count()} problem(s) in all)") from None

    @classmethod
    def read(cls, path: str | Path, *, hint: str = "run `humeval analyze` first") -> Results:
        """Read ``results.json`` at ``path``; errors name the file and the field path."""
        path = Path(path)
        return cls.from_json(read_json(path, what="results", hint=hint), str(path))

    # ----------------------------------------------------------------------- the one walker

    def rows(self) -> dict[str, list[dict[str, Any]]]:
        """The tidy tables as lists of rows (what :meth:`tables` turns into DataFrames)."""
        out: dict[str, list[dict[str, Any]]] = {k: [] for k in TABLES}
        for name, res in self.criteria.items():
            for table, analysis, record, extra in _criterion_rows(res):
                _add(out, table, name, analysis, record, self.signature, **extra)
        if self.correlations is not None:
            out["correlations"] = []
            for corr in self.correlations:
                for c in corr.pairs:
                    _add(out, "correlations", f"{c.a} ~ {c.b}", "correlation", c, self.signature, unit=corr.unit)
        return out

    def tables(self) -> dict[str, pd.DataFrame]:
        """Tidy tables, name -> DataFrame: descriptives, tests, agreement, rankings, pairs (and
        judges when the plan names judges, correlations for a post hoc analysis that computed
        them); every row has the signature."""
        import pandas as pd

        return {name: pd.DataFrame(rows) for name, rows in self.rows().items()}

    def summary_rows(self) -> list[dict[str, Any]]:
        """The tests, agreement, pairs and correlations rows with the columns the CLI prints; ``about`` says
        which system (normality), pair (post hoc tests, sign tests) or all systems (omnibus, agreement) a row is."""
        cols = ("criterion", "analysis", "about", "method", "estimate", "ci_low", "ci_high", "p_value", "n")
        rows = self.rows()
        return [{k: (_about(r) if k == "about" else r.get(k)) for k in cols}
                for name in ("tests", "agreement", "pairs", "judges", "correlations") for r in rows.get(name, [])]


def check_format(data: Any, where: str) -> None:
    """Refuse ``data`` unless it is a results object of :data:`FORMAT_VERSION` (naming both versions)."""
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: expected a results object, got {type(data).__name__} {str(data)[:60]!r}")
    found = data.get("format_version")
    if found != FORMAT_VERSION:
        said = "no format_version (format 1, written before results were versioned)" if found is None else \
            f"format_version {found!r}"
        raise DataError(f"{where}: results.json has {said}; this humeval reads format_version {FORMAT_VERSION}. "
                        f"Re-run the analysis to write it again: {RERUN}")


def _criterion_rows(res: CriterionResult) -> list[tuple[str, str, Record, dict[str, Any]]]:
    """(table, analysis, record, extra columns) for every record of one criterion, in table order."""
    out: list[tuple[str, str, Record, dict[str, Any]]] = [("descriptives", "mean", d, {}) for d in res.descriptives]
    out += [("tests", "normality", t, {}) for t in (res.normality.tests if res.normality else ())]
    if res.omnibus is not None:
        out.append(("tests", "omnibus", res.omnibus, {}))
    out += [("tests", "posthoc", p, {}) for p in (res.posthoc.pairs if res.posthoc else ())]
    out += [("pairs", "sign_test", p, {}) for p in res.pairs]
    out += [("agreement", a.measure, a, {}) for a in res.agreement]
    out += [("rankings", method, s, {"label": rk.label}) for method, rk in res.rankings.items() for s in rk.systems]
    for judge, jr in res.judges.items():
        out += [("judges", "prediction-powered", e, {"judge": judge}) for e in jr.estimates]
        out += [("judges", "calibration", c, {"judge": judge}) for c in jr.calibration]
    return out


def _add(out: dict[str, list[dict[str, Any]]], table: str, criterion: str, analysis: str, record: Record,
         signature: str, **extra: Any) -> None:
    row = {"criterion": criterion, "analysis": analysis, **extra}
    stored = record.to_json()
    row |= {k: stored.get(k) for k in _FIELDS}
    row |= {k: v for k, v in stored.items() if k not in row and not isinstance(v, dict | list)}
    out.setdefault(table, []).append(row | {"signature": signature})  # judges, correlations: only when present


def _about(row: dict[str, Any]) -> str:
    if row.get("system"):
        return str(row["system"])
    if row.get("a") and row.get("b"):
        return f"{row['a']} vs {row['b']}"
    return "all systems"


def read_results(path: str | Path, *, hint: str = "run `humeval analyze` first") -> Results:
    """:meth:`Results.read`."""
    return Results.read(path, hint=hint)
