"""How final a set of results is: the caveats the report opens with and the CLI prints after ``analyze`` and ``report``.

Results computed before the study is complete, or while a stopping rule has not decided, are preliminary: a
reader must learn that before the first number. :func:`caveats` states it, once, from what the files say
(``collation.json`` and ``results.json``); the report puts each caveat in a banner at its top, and
``humeval analyze`` and ``humeval report`` print them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from humeval.analysis.workspace import Workspace
    from humeval.results import Results, Stopping

__all__ = ["caveats", "workspace_caveats"]


def _undecided(criterion: str, d: Stopping) -> str | None:
    """A stopping rule's replayed decision that is not one, in words (``None`` when it decided)."""
    if d.outcome in ("A", "B", "decided"):
        return None
    what = f"{d.a} vs {d.b}" if d.pairwise else f"goal {d.goal}"
    if d.outcome == "horizon":
        return (f"UNDECIDED: {criterion} ({what}): the stopping rule reached its horizon without a decision; "
                "no system is shown to be better.")
    return (f"UNDECIDED: {criterion} ({what}): the stopping rule has not decided after n = {d.n} "
            "judgements; its comparison is still open and any ranking of it is preliminary.")


def caveats(results: Results, collation: Mapping[str, Any] | None) -> list[str]:
    """Why ``results`` are not final, one sentence each (empty when they are).

    * INCOMPLETE: collation found tasks short of their judgements (``collation.json``), or collation has
      not been run, so completeness is unknown;
    * UNDECIDED: a criterion's stopping rule, replayed on the valid judgements, has not decided (or stopped
      at its horizon without a decision);
    * DRIFT: the preregistered drift check (``stopping.drift_check``) flagged a decision: the crowd's
      preference changed while its judgements were collected, so the decision is about the mixture of both
      (:func:`humeval.analysis.drift.drift_text`).

    A dry run or rehearsal has its own banner (simulated participants) and is not repeated here.
    """
    out: list[str] = []
    if collation is None:
        out.append("PRELIMINARY: collation has not been run, so it is unknown whether every task has its "
                   "judgements; run `humeval collate`.")
    elif not collation.get("complete", False):
        required = int(collation.get("required_per_task") or 0) * int(collation.get("tasks") or 0)
        missing = int(collation.get("judgements_missing") or 0)
        of = f" of the {required} the design asks for" if required else ""
        out.append(f"INCOMPLETE, PRELIMINARY RESULTS: {missing} judgements{of} are missing "
                   f"({collation.get('tasks_incomplete')} of {collation.get('tasks')} tasks short); every number "
                   "rests on part of the data and may change when the rest is collected.")
    for name, res in results.criteria.items():
        if res.stopping and (text := _undecided(name, res.stopping)) is not None:
            out.append(text)
        d = res.stopping
        if d is not None and d.drift is not None and d.drift.flagged:
            from humeval.analysis.drift import drift_text

            out.append(f"DRIFT: {name} ({d.a} vs {d.b}): {drift_text(d.drift, d.a)}.")
    return out


def workspace_caveats(ws: Workspace) -> list[str]:
    """:func:`caveats` of the results in the folder ``ws`` (its ``results.json`` and ``collation.json``)."""
    from humeval.files import read_json
    from humeval.results import Results

    results = Results.read(ws.results)
    return caveats(results, read_json(ws.collation) if ws.collation.is_file() else None)
