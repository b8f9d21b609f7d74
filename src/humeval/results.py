"""The results of an analysis as one typed tree: :class:`Results`.

``results.json`` (written by ``humeval analyze``, a dry run, a rehearsal or ``humeval
posthoc``) is read once into a :class:`Results`: study-level facts (signature, counts,
plan, systems), one :class:`CriterionResult` per criterion, and inside each the records
the plan produced (descriptives, normality tests, omnibus, post hoc pairs, sign tests,
agreement, rankings) as :class:`Record` (one number with its uncertainty and its
context: a stored :class:`humeval.stats.Estimate`). :meth:`Results.tables` is the one
walker of the tree: the tidy CSVs, ``humeval analyze``/``posthoc`` and the report read
it. ``Results.from_json(r.to_json()) == r`` and ``to_json`` gives back the file's
content (keys, order and ``null`` s included).

Loading is cheap (no pandas until :meth:`Results.tables`); ``Study.results(name)`` reads
the results of a study by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from humeval.errors import DataError
from humeval.files import clean, read_json

if TYPE_CHECKING:
    import pandas as pd

    from humeval.stats import Estimate

__all__ = [
    "TABLES",
    "CorrelationSet",
    "Counts",
    "CriterionResult",
    "Normality",
    "PostHoc",
    "RankingResult",
    "Record",
    "Results",
    "read_results",
]

#: the tidy tables of every result (``correlations`` only when a post hoc analysis computed them)
TABLES = ("descriptives", "tests", "agreement", "rankings", "pairs")
_NUMBERS = ("estimate", "ci_low", "ci_high", "p_value")
_FIELDS = [*_NUMBERS, "n", "method"]


def _fail(where: str, message: str) -> DataError:
    return DataError(f"{where}: {message}")


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"expected an object, got {type(value).__name__} {str(value)[:60]!r}")
    return dict(value)


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise _fail(where, f"expected a list, got {type(value).__name__} {str(value)[:60]!r}")
    return list(value)


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Record:
    """One number with its uncertainty and context: a row of a tidy table.

    ``estimate``/``ci_low``/``ci_high``/``p_value`` are ``None`` where they do not apply
    or could not be computed (``undefined`` then says why); ``data`` is the whole record
    as stored (context such as ``system`` or ``a``/``b`` first, then the fields, then
    method-specific extras), read with ``record["key"]`` or ``record.get("key")``.
    """

    data: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: Any, where: str = "record") -> Record:
        return cls(clean(_object(data, where)))

    def to_json(self) -> dict[str, Any]:
        return dict(self.data)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    @property
    def estimate(self) -> float | None:
        return self.data.get("estimate")

    @property
    def ci_low(self) -> float | None:
        return self.data.get("ci_low")

    @property
    def ci_high(self) -> float | None:
        return self.data.get("ci_high")

    @property
    def p_value(self) -> float | None:
        return self.data.get("p_value")

    @property
    def n(self) -> int | None:
        return self.data.get("n")

    @property
    def method(self) -> str:
        return self.data.get("method") or ""

    @property
    def undefined(self) -> str | None:
        return self.data.get("undefined")

    def to_estimate(self) -> Estimate:
        """The record as a :class:`humeval.stats.Estimate` (``None`` -> ``nan``; context dropped)."""
        from humeval.stats._result import Estimate

        nan = float("nan")
        extra = {k: v for k, v in self.data.items() if k not in _FIELDS}
        return Estimate(*(nan if self.data.get(k) is None else self.data[k] for k in _NUMBERS),
                        n=self.n or 0, method=self.method, extra=extra)


def _records(value: Any, where: str) -> tuple[Record, ...]:
    return tuple(Record.from_json(r, f"{where}[{i}]") for i, r in enumerate(_list(value, where)))


def _dump(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    if hasattr(value, "to_json"):
        return value.to_json()
    return value


# --------------------------------------------------------------------------- typed nodes


def _plain(value: Any, where: str) -> Any:
    return clean(value)


@dataclass(frozen=True)
class _Node:
    """A JSON object with known keys (typed attributes) and others kept as they are.

    ``keys`` is the stored key order (and which optional keys were present), so that
    ``to_json`` gives back exactly what was read.
    """

    keys: tuple[str, ...] = field(default=(), repr=False)
    other: dict[str, Any] = field(default_factory=dict, repr=False)

    #: JSON key -> loader(value, where); the attribute has the key's name with '-' as '_'
    _LOAD: ClassVar[dict[str, Callable[[Any, str], Any]]] = {}
    _REQUIRED: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_json(cls, data: Any, where: str = "results") -> Any:
        data = _object(data, where)
        missing = [k for k in cls._REQUIRED if k not in data]
        if missing:
            raise _fail(where, f"missing {', '.join(repr(k) for k in missing)} (keys present: {', '.join(data) or 'none'})")
        kwargs: dict[str, Any] = {}
        other: dict[str, Any] = {}
        for key, value in data.items():
            if key in cls._LOAD:
                kwargs[key] = cls._LOAD[key](value, f"{where}.{key}")
            else:
                other[key] = clean(value)
        return cls(keys=tuple(data), other=other, **kwargs)

    def to_json(self) -> dict[str, Any]:
        return {k: _dump(getattr(self, k)) if k in self._LOAD else self.other[k] for k in self.keys}

    def get(self, key: str, default: Any = None) -> Any:
        """The stored value of ``key`` (typed where known), or ``default`` when absent."""
        if key not in self.keys:
            return default
        return getattr(self, key) if key in self._LOAD else self.other[key]


def _known(cls: type[_Node]) -> type[_Node]:
    names = {f.name for f in fields(cls)} - {"keys", "other"}
    unknown = set(cls._LOAD) - names
    if unknown:  # a programming error in this module, caught at import
        raise TypeError(f"{cls.__name__}: loaders without attributes: {sorted(unknown)}")
    return cls


@_known
@dataclass(frozen=True)
class Normality(_Node):
    """Shapiro-Wilk per system and the family it chose."""

    tests: tuple[Record, ...] = ()
    normal: bool | None = None
    seed: int | None = None
    reason: str = ""
    _LOAD: ClassVar = {"tests": _records, "normal": _plain, "seed": _plain, "reason": _plain}


@_known
@dataclass(frozen=True)
class PostHoc(_Node):
    """Post hoc pairs (run only after a significant omnibus; ``skipped`` says why not)."""

    test: str | None = None
    correction: str | None = None
    unit: str | None = None
    skipped: str | None = None
    pairs: tuple[Record, ...] = ()
    _LOAD: ClassVar = {"test": _plain, "correction": _plain, "unit": _plain, "skipped": _plain, "pairs": _records}


@_known
@dataclass(frozen=True)
class RankingResult(_Node):
    """One ranking: systems best first with their scores, intervals and rank ranges."""

    method: str = ""
    label: str = ""
    systems: tuple[Record, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    undefined: str | None = None
    _LOAD: ClassVar = {"method": _plain, "label": _plain, "systems": _records, "extra": _plain,
                       "undefined": _plain}


@_known
@dataclass(frozen=True)
class JudgeResult(_Node):
    """Prediction-powered estimates from one judge (per system or pair) and its calibration against humans."""

    judge: str = ""
    kind: str = ""
    assumption: str = ""
    estimates: tuple[Record, ...] = ()
    calibration: tuple[Record, ...] = ()
    _LOAD: ClassVar = {"judge": _plain, "kind": _plain, "assumption": _plain, "estimates": _records,
                       "calibration": _records}


def _judges(value: Any, where: str) -> dict[str, JudgeResult]:
    return {k: JudgeResult.from_json(v, f"{where}.{k}") for k, v in _object(value, where).items()}


def _rankings(value: Any, where: str) -> dict[str, RankingResult]:
    return {k: RankingResult.from_json(v, f"{where}.{k}") for k, v in _object(value, where).items()}


@_known
@dataclass(frozen=True)
class CriterionResult(_Node):
    """The analysis of one criterion: what the plan ran and every record it produced.

    Rating criteria have ``descriptives``, ``normality`` (under ``tests: auto``),
    ``omnibus`` and ``posthoc``; ``2afc`` criteria ``pairs`` (sign tests), ``win_rates``,
    ``stopping`` and, for a goal over K systems, ``leaderboard``
    (:func:`humeval.analysis.leaderboard.goal_leaderboard`); both ``agreement``, ``rankings`` and, with ``analysis.judges``,
    ``judges``. ``esa`` criteria also have ``errors`` (per system: minor and major errors per
    output and the weighted error score, one record each) and ``span_agreement``. ``undefined`` is set when the criterion has no valid judgements. Absent
    sections are ``None`` (or empty).
    """

    criterion: str = ""
    type: str = ""
    question: str = ""
    seed: int | None = None
    judgements: int = 0
    participants: int = 0
    items: int = 0
    undefined: str | None = None
    transform: str | None = None
    seeds: dict[str, int] = field(default_factory=dict)
    decision: str = ""
    family: str | None = None
    descriptives: tuple[Record, ...] = ()
    distribution: dict[str, dict[str, int]] | None = None
    normality: Normality | None = None
    omnibus: Record | None = None
    posthoc: PostHoc | None = None
    pairs: tuple[Record, ...] = ()
    win_rates: dict[str, dict[str, float | None]] | None = None
    stopping: dict[str, Any] | None = None
    leaderboard: dict[str, Any] | None = None
    agreement: tuple[Record, ...] = ()
    rankings: dict[str, RankingResult] = field(default_factory=dict)
    battles_from: str | None = None
    judges: dict[str, JudgeResult] = field(default_factory=dict)
    errors: tuple[Record, ...] = ()
    span_agreement: Record | None = None
    _LOAD: ClassVar = {
        "criterion": _plain, "type": _plain, "question": _plain, "seed": _plain, "judgements": _plain,
        "participants": _plain, "items": _plain, "undefined": _plain, "transform": _plain, "seeds": _plain,
        "decision": _plain, "family": _plain, "descriptives": _records, "distribution": _plain,
        "normality": Normality.from_json, "omnibus": Record.from_json, "posthoc": PostHoc.from_json,
        "pairs": _records, "win_rates": _plain, "stopping": _plain, "leaderboard": _plain, "agreement": _records,
        "rankings": _rankings, "battles_from": _plain, "judges": _judges, "errors": _records,
        "span_agreement": Record.from_json,
    }
    _REQUIRED: ClassVar = ("type",)


@_known
@dataclass(frozen=True)
class CorrelationSet(_Node):
    """Correlations between every two criteria (a post hoc analysis)."""

    method: str = ""
    unit: str = ""
    pairs: tuple[Record, ...] = ()
    _LOAD: ClassVar = {"method": _plain, "unit": _plain, "pairs": _records}


@dataclass(frozen=True)
class Counts:
    """How many judgements and participants went in, were left out (and why), and were analysed."""

    judgements: int
    participants: int
    excluded: int
    invalid: int
    attention_or_repeat: int
    analysed: int
    participants_analysed: int

    @classmethod
    def from_json(cls, data: Any, where: str = "counts") -> Counts:
        data = _object(data, where)
        names = [f.name for f in fields(cls)]
        if set(data) != set(names):
            missing, extra = sorted(set(names) - set(data)), sorted(set(data) - set(names))
            raise _fail(where, f"expected the counts {', '.join(names)}; missing {missing or 'none'}, "
                               f"unknown {extra or 'none'}")
        for name in names:
            if not isinstance(data[name], int) or isinstance(data[name], bool):
                raise _fail(f"{where}.{name}", f"expected a whole number, got {data[name]!r}")
        return cls(**{n: data[n] for n in names})

    def to_json(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _criteria(value: Any, where: str) -> dict[str, CriterionResult]:
    return {k: CriterionResult.from_json(v, f"{where}.{k}") for k, v in _object(value, where).items()}


def _correlations(value: Any, where: str) -> tuple[CorrelationSet, ...]:
    return tuple(CorrelationSet.from_json(c, f"{where}[{i}]") for i, c in enumerate(_list(value, where)))


def _systems(value: Any, where: str) -> tuple[str, ...]:
    return tuple(str(s) for s in _list(value, where))


def _counts(value: Any, where: str) -> Counts:
    return Counts.from_json(value, where)


# --------------------------------------------------------------------------- the tree


@_known
@dataclass(frozen=True)
class Results(_Node):
    """The results of one analysis (preregistered, dry run, rehearsal or post hoc).

    ``criteria`` maps each criterion to its :class:`CriterionResult`; ``counts`` says
    what was analysed; ``signature`` identifies the protocol, seed, plan and version.
    A post hoc analysis has ``post_hoc`` (its name), ``overrides`` and maybe
    ``correlations``, and ``preregistered`` false.
    """

    study: str = ""
    signature: str = ""
    preregistered: bool = True
    post_hoc: str | None = None
    dry_run: str | None = None
    protocol_sha256: str | None = None
    seed: int | None = None
    version: str | None = None
    plan: dict[str, Any] = field(default_factory=dict)
    systems: tuple[str, ...] = ()
    counts: Counts | None = None
    criteria: dict[str, CriterionResult] = field(default_factory=dict)
    overrides: dict[str, Any] | None = None
    correlations: tuple[CorrelationSet, ...] | None = None
    _LOAD: ClassVar = {
        "study": _plain, "signature": _plain, "preregistered": _plain, "post_hoc": _plain, "dry_run": _plain,
        "protocol_sha256": _plain, "seed": _plain, "version": _plain, "plan": _plain, "systems": _systems,
        "counts": _counts, "criteria": _criteria, "overrides": _plain, "correlations": _correlations,
    }
    _REQUIRED: ClassVar = ("signature", "criteria")

    @classmethod
    def read(cls, path: str | Path, *, hint: str = "run `humeval analyze` first") -> Results:
        """Read ``results.json`` at ``path``; errors name the file and the field path."""
        path = Path(path)
        return cls.from_json(read_json(path, what="results", hint=hint), str(path))

    # ----------------------------------------------------------------------- the one walker

    def rows(self) -> dict[str, list[dict[str, Any]]]:
        """The tidy tables as lists of rows (what :meth:`tables` turns into DataFrames)."""
        sig = self.signature
        out: dict[str, list[dict[str, Any]]] = {k: [] for k in TABLES}

        def add(table: str, criterion: str, analysis: str, record: Record, **extra: Any) -> None:
            row = {"criterion": criterion, "analysis": analysis, **extra}
            row |= {k: record.get(k) for k in _FIELDS}
            row |= {k: v for k, v in record.data.items() if k not in row and not isinstance(v, dict | list)}
            out.setdefault(table, []).append(row | {"signature": sig})  # judges, correlations: only when present

        for name, res in self.criteria.items():
            for d in res.descriptives:
                add("descriptives", name, "mean", d)
            for t in res.normality.tests if res.normality else ():
                add("tests", name, "normality", t)
            if res.omnibus is not None:
                add("tests", name, "omnibus", res.omnibus)
            for p in res.posthoc.pairs if res.posthoc else ():
                add("tests", name, "posthoc", p)
            for p in res.pairs:
                add("pairs", name, "sign_test", p)
            for a in res.agreement:
                add("agreement", name, a.get("measure", ""), a)
            for method, rk in res.rankings.items():
                for s in rk.systems:
                    add("rankings", name, method, s, label=rk.label)
            for judge, jr in res.judges.items():
                for e in jr.estimates:
                    add("judges", name, "prediction-powered", e, judge=judge)
                for c in jr.calibration:
                    add("judges", name, "calibration", c, judge=judge)
        if self.correlations is not None:
            out["correlations"] = []
            for corr in self.correlations:
                for c in corr.pairs:
                    add("correlations", f"{c.get('a')} ~ {c.get('b')}", "correlation", c, unit=corr.unit)
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


def _about(row: dict[str, Any]) -> str:
    if row.get("system"):
        return str(row["system"])
    if row.get("a") and row.get("b"):
        return f"{row['a']} vs {row['b']}"
    return "all systems"


def read_results(path: str | Path, *, hint: str = "run `humeval analyze` first") -> Results:
    """:meth:`Results.read`."""
    return Results.read(path, hint=hint)
