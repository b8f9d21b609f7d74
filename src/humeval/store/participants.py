"""Entering a study: a participant row (created once, from any platform) and a session per entry."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from sqlalchemy import Connection, insert, select, update

from humeval.store import schema as s
from humeval.store.sql import sql_of

__all__ = ["consent", "enter"]


_UPSERT = (
    "INSERT INTO participants (participant_id, platform, params, created_at, last_seen, consented_at) "
    "VALUES (:pid, :platform, :params, :now, :now, :consented) "
    "ON CONFLICT (participant_id) DO UPDATE SET last_seen = excluded.last_seen, "
    "consented_at = COALESCE(participants.consented_at, excluded.consented_at)"
)
_SESSION = "INSERT INTO sessions (session_id, participant_id, created_at, user_agent) VALUES (:sid, :pid, :now, :ua)"
_EVENT = "INSERT INTO events (at, kind, participant_id, data) VALUES (:now, 'enter', :pid, :data)"


def enter(
    conn: Connection, participant_id: str, platform: str, params: dict[str, Any], *, user_agent: str = "", consented: bool = False
) -> str:
    """Create the participant if new (a returning one keeps platform and parameters), record a session; return its id."""
    now = time.time()
    db = sql_of(conn)
    db.run(_UPSERT, {"pid": participant_id, "platform": platform, "params": json.dumps(params), "now": now,
                     "consented": now if consented else None})
    session_id = secrets.token_hex(12)
    db.run(_SESSION, {"sid": session_id, "pid": participant_id, "now": now, "ua": user_agent[:300]})
    db.run(_EVENT, {"now": now, "pid": participant_id, "data": json.dumps({"platform": platform, "session_id": session_id})})
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
