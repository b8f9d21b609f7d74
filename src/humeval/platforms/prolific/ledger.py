"""The bonus ledger: a bonus is paid at most once, even when the pay call gets no answer.

Prolific's ``POST /api/v1/bulk-bonus-payments/{id}/pay/`` is not idempotent: sent twice, it
pays twice. So every bonus goes through the store's ``bonuses`` table (one row per Prolific
study and participant) and each step is committed before the next request:

===============  =================================================================  ============
state            meaning                                                            next run
===============  =================================================================  ============
``intent``       recorded; no bonus payment set up yet                              set up
``created``      a bulk bonus payment (``bulk_id``) is set up, not paid             pay
``paying``       the pay request is being sent (a crash leaves it here)             reconcile
``unconfirmed``  the pay request got no clear answer (timeout, 5xx, crash)          reconcile
``paid``         Prolific accepted the pay request, or the submission shows it      nothing
===============  =================================================================  ============

Reconciling asks Prolific for the submission (``GET /api/v1/submissions/{id}/``) and marks
the row ``paid`` when its ``bonus_payments`` hold the amount; otherwise the row stays
``unconfirmed`` and is never paid again by humeval (Prolific pays asynchronously, so a
missing payment may still arrive; docs/prolific.md says what to do).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, insert, select, update

from humeval.store import schema as s

__all__ = ["STATES", "BonusRow", "add_intents", "read_bonuses", "set_state"]

STATES = ("intent", "created", "paying", "unconfirmed", "paid")


@dataclass(frozen=True)
class BonusRow:
    platform_study: str
    participant_id: str
    submission_id: str
    amount_cents: int
    state: str
    bulk_id: str | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"participant_id": self.participant_id, "submission_id": self.submission_id,
                "amount": self.amount_cents / 100, "state": self.state, "bulk_id": self.bulk_id or "",
                "detail": self.detail}


def read_bonuses(conn: Connection, platform_study: str) -> list[BonusRow]:
    """Every ledger row of a Prolific study, by participant."""
    b = s.bonuses.c
    rows = conn.execute(select(s.bonuses).where(b.platform_study == platform_study).order_by(b.participant_id)).all()
    return [BonusRow(r.platform_study, r.participant_id, r.submission_id, r.amount_cents, r.state, r.bulk_id, r.detail)
            for r in rows]


def add_intents(conn: Connection, platform_study: str, wanted: list[tuple[str, str]], amount_cents: int) -> list[str]:
    """Record the intent to pay ``amount_cents`` to each ``(participant_id, submission_id)`` without a row yet;
    return the participants added (a participant already in the ledger is never added twice)."""
    b = s.bonuses.c
    have = set(conn.execute(select(b.participant_id).where(b.platform_study == platform_study)).scalars())
    now = time.time()
    added = []
    for pid, submission in wanted:
        if pid in have:
            continue
        conn.execute(insert(s.bonuses).values(platform_study=platform_study, participant_id=pid, submission_id=submission,
                                              amount_cents=amount_cents, state="intent", bulk_id=None, created_at=now,
                                              updated_at=now, detail=""))
        have.add(pid)
        added.append(pid)
    return added


def set_state(conn: Connection, platform_study: str, participants: list[str], state: str, *,
              bulk_id: str | None = None, detail: str = "", only_from: tuple[str, ...] = ()) -> int:
    """Move the participants' rows to ``state`` (only rows now in ``only_from`` when given); return how many moved."""
    if state not in STATES:
        raise ValueError(f"unknown bonus state {state!r}")
    b = s.bonuses.c
    values: dict[str, Any] = {"state": state, "updated_at": time.time(), "detail": detail}
    if bulk_id is not None:
        values["bulk_id"] = bulk_id
    cond = and_(b.platform_study == platform_study, b.participant_id.in_(participants))
    if only_from:
        cond = and_(cond, b.state.in_(only_from))
    return int(conn.execute(update(s.bonuses).where(cond).values(**values)).rowcount or 0)
