"""The store's tables (SQLAlchemy Core). Times are UNIX seconds (float); JSON is stored as text.

=================  ===========================================================================
``schema_version``  applied migrations (see :mod:`humeval.store.migrations`)
``meta``            key/value settings: the persisted session secret, the seeded protocol hash
``outputs``         the texts shown: one row per (item, system), copied from the data files
``tasks``           every task with its cap (judgements wanted), ``taken`` (leased + done) and
                    ``closed`` (no longer served: the stopping rule decided)
``lists``           participant lists (``list`` strategy) and who holds each, with a lease
``list_tasks``      the tasks of a list in display order, with the assignment made from each
``participants``    who entered, from which platform, with what parameters (and the keys of
                    the client's networks, never its address)
``sessions``        one row per entry (a token names its session)
``assignments``     a task leased to a participant (display order of systems fixed here)
``judgements``      append-only answers; ``idempotency_key`` is unique; an edit is a new row
``outcomes``        aggregated pairwise outcomes in the order the stopping rule consumed them
``stopping``        the live decision per comparison (one per ``2afc`` criterion)
``watched_tasks``   the pair tasks of each watched comparison (seeded; bounds leases in flight)
``pending``         pool strategies: a task's label waiting until every contributor is settled
``settled``         participants whose judgements can no longer change or be excluded, and
                    whether the preregistered exclusion rules excluded them
``fed``             per comparison and assignment: ``seq``, the judgement's place in the rule's
                    outcome sequence (the export's ``stop_seq``), NULL when dropped unfed
``events``          an audit trail: entries, expired leases, decisions
``bonuses``         platform bonuses: intent recorded before the pay call, state after it
                    (one row per platform study and participant: a bonus is never paid twice)
=================  ===========================================================================
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    and_,
)

__all__ = [
    "assignments",
    "bonuses",
    "events",
    "fed",
    "judgements",
    "list_tasks",
    "lists",
    "meta",
    "metadata",
    "outcomes",
    "outputs",
    "participants",
    "pending",
    "schema_version",
    "sessions",
    "settled",
    "stopping",
    "tasks",
    "watched_tasks",
]

metadata = MetaData()

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Float, nullable=False),
)

meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

outputs = Table(
    "outputs",
    metadata,
    Column("item_id", String(200), primary_key=True),
    Column("system", String(200), primary_key=True),
    Column("output", Text, nullable=False),
    Column("input", Text, nullable=False, default=""),
    Column("references", Text, nullable=False, default=""),
    Column("format", String(20), nullable=False, default="", server_default=""),
)

tasks = Table(
    "tasks",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("task_id", String(400), nullable=False, unique=True),
    Column("item_id", String(200), nullable=False),
    Column("systems", Text, nullable=False),
    Column("criteria", Text, nullable=False),
    Column("family", String(16), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("expected", Text, nullable=False, default="null"),
    Column("text", Text, nullable=False, default=""),
    Column("repeat_of", String(400), nullable=False, default=""),
    Column("cap", Integer, nullable=False),
    Column("taken", Integer, nullable=False, default=0),
    Column("open", Integer, nullable=False, default=1),
    Column("closed", Integer, nullable=False, default=0),
    #: the lease that took the last unit of the cap (:data:`humeval.store.lease.TAKE`): the statements after a take, in
    #: its batch, act only if it was theirs
    Column("taken_by", String(64), nullable=True),
)
Index("ix_tasks_pool", tasks.c.open, tasks.c.closed, tasks.c.seq)

lists = Table(
    "lists",
    metadata,
    Column("list_id", String(64), primary_key=True),
    Column("round", Integer, nullable=False),
    Column("size", Integer, nullable=False),
    Column("participant_id", String(200), nullable=True),
    Column("expires_at", Float, nullable=True),
    Column("completed", Integer, nullable=False, default=0),
    #: the list's pair tasks watched by a stopping rule (> 0: a session admitted by the rule, :mod:`humeval.stopping.admission`)
    Column("watched", Integer, nullable=False, default=0, server_default="0"),
)

#: who holds which list (a participant's list, releasing it): the held lists only. The claim's indexes: the lists
#: nobody holds and nobody finished, in list order, one per kind of list a claim may ask for (any, a session of a
#: watched comparison, the others; :data:`humeval.store.assign._NEW_LIST`), each with the claim's conditions
#: exactly, so that the first free list is the first entry at any size of study; and the unfinished lists by
#: expiry (those whose reservation ran out: :data:`humeval.store.assign._LEFT_LIST`). None leads with a column a
#: claim tests for equality on every list (``completed``, ``participant_id IS NULL``): SQLite, without statistics,
#: would take such an index for the narrower and sort every free list (``tests/unit/store/test_claim_plans.py``).
_HELD = lists.c.participant_id.isnot(None)
_FREE = and_(lists.c.participant_id.is_(None), lists.c.completed == 0)
_FREE_WATCHED = and_(_FREE, lists.c.watched > 0)
_FREE_UNWATCHED = and_(_FREE, lists.c.watched == 0)
Index("ix_lists_held", lists.c.participant_id, postgresql_where=_HELD, sqlite_where=_HELD)
#: ``watched >= 0`` (every list) so that only a claim of any list implies this index's conditions: SQLite, which
#: has no statistics to tell the partial indexes apart, would walk it for a claim of one kind, past the others
_FREE_ANY = and_(_FREE, lists.c.watched >= 0)
Index("ix_lists_free", lists.c.list_id, postgresql_where=_FREE_ANY, sqlite_where=_FREE_ANY)
Index("ix_lists_free_watched", lists.c.list_id, postgresql_where=_FREE_WATCHED, sqlite_where=_FREE_WATCHED)
Index("ix_lists_free_unwatched", lists.c.list_id, postgresql_where=_FREE_UNWATCHED, sqlite_where=_FREE_UNWATCHED)
Index("ix_lists_expiring", lists.c.expires_at, postgresql_where=lists.c.completed == 0, sqlite_where=lists.c.completed == 0)

list_tasks = Table(
    "list_tasks",
    metadata,
    Column("list_id", String(64), primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("task_id", String(400), nullable=False),
)

participants = Table(
    "participants",
    metadata,
    Column("participant_id", String(200), primary_key=True),
    Column("platform", String(32), nullable=False),
    Column("params", Text, nullable=False, default="{}"),
    Column("list_id", String(64), nullable=True),
    Column("created_at", Float, nullable=False, index=True),  # the entries of the last window, counted by a range
    Column("consented_at", Float, nullable=True),
    Column("completed_at", Float, nullable=True),
    Column("last_seen", Float, nullable=False),
    #: the keys of the client's network (an IPv4 address, an IPv6 /64) and wider network (/24, /48) at the first
    #: entry: HMACs under the store's secret (:func:`humeval.store.participants.network_key`), NULL for the
    #: server's own machine; the entry guard counts a network's entries within a window by a range
    Column("network", String(64), nullable=True),
    Column("wide_network", String(64), nullable=True),
)
Index("ix_participants_network", participants.c.network, participants.c.created_at)
Index("ix_participants_wide_network", participants.c.wide_network, participants.c.created_at)

sessions = Table(
    "sessions",
    metadata,
    Column("session_id", String(64), primary_key=True),
    Column("participant_id", String(200), nullable=False, index=True),
    Column("created_at", Float, nullable=False),
    Column("user_agent", String(300), nullable=False, default=""),
)

assignments = Table(
    "assignments",
    metadata,
    Column("assignment_id", String(64), primary_key=True),
    Column("participant_id", String(200), nullable=False),
    Column("task_id", String(400), nullable=False),
    Column("list_id", String(64), nullable=True),
    Column("position", Integer, nullable=True),
    Column("display", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("completed_at", Float, nullable=True),
    UniqueConstraint("participant_id", "task_id", name="uq_assignment_participant_task"),
)
#: the leases (by expiry, for the reaper): an answered assignment leaves this index, so that it holds only the
#: leases out, and marking one done does not write an entry
Index("ix_assignments_leased", assignments.c.expires_at, postgresql_where=assignments.c.status == "leased",
      sqlite_where=assignments.c.status == "leased")
Index("ix_assignments_task", assignments.c.task_id)
#: the assignments of a list's place (a place is free while none is leased or done: :data:`humeval.store.lease.FREE_PLACE`)
Index("ix_assignments_place", assignments.c.list_id, assignments.c.position)

judgements = Table(
    "judgements",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("idempotency_key", String(128), nullable=False, unique=True),
    Column("assignment_id", String(64), nullable=False, index=True),
    Column("participant_id", String(200), nullable=False),
    Column("task_id", String(400), nullable=False),
    Column("list_id", String(64), nullable=False, default=""),
    Column("kind", String(16), nullable=False),
    Column("item_id", String(200), nullable=False),
    Column("display", Text, nullable=False),
    Column("values", Text, nullable=False),
    Column("seconds", Float, nullable=True),
    Column("revision", Integer, nullable=False, default=0),
    Column("submitted_at", Float, nullable=False),
    Column("comment", Text, nullable=False, default="", server_default=""),
)

outcomes = Table(
    "outcomes",
    metadata,
    Column("comparison", String(200), primary_key=True),
    Column("n", Integer, primary_key=True, autoincrement=False),
    Column("task_id", String(400), nullable=False),
    Column("outcome", Integer, nullable=False),
    Column("successes", Integer, nullable=False),
    Column("estimate", Float, nullable=False),
    Column("threshold_a", Float, nullable=False),
    Column("threshold_b", Float, nullable=False),
    Column("at", Float, nullable=False),
)

stopping = Table(
    "stopping",
    metadata,
    Column("comparison", String(200), primary_key=True),
    Column("rule", String(64), nullable=False),
    Column("delta", Float, nullable=False),
    Column("system_a", String(200), nullable=False),
    Column("system_b", String(200), nullable=False),
    Column("n", Integer, nullable=False, default=0),
    Column("successes", Integer, nullable=False, default=0),
    Column("outcome", String(16), nullable=False, default="continue"),
    Column("estimate", Float, nullable=True),
    Column("threshold_a", Float, nullable=True),
    Column("threshold_b", Float, nullable=True),
    Column("reason", Text, nullable=False, default=""),
    Column("decided_at", Float, nullable=True),
    Column("logged", Integer, nullable=False, default=0),
)

events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", Float, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("participant_id", String(200), nullable=True),
    Column("data", Text, nullable=False, default="{}"),
)

watched_tasks = Table(
    "watched_tasks",
    metadata,
    Column("comparison", String(200), primary_key=True),
    Column("task_id", String(400), primary_key=True),
)
Index("ix_watched_tasks_task", watched_tasks.c.task_id)

pending = Table(
    "pending",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("comparison", String(200), nullable=False),
    Column("task_id", String(400), nullable=False),
    Column("outcome", Integer, nullable=False),
    Column("assignments", Text, nullable=False),
    Column("participants", Text, nullable=False),
    #: pending, fed (reached the rule), dropped (a voter excluded) or late (kept, after the decision)
    Column("state", String(16), nullable=False, default="pending"),
    Column("at", Float, nullable=False),
)

settled = Table(
    "settled",
    metadata,
    Column("participant_id", String(200), primary_key=True),
    Column("at", Float, nullable=False),
    Column("excluded", Integer, nullable=False, default=0),
    Column("excluded_tasks", Text, nullable=False, default="[]"),
    Column("reason", Text, nullable=False, default=""),
)

fed = Table(
    "fed",
    metadata,
    Column("comparison", String(200), primary_key=True),
    Column("assignment_id", String(64), primary_key=True),
    Column("seq", Integer, nullable=True),
    Column("at", Float, nullable=False),
)

#: the confirmation wave of a decided pair (``stopping.drift_check: wave``): ``side`` 1 when the decision chose A (the
#: comparison's first system), 0 for B; ``size`` w; ``state`` ``waiting`` (until ``opens_at``), ``open`` (its tasks
#: served again) or ``done`` (curtailed, or w outcomes); ``n``/``wins``: its outcomes so far and the decided side's wins
waves = Table(
    "waves",
    metadata,
    Column("comparison", String(200), primary_key=True),
    Column("side", Integer, nullable=False),
    Column("size", Integer, nullable=False),
    Column("opens_at", Float, nullable=False),
    Column("state", String(16), nullable=False, default="waiting"),
    Column("opened_at", Float, nullable=True),
    Column("closed_at", Float, nullable=True),
    Column("n", Integer, nullable=False, default=0),
    Column("wins", Integer, nullable=False, default=0),
    Column("flagged", Integer, nullable=True),
)

#: a wave's outcomes, in the order settlement counted them (the export's ``wave_seq``); ``outcome`` 1: for the decided side
wave_outcomes = Table(
    "wave_outcomes",
    metadata,
    Column("comparison", String(200), primary_key=True),
    Column("assignment_id", String(64), primary_key=True),
    Column("seq", Integer, nullable=False),
    Column("outcome", Integer, nullable=False),
    Column("at", Float, nullable=False),
)

bonuses = Table(
    "bonuses",
    metadata,
    Column("platform_study", String(64), primary_key=True),
    Column("participant_id", String(200), primary_key=True),
    Column("submission_id", String(64), nullable=False),
    Column("amount_cents", Integer, nullable=False),
    Column("state", String(16), nullable=False),
    Column("bulk_id", String(64), nullable=True),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("detail", Text, nullable=False, default=""),
)

#: an arena's generations: each answer a model streamed for a battle (``side`` 0 or 1 of the assignment's display),
#: with its record (:class:`humeval.arena.models.Generation` as JSON: model, prompt, times, tokens, cost) and why it
#: failed (``error``, empty when it did not): the report and replays read them; a failed one was never shown as a
#: battle and its assignment never counted
generations = Table(
    "generations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("assignment_id", String(64), nullable=False, index=True),
    Column("participant_id", String(200), nullable=False),
    Column("task_id", String(400), nullable=False),
    Column("side", Integer, nullable=False),
    Column("model", String(200), nullable=False),
    Column("error", String(32), nullable=False),
    Column("at", Float, nullable=False),
    Column("record", Text, nullable=False),
)

#: how often each typed prompt of an arena was used as typed, by its key (a hash of
#: :func:`humeval.arena.prompts.prompt_key`): every server process of a study counts in this one row, so
#: ``prompts.max_repeats`` holds across processes (:func:`humeval.store.generations.claim_typed_prompt`)
prompt_uses = Table(
    "prompt_uses",
    metadata,
    Column("prompt_key", String(64), primary_key=True),
    Column("uses", Integer, nullable=False),
)

#: signed platform deliveries (Prolific hooks) received lately: a replay of one is recognised and does nothing
hook_deliveries = Table(
    "hook_deliveries",
    metadata,
    Column("delivery", String(64), primary_key=True),
    Column("at", Float, nullable=False),
)
