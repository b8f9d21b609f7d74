"""Screening out at the end: did a participant fail the attention checks (the protocol's ``attention`` rule)?

Judged when the participant reaches the end, on their stored judgements of attention-check
tasks, by the exclude stage's own rule (:func:`humeval.judgements.exclusion.participant_exclusions`),
so the completion page and the later ``humeval exclude`` agree. Only the ``attention`` rule
screens out at the end; the other rules (straight-lining, same side, timing, consistency) are applied
after collection, and their participants get the completion link.
"""

from __future__ import annotations

from sqlalchemy import Connection

from humeval.store.context import StoreContext
from humeval.store.reads import latest_judgements

__all__ = ["failed_attention"]


def failed_attention(conn: Connection, ctx: StoreContext, participant_id: str) -> bool:
    """Whether the participant failed more attention checks than the protocol's ``attention`` rule tolerates."""
    rules = [r for r in ctx.protocol.exclusion if r.rule == "attention"]
    if not rules:
        return False
    checks = [j for j in latest_judgements(conn, participant_id) if j["kind"] == "attention"]
    if not checks:
        return False
    from humeval.judgements.exclusion import participant_exclusions

    excluded, _, _ = participant_exclusions(ctx.protocol.model_copy(update={"exclusion": rules}), ctx.tasks, checks)
    return excluded
