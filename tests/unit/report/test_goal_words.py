"""The report's words for a goal over K systems: an unreachable goal and intransitive judgements are said."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from humeval.report.build import _stopping
from humeval.results import Stopping


def _decision(**extra: Any) -> dict[str, Any]:
    d = {"criterion": "fluency", "goal": "best", "top": 1, "systems": ["A", "B", "C", "D"], "a": None, "b": None,
         "rule": "anytime", "delta": 0.05, "anytime_valid": True, "outcome": "continue", "decision": "continue",
         "n": 412, "collected": 412, "contention": [], "reachable": False, "live_n": None,
         "intransitive": ("Judgements look intransitive: A>B>C>A (win shares 0.70, 0.68, 0.71; resolved); the goal "
                          "announces only what direct tests resolved")}
    return d | extra


def _paragraph(d: dict[str, Any]) -> str:
    results = SimpleNamespace(criteria={"fluency": SimpleNamespace(stopping=Stopping(**d))}, signature="sig")
    section = _stopping(results)  # type: ignore[arg-type]
    assert section is not None
    return section.paragraphs[0]


def test_unreachable_goal_and_cycle_are_said() -> None:
    text = _paragraph(_decision())
    assert "cannot identify the best system: after n = 412 judgements the pairs resolved directly admit no answer" in text
    assert text.endswith("Judgements look intransitive: A>B>C>A (win shares 0.70, 0.68, 0.71; resolved); the goal "
                         "announces only what direct tests resolved.")


def test_no_cycle_no_line() -> None:
    text = _paragraph(_decision(reachable=True, intransitive="", contention=["A", "B"]))
    assert "2 systems in contention" in text and "intransitive" not in text
