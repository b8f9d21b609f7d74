"""What every task type (criterion type) answers, so that the rest of humeval asks the type instead of its name.

A task type owns, for the criteria of its ``type``: the protocol model, how outputs are shown
(:attr:`TaskType.family`), the form fields and their parsing into a value, the value check,
its rows in the long judgements table, the JSON Schema of its value, the answers of attention
checks, dummy participants and cheap clickers, which statistics apply (with the reason), its
template partial and its participant-facing messages. One module per type
(:mod:`humeval.tasks.likert`, ...) subclasses :class:`TaskType`; :data:`humeval.tasks.TASK_TYPES`
registers them. A criterion model finds its type as ``criterion.task``.

Nothing here imports the protocol: :mod:`humeval.protocol.models` builds its ``Criterion`` union
from the registry, so this package sits below it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from humeval.errors import Refused
from humeval.wire import MAX_SCORE

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = [
    "CONTINUOUS",
    "MISSING",
    "PARTIALS",
    "RATING_STATISTICS",
    "CriterionBase",
    "InvalidValue",
    "Scale",
    "StandardItem",
    "Statistic",
    "TaskType",
    "attention_fill",
    "form_number",
    "mark",
    "number",
    "positive",
    "show",
]

#: where the task types' template partials are (``<type>.html``; the server's pages include them as ``tasks/<type>.html``)
PARTIALS = Path(__file__).parent / "templates"

Family = Literal["single", "pair", "multi"]


def mark(message: str) -> str:
    """Mark a participant-facing message for extraction (``python -m humeval.server.i18n``); translated where shown."""
    return message


_ = mark


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: what :meth:`TaskType.form_value` returns when the form has no answer (the store then says "required")
MISSING: Any = _Missing()


class InvalidValue(Refused):
    """A value (or comment) the protocol does not admit: ``invalid_value``, at its ``field``; nothing is stored."""

    def __init__(self, field: str, message: str, status: int = 422) -> None:
        super().__init__("invalid_value", f"{field}: {message}", status=status, field=field)


def show(value: Any) -> str:
    """``value`` for an error message, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def number(value: Any, field: str) -> float:
    """A finite JSON number, else :class:`InvalidValue` at ``field``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidValue(field, f"expected a number, got {type(value).__name__} {show(value)}")
    if not math.isfinite(value):
        raise InvalidValue(field, f"expected a finite number, got {value!r}")
    return float(value)


def positive(value: Any, field: str) -> float:
    """A number in (0, MAX_SCORE], else :class:`InvalidValue` at ``field``."""
    x = number(value, field)
    if not 0 < x <= MAX_SCORE:
        raise InvalidValue(field, f"expected a positive number up to {MAX_SCORE:g}, got {value!r}")
    return x


def form_number(text: str) -> Any:
    """A form field as a number, or the text as given (the value check names the problem)."""
    try:
        return float(text)
    except ValueError:
        return text


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StandardItem(_Model):
    """The fixed reference output that magnitude-estimation scores are relative to."""

    text: str = Field(min_length=1, description="Text of the standard output shown on every page.")
    input: str = Field("", description="Input of the standard output (shown when present).")


class CriterionBase(_Model):
    """The fields every criterion has; each task type's model adds ``type`` and its own."""

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]*$", description="Identifier of the criterion (letters, digits, _ and -).")
    question: str = Field(min_length=1, description="The question shown to participants.")
    definition: str = Field("", description="Definition of the quality criterion, shown with the question.")

    #: the task type whose model this is, bound when that :class:`TaskType` subclass is defined
    task_type: ClassVar[TaskType]

    @property
    def task(self) -> TaskType:
        """This criterion's task type (the :data:`humeval.tasks.TASK_TYPES` entry of its ``type``)."""
        return type(self).task_type


@dataclass(frozen=True)
class Scale:
    """The numeric range a criterion's responses live on (log scale for magnitude estimation): dummy and
    simulated participants draw their scores on it."""

    low: float
    high: float
    discrete: bool
    log: bool = False


@dataclass(frozen=True)
class Statistic:
    """Whether one statistic of the analysis plan applies to a task type, and why (docs/task-types.md)."""

    name: str
    applies: bool
    reason: str


#: the statistics of a score given to one output (likert, slider, magnitude, esa)
RATING_STATISTICS = (
    Statistic("means with bootstrap intervals", True, "each judgement scores one output"),
    Statistic("ANOVA / Kruskal-Wallis, post hoc tests", True, "scores of several systems on one scale"),
    Statistic("ICC, Krippendorff's alpha", True, "several participants score the same output"),
    Statistic("stopping rules", False, "the sequential tests need pairwise preferences"),
)
#: what does not apply to a continuous response
CONTINUOUS = Statistic("Fleiss' kappa", False, "the responses are continuous")


class TaskType:
    """One criterion type. Subclasses set the class attributes and override what differs from a rating of one output.

    The defaults describe a number given to one output (magnitude, slider): override them for a choice
    between outputs (``2afc``), one number per output shown (``rankme``), error spans (``esa``).
    """

    #: the ``type`` of the protocol's criterion, and the model of such a criterion
    name: ClassVar[str]
    model: ClassVar[type[CriterionBase]]
    summary: ClassVar[str]
    #: how outputs are shown: ``single`` (one output), ``pair`` (two), ``multi`` (all outputs of an item)
    family: ClassVar[Family] = "single"
    #: a choice between two outputs: stopping rules, win rates and pairwise ranking models apply
    pairwise: ClassVar[bool] = False
    #: the participant marks error spans in the output (the page makes every word markable)
    marks_spans: ClassVar[bool] = False
    #: scored relative to a standard output shown on the page (its ``standard`` and ``modulus``)
    relative_to_standard: ClassVar[bool] = False
    #: one answer per output shown (RankME): the outputs are stacked, each with its own field
    scores_each_output: ClassVar[bool] = False
    #: scores are magnitude estimates, analysed on the log scale when ``analysis.log_magnitude`` is on
    log_scale: ClassVar[bool] = False
    #: the outputs are judged against each other (HEDS 4.2.2 "Relative"), not one by one ("Absolute")
    relative: ClassVar[bool] = False
    #: which statistics of the analysis plan apply, each with its reason
    statistics: ClassVar[tuple[Statistic, ...]] = ()
    #: an arena battle: the criterion of the protocol's ``arena`` section (its models answer, their names may be
    #: shown after the vote with ``arena.reveal``)
    arena: ClassVar[bool] = False
    #: the type's own translations of its participant-facing messages (those of its module and partial), by
    #: language: ``{"de": {msgid: text, ...}, ...}``; the server adds them to its catalogue of that language, so
    #: they need no entry in the server's catalogues
    translations: ClassVar[Mapping[str, Mapping[str, str]]] = {}
    #: the import formats (``humeval import <format>``) whose judgements a criterion of this type receives, beyond
    #: those of the format's own criterion type
    receives: ClassVar[tuple[str, ...]] = ()
    #: what a task shows, in words (docs/task-types.md); empty: said by the family
    shows: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A type that names its model becomes that model's task type (one instance per type, the registry's)."""
        super().__init_subclass__(**kwargs)
        if "model" in cls.__dict__:
            cls.model.task_type = cls()

    # -- what a criterion of the type offers ------------------------------------------------------
    def choices(self, criterion: Any) -> list[str]:
        """The answers a pairwise criterion offers (``A``, ``B`` and the options it enables); none otherwise."""
        return list(criterion.options()) if self.pairwise else []

    def span_limit(self, criterion: Any) -> int:
        """The most spans a participant may mark in one output (0 for a type that marks none)."""
        return int(criterion.max_spans) if self.marks_spans else 0

    # -- the design -----------------------------------------------------------------------------
    def joint_key(self, criterion: Any) -> str:
        """Criteria of one key are asked in one task under ``presentation.setup: joint`` (default: the family)."""
        return self.family

    def shown_systems(self, criterion: Any, items: Sequence[str], systems: Sequence[str],
                      pairs: Sequence[tuple[str, str]], seed: int) -> list[list[tuple[str, ...]]]:
        """The systems of each task of each item, in ``items`` order (``pairs``: the pairs a ``pair`` family
        compares; ``seed``: the study seed, for a type whose design draws). Default: by the family, every output
        (``single``), every pair (``pair``) or all outputs of the item side by side (``multi``)."""
        shown: list[tuple[str, ...]]
        if self.family == "single":
            shown = [(s,) for s in systems]
        elif self.family == "pair":
            shown = [tuple(p) for p in pairs]
        else:
            shown = [tuple(systems)]
        return [shown] * len(items)

    # -- the page -------------------------------------------------------------------------------
    @property
    def partial(self) -> str:
        """The template partial of the criterion's fieldset (under :data:`PARTIALS`)."""
        return f"tasks/{self.name}.html"

    def shown(self, criterion: Any) -> dict[str, Any]:
        """The criterion as the assignment JSON shows it (the page's template reads it too)."""
        data: dict[str, Any] = criterion.model_dump(mode="json")
        return data

    def form_value(self, criterion: Any, form: Mapping[str, str], n_outputs: int) -> Any:
        """The answer in the task page's form (:data:`MISSING` when there is none); what cannot be parsed is
        passed on as given, so that :meth:`check` names the problem."""
        text = form.get(criterion.name, "")
        return MISSING if text == "" else form_number(text)

    def problem_input(self, criterion: Any, index: str | None, part: str | None) -> str:
        """The form field of a refused value's ``values.<name>[index]`` or ``values.<name>.<part>``."""
        return str(criterion.name)

    def problem_text(self, criterion: Any, field: str, gettext: Callable[[str], str]) -> str:
        """What a participant reads beside a refused answer at form field ``field`` (in the page's language)."""
        raise NotImplementedError

    def attention_text(self, criterion: Mapping[str, Any], expected: Any, gettext: Callable[[str], str]) -> str:
        """An attention check's instruction (``criterion``: as :meth:`shown`), asking for ``expected`` (None: the
        first of :meth:`check_answers`), in the page's language."""
        raise NotImplementedError

    # -- values ---------------------------------------------------------------------------------
    def check(self, criterion: Any, value: Any, field: str, n_outputs: int, lengths: Sequence[int] | None) -> Any:
        """The value normalised, or :class:`InvalidValue` at ``field`` (``lengths``: of the outputs shown)."""
        raise NotImplementedError

    def values_schema(self, criterion: Any) -> dict[str, Any]:
        """The JSON Schema of this criterion's value in a judgement's ``values``."""
        raise NotImplementedError

    def long_rows(self, criterion: Any, value: Any, display: Sequence[str], base: dict[str, Any],
                  seq: int | None) -> list[dict[str, Any]]:
        """The value's rows in the long judgements table (``base``: the columns every row of the judgement has;
        ``seq``: the stopping rule's sequence number of the judgement)."""
        return [base | {"criterion": criterion.name, "system": display[0], "system_b": "", "position": 0,
                        "value": float(value), "choice": ""}]

    def categories(self, criterion: Any) -> list[float] | None:
        """The response levels of a categorical scale (agreement, distribution charts); None: continuous."""
        return None

    def bounds(self, criterion: Any, logged: bool) -> tuple[float, float] | None:
        """The range the analysed scores can take (None: unbounded, e.g. log scores)."""
        raise NotImplementedError

    def off_scale(self, criterion: Any, value: np.ndarray) -> tuple[np.ndarray, str]:
        """Which of the (non-missing) ``value`` are off the scale, and what is valid."""
        raise NotImplementedError

    def agreement_level(self, logged: bool) -> str:
        """Krippendorff's level for ``analysis.agreement_level: auto``."""
        return "interval"

    # -- error spans (types that mark them) -----------------------------------------------------
    def span_penalties(self, criterion: Any, frame: pd.DataFrame) -> np.ndarray:
        """The weighted error score of each judgement in ``frame`` (the long table's rows of ``criterion``, ``spans``
        a JSON list): the per-system error score of the analysis averages it."""
        raise NotImplementedError

    def penalty_label(self, criterion: Any) -> str:
        """What :meth:`span_penalties` measures, as the results and the report name it."""
        raise NotImplementedError

    def with_spans(self, criterion: Any, value: Any, scores: np.ndarray,
                   draw: Callable[[float], list[dict[str, Any]]]) -> Any:
        """A simulated participant's ``value`` (from :meth:`shaped` of ``scores``) with the error spans they mark:
        ``draw(quality)`` gives spans ``{start, end, severity}`` for a quality from 0 (worst) to 100."""
        return value

    def rankings(self, criterion: Any, frame: Any, systems: Sequence[str], seed: int, confidence_level: float,
                 n_boot: int) -> dict[str, dict[str, Any]]:
        """Rankings of the type's own beyond the plan's (method -> a ranking record: ``method``, ``label``,
        ``systems`` rows best first with ``estimate``, ``ci_low``, ``ci_high``, ``rank_low``, ``rank_high``,
        ``extra``), from the criterion's valid long rows ``frame``; none by default."""
        return {}

    # -- answers of dummy and simulated participants --------------------------------------------
    def scale(self, criterion: Any) -> Scale:
        """The range dummy and simulated participants draw scores on."""
        raise NotImplementedError

    def shaped(self, criterion: Any, scores: np.ndarray) -> Any:
        """Scores drawn on :meth:`scale` (exponentiated when it is a log scale) as the API takes the value."""
        return float(scores[0])

    def dummy_rows(self, criterion: Any, scores: np.ndarray, judgement: np.ndarray, attention: np.ndarray,
                   expected: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """A dry run's long-table ``value`` and ``choice`` (None: empty) of a non-pairwise criterion's rows, from one
        score drawn per row on :meth:`scale` (exponentiated for a log scale); ``judgement``: an integer per row,
        shared by the rows of one judgement; attention-check rows (``attention``) answer ``expected``."""
        import numpy as np
        import pandas as pd

        wanted = pd.to_numeric(pd.Series(expected), errors="coerce").to_numpy(dtype=float)
        return np.where(attention, wanted, scores), None

    def check_answers(self, criterion: Any) -> tuple[Any, ...]:
        """The answers an attention check of ``criterion`` may ask for."""
        raise NotImplementedError

    def check_request(self, criterion: Any, expected: Any) -> str:
        """The English request of an attention check asking for ``expected`` (stored with the check)."""
        raise NotImplementedError

    def attention_answer(self, criterion: Any, expected: Any, shown: int) -> Any:
        """The value that passes an attention check expecting ``expected`` (``shown`` outputs)."""
        raise NotImplementedError

    def cheap_answer(self, criterion: Any, level: float, shown: int) -> Any:
        """A cheap clicker's answer: ``level`` 0 is the first option or point, up to 1 the last."""
        raise NotImplementedError

    # -- the report's datasheet (HEDS) ----------------------------------------------------------
    def heds_scale(self, criterion: Any) -> tuple[Any, str, str]:
        """HEDS 4.3.3-4.3.5: the scale's size, its values, and how they are entered."""
        raise NotImplementedError


def attention_fill(ask: str, criterion: Mapping[str, Any], value: Any) -> str:
    """An attention check's translated instruction ``ask`` with its question and the value it asks for."""
    return ask % {"question": criterion["question"], "value": f"{value:g}" if isinstance(value, (int, float)) else ""}

