"""Entering a study: a participant row (created once, from any platform) and a session per entry."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from sqlalchemy import Connection, insert, select, update

from humeval.store import schema as s

__all__ = ["consent", "enter"]


def enter(
    conn: Connection, participant_id: str, platform: str, params: dict[str, Any], *, user_agent: str = "", consented: bool = False
) -> str:
    """Create the participant if new, record a session; return the session id."""
    now = time.time()
    p = s.participants.c
    row = conn.execute(select(p.participant_id, p.consented_at).where(p.participant_id == participant_id)).first()
    if row is None:
        conn.execute(
            insert(s.participants).values(
                participant_id=participant_id, platform=platform, params=json.dumps(params), created_at=now,
                last_seen=now, consented_at=now if consented else None,
            )
        )
    else:
        values: dict[str, Any] = {"last_seen": now}
        if consented and row.consented_at is None:
            values["consented_at"] = now
        conn.execute(update(s.participants).where(p.participant_id == participant_id).values(**values))
    session_id = secrets.token_hex(12)
    conn.execute(
        insert(s.sessions).values(session_id=session_id, participant_id=participant_id, created_at=now, user_agent=user_agent[:300])
    )
    conn.execute(
        insert(s.events).values(at=now, kind="enter", participant_id=participant_id, data=json.dumps({"platform": platform, "session_id": session_id}))
    )
    return session_id


def consent(conn: Connection, participant_id: str) -> bool:
    """Record consent (once); False if the participant does not exist."""
    now = time.time()
    p = s.participants.c
    row = conn.execute(select(p.consented_at).where(p.participant_id == participant_id)).first()
    if row is None:
        return False
    if row.consented_at is None:
        conn.execute(update(s.participants).where(p.participant_id == participant_id).values(consented_at=now))
        conn.execute(insert(s.events).values(at=now, kind="consent", participant_id=participant_id, data="{}"))
    return True
