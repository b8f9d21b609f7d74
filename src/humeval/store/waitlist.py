"""The waitlist, strictly first come, first served (``stopping.waitlist_seconds``).

A participant who asks for a place of a watched session while the stopping rule admits none joins the
``waitlist`` table: a row per participant id (never an address), numbered in the order they came (``seq``, given by
the database, so several server processes share one order). A waiter is *live* while they keep asking (their page
asks every ``poll_seconds``): ``last_seen`` no older than :func:`hold_seconds` and ``joined_at`` within the study's
``waitlist_seconds``. A place that opens is the earliest live waiter's: a participant may take a watched place only
when fewer live waiters are ahead of them than places are open (:func:`ahead`), so a new arrival, who is behind every
live waiter, does not jump the queue. The place stays held for the waiter for as long as they keep asking; one who
has not asked for :func:`hold_seconds` (left the page) is passed over and the place goes to the next. One who asks
again after that, or after their wait ran out, joins again at the end. A waiter who takes a list leaves the queue
(``admitted_at``); those times give the expected wait (:func:`expected_wait`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from humeval.store.sql import Step, sql_of

if TYPE_CHECKING:
    from humeval.store.context import StoreContext

__all__ = ["HOLD_MIN", "HOLD_POLLS", "Standing", "admit_step", "ahead", "expected_wait", "hold_seconds", "join",
           "place_in_queue", "poll_seconds",
           "waitlist_of"]

#: the waitlist page asks again every waitlist / POLLS seconds, within [FASTEST, SLOWEST]
POLLS, FASTEST, SLOWEST = 40, 0.25, 15.0
#: a waiter is passed over once they have not asked for HOLD_POLLS polls (at least HOLD_MIN seconds)
HOLD_POLLS, HOLD_MIN = 3, 10.0
#: admissions from the queue the expected wait is read from (the most recent)
_RECENT = 10

_ROW = "SELECT seq, joined_at, last_seen, admitted_at FROM waitlist WHERE participant_id = :pid"
_SEEN = "UPDATE waitlist SET last_seen = :now WHERE participant_id = :pid"
_DROP = "DELETE FROM waitlist WHERE participant_id = :pid"
_ADD = ("INSERT INTO waitlist (participant_id, joined_at, last_seen) VALUES (:pid, :now, :now) "
        "ON CONFLICT (participant_id) DO NOTHING")
_LIVE = "admitted_at IS NULL AND last_seen >= :seen AND joined_at >= :since"
_AHEAD = f"SELECT count(*) FROM waitlist WHERE {_LIVE} AND seq < :seq"
_ADMIT = "UPDATE waitlist SET admitted_at = :now WHERE participant_id = :pid AND admitted_at IS NULL"
_ADMITTED = f"SELECT admitted_at FROM waitlist WHERE admitted_at IS NOT NULL ORDER BY admitted_at DESC LIMIT {_RECENT + 1}"
#: a seq above every real one: someone not (or no longer) waiting is behind every live waiter
_LAST = 2**62


def waitlist_of(ctx: StoreContext) -> float:
    """The study's ``stopping.waitlist_seconds`` when a stopping rule watches lists (0: no waitlist)."""
    stopping = ctx.protocol.stopping
    return float(stopping.waitlist_seconds) if stopping is not None and ctx.list_watched else 0.0


def poll_seconds(waitlist_seconds: float) -> float:
    """How often a participant on the waitlist asks again: ``waitlist_seconds / 40`` within 0.25-15 s (600 s: 15 s)."""
    return min(SLOWEST, max(FASTEST, waitlist_seconds / POLLS))


def hold_seconds(waitlist_seconds: float) -> float:
    """How long a place is held for a waiter who stopped asking: :data:`HOLD_POLLS` polls, at least :data:`HOLD_MIN` s
    (600 s of waitlist: 45 s)."""
    return max(HOLD_MIN, HOLD_POLLS * poll_seconds(waitlist_seconds))


@dataclass(frozen=True)
class Standing:
    """A waiter's place: ``position`` (1: the next place opening is theirs) and the ``expected`` wait in seconds
    (None until two waiters were admitted: no rate is known)."""

    position: int
    expected: float | None


def _window(now: float, wait_seconds: float, hold: float, seq: int) -> dict[str, float]:
    return {"seen": now - hold, "since": now - wait_seconds, "seq": seq}


def _live_seq(row: tuple[object, ...] | None, now: float, wait_seconds: float, hold: float) -> int | None:
    if row is None or row[3] is not None:
        return None
    seq, joined, seen = row[0], float(row[1]), float(row[2])  # type: ignore[arg-type]
    return int(seq) if seen >= now - hold and joined >= now - wait_seconds else None  # type: ignore[call-overload]


def ahead(conn: Connection, participant_id: str, now: float, wait_seconds: float, hold: float) -> int:
    """Live waiters ahead of the participant (every live waiter when they are not waiting themselves)."""
    db = sql_of(conn)
    seq = _live_seq(db.one(_ROW, {"pid": participant_id}), now, wait_seconds, hold)
    return int(db.scalar(_AHEAD, _window(now, wait_seconds, hold, _LAST if seq is None else seq)) or 0)


def join(conn: Connection, participant_id: str, now: float, wait_seconds: float, hold: float) -> int:
    """The participant asks for a place and is given none: they keep their place in the queue when they are live,
    else join at its end. Their position (1-based)."""
    db = sql_of(conn)
    key = {"pid": participant_id, "now": now}
    row = db.one(_ROW, key)
    seq = _live_seq(row, now, wait_seconds, hold)
    if seq is not None:
        db.run(_SEEN, key)
    else:
        if row is not None:
            db.run(_DROP, key)
        db.run(_ADD, key)
        seq = int(db.one(_ROW, key)[0])  # type: ignore[index]
    return 1 + int(db.scalar(_AHEAD, _window(now, wait_seconds, hold, seq)) or 0)


def place_in_queue(conn: Connection, participant_id: str, now: float, wait_seconds: float, hold: float) -> Standing:
    """:func:`join`, with the expected wait of that position."""
    position = join(conn, participant_id, now, wait_seconds, hold)
    return Standing(position, expected_wait(conn, position))


def expected_wait(conn: Connection, position: int) -> float | None:
    """Seconds until the waiter at ``position`` is admitted if places keep opening as they did: ``position`` times the
    mean gap between the last admissions from the queue (up to 10 gaps); None with fewer than two admissions."""
    times = [float(r[0]) for r in sql_of(conn).all(_ADMITTED)]
    if len(times) < 2:
        return None
    return position * (times[0] - times[-1]) / (len(times) - 1)


def admit_step(participant_id: str, now: float) -> Step:
    """The statement that takes the participant out of the queue as they take a list."""
    return _ADMIT, {"pid": participant_id, "now": now}
