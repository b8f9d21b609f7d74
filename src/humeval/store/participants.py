"""Entering a study: a participant row (created once, pinned to its route) and a session per entry.

A participant row records the route of the first entry (``platform``: the platform kind,
``invite`` or ``local`` for an open id) and its link parameters (``params``). A later entry
through another route is refused (nothing is written): a participant admitted with an invite
cannot be entered by id alone. A later entry with other link parameters is refused too: a
Prolific participant is pinned to the ``STUDY_ID`` and ``SESSION_ID`` of their first entry,
so whoever knows a ``PROLIFIC_PID`` is not that participant (403 ``entry_session_mismatch``).

A new participant is admitted within :class:`EntryLimits`, counted in the store (so shared by every
process and machine), in this order: fewer than ``per_network`` new participants entered in the last
``window`` seconds from the client's network, and fewer than ``per_wide`` from its wider network
(429 ``too_many_new_participants``); fewer than ``max_active`` unfinished participants seen within a
lease (503 ``study_full``); fewer than ``budget`` new participants in the window from every network
together (503 ``entry_rate``). The networks are stored as keys (:func:`network_key`: an HMAC of the
network under the store's secret), never as addresses: the store can count a network's entries but
not say which network it was.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from humeval.store.refusal import Refusal
from humeval.store.sql import Step, sql_of

__all__ = [
    "TOUCH", "EntryLimits", "EntryRate", "NetworkRate", "StudyFull", "active_unfinished", "consent", "decline", "enter",
    "network_key", "route_of",
]


_UPSERT = (
    "INSERT INTO participants (participant_id, platform, params, created_at, last_seen, consented_at, network, "
    "wide_network) VALUES (:pid, :platform, :params, :now, :now, :consented, :net, :wide) "
    "ON CONFLICT (participant_id) DO UPDATE SET last_seen = excluded.last_seen, "
    "consented_at = COALESCE(participants.consented_at, excluded.consented_at) "
    "WHERE participants.platform = excluded.platform AND participants.params = excluded.params"
)
#: a participant seen now (an entry sets it with the row; every operation of theirs after that, with this)
TOUCH = "UPDATE participants SET last_seen = :now WHERE participant_id = :pid"
_ROUTE = "SELECT platform FROM participants WHERE participant_id = :pid"
_FIRST = "SELECT platform, params FROM participants WHERE participant_id = :pid"
_ACTIVE = "SELECT COUNT(*) FROM participants WHERE completed_at IS NULL AND last_seen >= :cut"
_RECENT = "SELECT COUNT(*), MIN(created_at) FROM participants WHERE created_at >= :since"
_RECENT_NET = "SELECT COUNT(*), MIN(created_at) FROM participants WHERE network = :net AND created_at >= :since"
_RECENT_WIDE = "SELECT COUNT(*), MIN(created_at) FROM participants WHERE wide_network = :wide AND created_at >= :since"
#: PostgreSQL: the entries of one network are counted and written one at a time (a lock held to the entry's commit),
#: so that concurrent entries from one network cannot both see room for one more (SQLite's writer is one already)
_LOCK_NETWORK = "SELECT pg_advisory_xact_lock(hashtextextended(:lock, 7))"
_ROUTES = {"invite": "their invite link", "local": "a participant id"}
_ROUTE_IS = ("EXISTS (SELECT 1 FROM participants WHERE participant_id = :pid AND platform = :platform "
             "AND params = :params)")
_SESSION = f"INSERT INTO sessions (session_id, participant_id, created_at, user_agent) SELECT :sid, :who, :now, :ua WHERE {_ROUTE_IS}"
_EVENT = f"INSERT INTO events (at, kind, participant_id, data) SELECT :now, 'enter', :who, :data WHERE {_ROUTE_IS}"


class StudyFull(Refusal):
    """503: the study holds its maximum of unfinished participants; ``retry_after`` seconds."""

    def __init__(self, max_active: int, retry_after: int = 60) -> None:
        super().__init__("study_full", f"the study has {max_active} participants at work right now; please try again "
                         "in a few minutes", status=503, retry_after=retry_after)


class EntryRate(Refusal):
    """503: as many new participants entered in the last ``window`` seconds as the study admits; ``retry_after``."""

    def __init__(self, most: int, window: float, retry_after: int) -> None:
        super().__init__("entry_rate", f"{most} new participants started in the last {window:g} s, as many as the study "
                         f"admits in that time; please try again in {retry_after} s", status=503, retry_after=retry_after)


class NetworkRate(Refusal):
    """429: ``most`` new participants entered from the client's network (``what``) in the last ``window`` seconds."""

    def __init__(self, most: int, what: str, window: float, retry_after: int) -> None:
        super().__init__("too_many_new_participants", f"{most} new participants started from your {what} in the last "
                         f"{window:g} s, as many as the study admits from one network in that time; please try again in "
                         f"{retry_after} s", status=429, retry_after=retry_after)


@dataclass(frozen=True)
class EntryLimits:
    """The bounds on new participants (0: none): ``per_network`` and ``per_wide`` from one network and one wider
    network, ``budget`` from every network together, each within ``window`` seconds; ``max_active`` unfinished
    participants seen within a lease."""

    max_active: int = 0
    budget: int = 0
    per_network: int = 0
    per_wide: int = 0
    window: float = 300.0


#: no bound at all (the server's own machine, the Python API)
NO_LIMITS = EntryLimits()


def network_key(secret: bytes, network: str) -> str:
    """How the store names a client network (``198.51.100.0/24``): an HMAC-SHA256 under the store's ``secret``
    (hex, 32 characters). The same network gives the same key in every process of the study; without the secret
    the key says nothing of the network."""
    return hmac.new(secret, b"network|" + network.encode(), hashlib.sha256).hexdigest()[:32]


def _retry(oldest: Any, window: float, now: float) -> int:
    """Seconds until the oldest entry counted in a window leaves it (at least 1)."""
    return max(1, math.ceil(float(oldest) + window - now)) if oldest is not None else max(1, math.ceil(window))


def route_of(conn: Connection, participant_id: str) -> str | None:
    """The platform label the participant first entered with, or None for someone new."""
    route = sql_of(conn).scalar(_ROUTE, {"pid": participant_id})
    return None if route is None else str(route)


def active_unfinished(conn: Connection, since: float) -> int:
    """Participants not yet completed who were seen at or after ``since``."""
    return int(sql_of(conn).scalar(_ACTIVE, {"cut": since}) or 0)


def _mismatch(participant_id: str, first: str, platform: str) -> Refusal:
    how = _ROUTES.get(first, f"the {first} link")
    return Refusal("entry_route_mismatch", f"this participant entered through {how}; re-enter the same way "
                   f"(entry as {platform} refused)", status=403)


def _other_link(first: str, params: dict[str, Any]) -> Refusal:
    """A returning participant whose link differs from their first entry's: name the fields, never their values."""
    try:
        before = json.loads(first or "{}")
    except ValueError:
        before = {}
    differ = sorted(k for k in set(before) | set(params) if before.get(k) != params.get(k)) or ["the link"]
    return Refusal("entry_session_mismatch", f"this participant entered with another {', '.join(differ)}; a "
                   "participant re-enters only with the link of their first entry (the same session)", status=403)


def enter(
    conn: Connection, participant_id: str, platform: str, params: dict[str, Any], *, user_agent: str = "",
    consented: bool = False, limits: EntryLimits = NO_LIMITS, networks: tuple[str | None, str | None] = (None, None),
    active_window: float = 1800.0,
) -> str:
    """Create the participant if new (a returning one keeps platform and parameters), record a session; return its id.

    Refuses (nothing written) a returning participant entering through another route or with
    other link parameters (another ``SESSION_ID``), and a new one beyond ``limits`` (see the module):
    ``networks`` are the keys (:func:`network_key`) of the client's network and wider network, None for
    a client counted by no network (the server's own machine). ``max_active`` counts within
    ``active_window`` seconds.
    """
    now = time.time()
    db = sql_of(conn)
    net, wide = networks
    key: dict[str, Any] = {"pid": participant_id, "cut": now - active_window, "since": now - limits.window, "net": net, "wide": wide}
    encoded = json.dumps(params)
    # two batches (two round trips on PostgreSQL): who this is (and the counts that bound a new one), then the writes
    checks = [(_RECENT_NET, "network", limits.per_network, net), (_RECENT_WIDE, "wider network", limits.per_wide, wide)]
    counted = [(sql, what, most) for sql, what, most, value in checks if most > 0 and value is not None]
    # (the wider network's lock covers its networks' entries too)
    lock: list[Step] = [(_LOCK_NETWORK, {"lock": wide if limits.per_wide and wide else net})] if db.pg and counted else []
    steps: list[Step] = ([(_FIRST, key)] + [(sql, key) for sql, _, _ in counted]
                         + ([(_ACTIVE, key)] if limits.max_active else []) + ([(_RECENT, key)] if limits.budget else []))
    got = db.batch(lock + steps)[len(lock):]
    found = got[0].first
    if found is None:
        for (_, what, most), rows in zip(counted, got[1:], strict=False):
            count, oldest = rows.first or (0, None)
            if int(count or 0) >= most:
                raise NetworkRate(most, what, limits.window, _retry(oldest, limits.window, now))
        if limits.max_active and int(got[1 + len(counted)].scalar or 0) >= limits.max_active:
            raise StudyFull(limits.max_active)
        if limits.budget:
            count, oldest = got[-1].first or (0, None)
            if int(count or 0) >= limits.budget:
                raise EntryRate(limits.budget, limits.window, _retry(oldest, limits.window, now))
    elif found[0] != platform:
        raise _mismatch(participant_id, found[0], platform)
    elif found[1] != encoded:
        raise _other_link(found[1], params)
    session_id = secrets.token_hex(12)
    row = {"pid": participant_id, "who": participant_id, "platform": platform, "params": encoded, "now": now,
           "consented": now if consented else None, "net": net, "wide": wide, "sid": session_id, "ua": user_agent[:300],
           "data": json.dumps({"platform": platform, "session_id": session_id})}
    # (``who`` is ``pid`` again: PostgreSQL types a parameter once, and a value inserted is text where one
    # compared with a column is the column's type) the session and its event are written only if the participant's route is this one (they commit with
    # the batch even when another process created the participant through another route meanwhile)
    got = db.batch([(_UPSERT, row), (_SESSION, row), (_EVENT, row), (_FIRST, row)], commit=True)
    if got[0].rowcount != 1:  # another process created the participant meanwhile, through another route or link
        first = got[3].first
        if first is not None and first[0] == platform:
            raise _other_link(first[1], params)
        raise _mismatch(participant_id, str(first[0] if first else None), platform)
    return session_id


_CONSENT_EVENT = (
    "INSERT INTO events (at, kind, participant_id, data) SELECT :now, 'consent', :who, '{}' "
    "WHERE EXISTS (SELECT 1 FROM participants WHERE participant_id = :pid AND consented_at IS NULL)"
)
_CONSENT = "UPDATE participants SET consented_at = :now WHERE participant_id = :pid AND consented_at IS NULL"
_KNOWN = "SELECT 1 FROM participants WHERE participant_id = :pid"


def consent(conn: Connection, participant_id: str) -> bool:
    """Record consent (once); False if the participant does not exist."""
    key = {"now": time.time(), "pid": participant_id, "who": participant_id}
    got = sql_of(conn).batch([(_CONSENT_EVENT, key), (_CONSENT, key), (_KNOWN, key)], commit=True)
    return got[2].first is not None


_DECLINED = "INSERT INTO events (at, kind, participant_id, data) VALUES (:now, 'declined', :pid, '{}')"
#: a list is freed only for one who answered nothing on it: judgements given stay on their list until the participant
#: is settled (their lease expires, :func:`humeval.store.live.settle_abandoned`), so that a live stopping rule counts
#: them as pending until they are fed (a list freed with answers on it hid them from the admission of sessions)
_DECLINE_LIST = ("UPDATE lists SET participant_id = NULL, expires_at = NULL WHERE completed = 0 AND participant_id = :pid "
                 "AND NOT EXISTS (SELECT 1 FROM assignments WHERE participant_id = :pid AND status = 'done')")


def decline(conn: Connection, participant_id: str) -> None:
    """Record a declined consent (an event) and free the participant's unfinished list for someone else, if they
    answered nothing (one who answered and then declines keeps their list until they are settled as abandoned)."""
    key = {"now": time.time(), "pid": participant_id}
    sql_of(conn).batch([(_DECLINE_LIST, key), (_DECLINED, key)], commit=True)
