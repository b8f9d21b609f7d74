"""The ``exclude`` stage: the preregistered exclusion rules (requires a lock of the ``exclusion`` section)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from humeval.analysis.workspace import Workspace, read_study_judgements, study_workspace
from humeval.files import write_json, write_jsonl
from humeval.stage import StageOutput
from humeval.study import StudyFolder

if TYPE_CHECKING:
    import pandas as pd

    from humeval.design.tasks import ParticipantList
    from humeval.protocol.models import Protocol

__all__ = ["exclude_stage", "exclude_workspace", "exclusion_summary"]


def exclusion_summary(counts: dict[str, Any]) -> dict[str, Any]:
    """The stage's summary of ``exclusion.json``, flat (the CLI prints it on one line): the totals, then per rule
    ``by_<rule>: "participants/judgements"`` and, with an ``attention`` rule, ``checks_failed``: the attention
    checks failed of those answered per expected answer (``"q=A 0/3, q=B 1/3"``), and with a qualification
    ``qualification``: who passed it (after a second attempt), failed it, of those who answered it; with practice
    items, ``practice_right``: per item that names an answer, the participants who answered it right of those who
    answered it."""
    summary = {k: v for k, v in counts.items() if k not in ("rules", "attention_checks", "qualification", "practice")}
    for r in counts["rules"]:
        summary[f"by_{r['rule']}"] = f"{r['participants']}/{r['judgements']}"
    if counts.get("attention_checks"):
        summary["checks_failed"] = ", ".join(f"{c['criterion']}={c['expected']} {c['failed']}/{c['answered']}"
                                             for c in counts["attention_checks"])
    if (q := counts.get("qualification")) is not None:
        summary["qualification"] = (f"{q['passed']} passed ({q['passed_retried']} after a second attempt), "
                                    f"{q['failed']} failed of {q['participants']}")
    if (p := counts.get("practice")) is not None:
        summary["practice_right"] = ", ".join(f"item {i['item']} {i['right']}/{i['answered']}" for i in p["items"]
                                              if i["right"] is not None) or "no item names an answer"
    return summary


def exclude_workspace(ws: Workspace, protocol: Protocol, judgements: pd.DataFrame,
                      excluded: pd.DataFrame, lists: list[ParticipantList] | None = None,
                      ) -> tuple[dict[str, Any], list[Path]]:
    """Write ``excluded`` (the rules applied to ``ws``'s ``judgements``) as ``excluded.jsonl``, and its counts
    as ``exclusion.json`` (per rule, and with ``lists`` the attention checks failed per expected answer and how the
    practice went, :func:`humeval.judgements.practice.practice_counts`)."""
    from humeval.judgements.exclusion import exclusion_counts
    from humeval.judgements.practice import practice_counts

    counts = exclusion_counts(judgements, excluded, protocol, lists)
    if lists and protocol.design.practice:  # judged by no rule, counted beside them (the report's paragraph)
        counts["practice"] = practice_counts(judgements, lists)
    write_jsonl(ws.excluded, excluded.to_dict(orient="records"))
    return counts, [ws.excluded, write_json(ws.exclusion, counts)]


def exclude_stage(study: StudyFolder) -> StageOutput:
    """``humeval exclude``: the preregistered exclusion rules (requires a lock of the ``exclusion`` section)."""
    from humeval.judgements.exclusion import exclusions

    protocol = study.protocol
    lists = study.read_lists()
    ws = study_workspace(study)
    judgements = read_study_judgements(ws)
    counts, paths = exclude_workspace(ws, protocol, judgements, exclusions(judgements, protocol, lists), lists)
    summary = exclusion_summary(counts)
    return StageOutput(outputs=paths, parameters={"rules": [r.model_dump() for r in protocol.exclusion]},
                       summary=summary)
