"""``2afc``: two outputs side by side; the participant chooses the better one (or an enabled tie option).

The value is ``"A"`` or ``"B"`` (the first or second output as displayed), or ``"tie"``,
``"both-good"``, ``"both-bad"`` when the criterion offers them. Its row in the long table
names both systems shown (``system``, ``system_b``) and the ``choice``; the winner is
:meth:`TwoAFC.winner`. Stopping rules, win rates with sign tests and pairwise ranking models
apply; means, normality tests and the ICC do not (a choice is not a score).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from humeval.tasks.base import (
    MISSING,
    CriterionBase,
    InvalidValue,
    Scale,
    Statistic,
    TaskType,
    attention_fill,
    mark,
    show,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["TwoAFC", "TwoAFCType"]

_ = mark


class TwoAFC(CriterionBase):
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

    @staticmethod
    def vote(choice: str, display: Sequence[str], system_a: str) -> int | None:
        """A choice as the live stopping rule counts it: 1 if it favours ``system_a``, 0 if the other system
        shown, None for ``tie`` and ``both-*``."""
        if choice not in ("A", "B"):
            return None
        return int(TwoAFC.winner(choice, display[0], display[1]) == system_a)


class TwoAFCType(TaskType):
    name = "2afc"
    model: ClassVar[type[CriterionBase]] = TwoAFC  # a subtype (battle) names its own model
    summary = "two outputs side by side, choose the better one (optionally tie, both good, both bad)"
    family = "pair"
    pairwise = True
    relative = True
    statistics: ClassVar[tuple[Statistic, ...]] = (
        Statistic("win rates and sign tests", True, "each judgement is a preference between two systems"),
        Statistic("stopping rules", True, "a preference is the Bernoulli outcome the sequential tests are built on"),
        Statistic("Bradley-Terry, TrueSkill, Elo", True, "pairwise ranking models fit preferences directly"),
        Statistic("means, ANOVA, Kruskal-Wallis", False, "a choice is not a score on a scale"),
        Statistic("Krippendorff's alpha (nominal), Fleiss' kappa", True, "the chosen system is a category"),
        Statistic("ICC", False, "the ICC needs numeric ratings; 2afc choices are nominal"),
    )

    def shown(self, criterion: Any) -> dict[str, Any]:
        return super().shown(criterion) | {"options": criterion.options()}

    def form_value(self, criterion: Any, form: Mapping[str, str], n_outputs: int) -> Any:
        text = form.get(criterion.name, "")
        return MISSING if text == "" else text

    def problem_text(self, criterion: Any, field: str, gettext: Callable[[str], str]) -> str:
        return gettext(_("Choose one of the options."))

    #: an attention check's instruction asking for ``A`` or ``B`` (English; translated where shown)
    attention_asks: ClassVar[dict[str, str]] = {
        "A": _("This is an attention check. Please choose the first output (A) for the question: %(question)s"),
        "B": _("This is an attention check. Please choose the second output (B) for the question: %(question)s"),
    }

    def attention_text(self, criterion: Mapping[str, Any], expected: Any, gettext: Callable[[str], str]) -> str:
        return attention_fill(gettext(self.attention_asks["B" if expected == "B" else "A"]), criterion, expected)

    def check(self, criterion: Any, value: Any, field: str, n_outputs: int, lengths: Sequence[int] | None) -> Any:
        options = criterion.options()
        if not isinstance(value, str) or value not in options:
            raise InvalidValue(field, f"expected one of {', '.join(options)}, got {show(value)}")
        return value

    def values_schema(self, criterion: Any) -> dict[str, Any]:
        return {"type": "string", "enum": criterion.options()}

    def long_rows(self, criterion: Any, value: Any, display: Sequence[str], base: dict[str, Any],
                  seq: int | None) -> list[dict[str, Any]]:
        return [base | {"criterion": criterion.name, "system": display[0], "system_b": display[1], "position": 0,
                        "value": float("nan"), "choice": value, "stop_seq": float("nan") if seq is None else float(seq)}]

    def bounds(self, criterion: Any, logged: bool) -> tuple[float, float] | None:
        return None

    def off_scale(self, criterion: Any, value: np.ndarray) -> tuple[np.ndarray, str]:
        raise TypeError("2afc values are choices, checked against the criterion's options")

    def agreement_level(self, logged: bool) -> str:
        return "nominal"

    def scale(self, criterion: Any) -> Scale:
        return Scale(1, 5, True)  # latent 5-point scores decide the choice

    def check_answers(self, criterion: Any) -> tuple[Any, ...]:
        return ("A", "B")

    def check_request(self, criterion: Any, expected: Any) -> str:
        return "choose the FIRST output (A)" if expected == "A" else "choose the SECOND output (B)"

    def attention_answer(self, criterion: Any, expected: Any, shown: int) -> Any:
        return expected

    def cheap_answer(self, criterion: Any, level: float, shown: int) -> Any:
        return "A" if level < 0.5 else "B"

    def heds_scale(self, criterion: Any) -> tuple[Any, str, str]:
        return len(criterion.options()), ", ".join(criterion.options()), "Multiple-choice options"
