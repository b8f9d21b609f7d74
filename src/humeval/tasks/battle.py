"""``battle``: an arena battle; two anonymous models answer one prompt and the participant votes.

The item is a prompt and the systems are models; the two answers are shown on random sides
(the display order is seeded and stored with each judgement, as for every pair). The value is
``"A"`` or ``"B"`` (the answer shown first or second is better), ``"tie"`` or ``"both-bad"``;
the four votes of Chatbot Arena, always offered. Its row in the long table names both models
shown (``system``, ``system_b``) and the ``choice``, exactly as a ``2afc`` row, so everything
that reads preferences reads battles: stopping rules (a tie or a both-bad vote carries no
direction and is skipped by the sequential tests), win rates and sign tests, Bradley-Terry
and Davidson fits, the pooled statements of :mod:`humeval.stopping.pooled`. Means, normality
tests and the ICC do not apply (a vote is not a score). Whether the models' names are shown
after the vote is the protocol's ``arena.reveal``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

from pydantic import Field

from humeval.tasks.base import CriterionBase, Statistic, mark
from humeval.tasks.twoafc import TwoAFCType

__all__ = ["VOTES", "Battle", "BattleType"]

_ = mark

#: the votes of a battle, in the order the page offers them
VOTES = ("A", "B", "tie", "both-bad")


class Battle(CriterionBase):
    """An arena battle: two anonymous models' answers to one prompt; vote A, B, tie or both bad."""

    type: Literal["battle"] = Field(description="Response type: an arena battle between two anonymous models' answers "
                                                "to one prompt, voted A, B, tie or both bad.")

    def options(self) -> list[str]:
        """The votes this criterion accepts: ``A``, ``B``, ``tie``, ``both-bad``."""
        return list(VOTES)


class BattleType(TwoAFCType):
    """A pairwise choice (as ``2afc``, whose checks, rows and analyses it shares) with the arena's four votes."""

    name = "battle"
    model = Battle
    arena = True
    summary = "an arena battle: two anonymous models answer one prompt on random sides, vote A, B, tie or both bad"
    statistics = (
        *TwoAFCType.statistics[:3],
        Statistic("pooled statements (arena ranks)", True, "votes of models on prompts are the pooled Bradley-Terry "
                  "(Davidson) data"),
        *TwoAFCType.statistics[3:],
    )

    def problem_text(self, criterion: Any, field: str, gettext: Callable[[str], str]) -> str:
        return gettext(_("Vote for A, B, a tie, or both bad."))

    attention_asks: ClassVar[dict[str, str]] = {
        "A": _("This is an attention check. Please vote A (the first answer) for the question: %(question)s"),
        "B": _("This is an attention check. Please vote B (the second answer) for the question: %(question)s"),
    }

    def check_request(self, criterion: Any, expected: Any) -> str:
        return "vote A (the FIRST answer)" if expected == "A" else "vote B (the SECOND answer)"

    def heds_scale(self, criterion: Any) -> tuple[Any, str, str]:
        return len(VOTES), ", ".join(VOTES), "Multiple-choice options (arena votes)"
