"""Signed deliveries of a platform (Prolific's hooks) received lately, so that a replay of one does nothing.

A delivery is named by a key its sender's signature fixes (:func:`humeval.platforms.prolific.webhooks.delivery_key`).
:func:`first_delivery` records the key and says whether it is new: the insert of a key already there
changes no row, on SQLite and PostgreSQL alike, so two processes receiving the same delivery at once
handle it once. Keys older than ``keep`` seconds are dropped (a request that old is refused by its
timestamp anyway).
"""

from __future__ import annotations

import time

from sqlalchemy import Connection

from humeval.store.sql import sql_of

__all__ = ["first_delivery", "forget_delivery"]

_RECORD = "INSERT INTO hook_deliveries (delivery, at) VALUES (:d, :now) ON CONFLICT (delivery) DO NOTHING"
_PRUNE = "DELETE FROM hook_deliveries WHERE at < :old"
_FORGET = "DELETE FROM hook_deliveries WHERE delivery = :d"


def first_delivery(conn: Connection, key: str, keep: float, now: float | None = None) -> bool:
    """Record the delivery ``key``; True when it is new, False for a replay of one received within ``keep`` s."""
    now = time.time() if now is None else now
    got = sql_of(conn).batch([(_PRUNE, {"old": now - keep}), (_RECORD, {"d": key, "now": now})], commit=True)
    return got[1].rowcount == 1


def forget_delivery(conn: Connection, key: str) -> None:
    """Drop the record of ``key`` (its handling failed: the sender's retry is handled again)."""
    sql_of(conn).batch([(_FORGET, {"d": key})], commit=True)
