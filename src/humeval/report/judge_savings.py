"""The report's table of the human labels each automatic judge saves at the study's precision, with its range.

The same prediction as ``humeval budget`` (:func:`humeval.judge_budget.judge_savings`), made from the study's
own human judgements instead of a pilot's: the judge-human correlation within systems with its 95 % Fisher-z
interval, and the labels PPI++ needs for the precision of the human-only interval at that correlation and at
both ends of its interval.
"""

from __future__ import annotations

from pathlib import Path

from humeval.report.document import Section, Table
from humeval.study import StudyFolder

__all__ = ["judge_savings_section"]


def judge_savings_section(study: StudyFolder, judgements: Path) -> Section | None:
    """One row per judge of the analysis plan and criterion it stands in for, or None without such judges."""
    if not study.protocol.analysis.judges or not judgements.is_file():
        return None
    from humeval.judge_budget import judge_savings

    savings, notes = judge_savings(study, judgements)
    if not savings and not notes:
        return None
    rows = [list(s.row().values()) for s in savings]
    columns = list(savings[0].row()) if savings else []
    paragraphs = ["How many human labels each judge saves at this study's precision: the judge-human correlation "
                  "within systems (rho, with its 95% interval) from this study's judgements, and the labels "
                  "prediction-powered inference needs for the human-only interval's half-width with the judge "
                  "scoring every item it scored, at rho and at both ends of its interval (`humeval budget` makes the "
                  "same prediction from a pilot before launch; docs/budget.md). It assumes the human-labelled items "
                  "are a uniform random sample of the items the judge scored.", *notes]
    return Section("Human labels the judges save", paragraphs,
                   [Table("judges: human labels for the same precision without and with the judge", columns, rows)]
                   if rows else [])
