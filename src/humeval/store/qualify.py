"""Attempts at the qualification checks (``design.qualification_attempts``).

The qualification is the first ``design.qualification`` attention checks of every list
(:func:`humeval.design.tasks.is_qualification`). With two attempts or more, a participant whose answer to one of
them is not the one it asks for may answer it again, at once: the answer is an edit of the check's judgement (its
next ``revision``), and the latest answer is the one the ``attention`` rule judges, here, at settlement and in
``humeval exclude`` alike. An attempt is left while the latest answer fails, fewer than the attempts were used, and
the participant has answered nothing after the qualification (moving on gives up the attempts left). While an
attempt is left at a failed check, the qualification is not decided (:func:`undecided`), so ``stopping.feed:
judgement`` neither excludes nor feeds before the participant had every attempt.

Pure functions over the participant's latest judgements (:func:`humeval.store.reads.latest_judgements`).
"""

from __future__ import annotations

from typing import Any

from humeval.design.tasks import is_qualification
from humeval.store.context import StoreContext

__all__ = ["attempts_left", "undecided"]


def _fails(ctx: StoreContext, judgement: dict[str, Any]) -> bool:
    """Whether a check's answer is not the one it asks for (the ``attention`` rule on this one check)."""
    from humeval.judgements.exclusion import participant_exclusions
    from humeval.protocol.models import AttentionExclusion

    strict = ctx.protocol.model_copy(update={"exclusion": [AttentionExclusion(rule="attention", max_failures=0)]})
    return participant_exclusions(strict, ctx.tasks, [judgement])[0]


def _left(ctx: StoreContext, latest: list[dict[str, Any]]) -> dict[str, int]:
    """The attempts left at each qualification check the participant answered (by assignment id)."""
    design = ctx.protocol.design
    if design.qualification_attempts < 2:
        return {}
    answered = [j for j in latest if j["kind"] != "practice"]  # the practice items come first and are no tasks
    checks = [j for j in answered if is_qualification(ctx.tasks[j["task_id"]], design)]
    if len(checks) < len(answered):  # answered something after the qualification: the attempts left are given up
        return {j["assignment_id"]: 0 for j in checks}
    return {j["assignment_id"]: max(0, design.qualification_attempts - 1 - int(j["revision"])) if _fails(ctx, j) else 0
            for j in checks}


def attempts_left(ctx: StoreContext, latest: list[dict[str, Any]], assignment_id: str) -> int:
    """The attempts the participant has left at the qualification check ``assignment_id`` (0: none, or not a
    qualification check, or answered as it asks)."""
    return _left(ctx, latest).get(assignment_id, 0)


def undecided(ctx: StoreContext, latest: list[dict[str, Any]]) -> bool:
    """Whether a failed qualification check may still be answered again (the qualification is not decided)."""
    return any(_left(ctx, latest).values())
