"""The store of a study: where participants, assignments and judgements live.

::

    store = Store.open(Study.open("my-study"))      # study.db, or db="postgresql://..."
    store.prepare()                                 # migrate + seed (once, before serving)
    await store.next_assignment("P1")               # a write operation

Write operations run on SQLite's single writer of the process
(:class:`~humeval.store.writer.Writer`: one thread, group commit), or on PostgreSQL's pool
of connections, several in flight at once, each in its own READ COMMITTED transaction
(:class:`~humeval.store.pool.PooledWriter`). Reads for the admin views run on a separate pool.

Concurrency on PostgreSQL (several operations of a process, several processes, several
machines) is held by the database, at READ COMMITTED: a list is claimed by one statement that
skips lists other transactions are claiming (``FOR UPDATE SKIP LOCKED``) and never gives up
while a free list exists; a task's cap by a conditional update on its locked row
(``taken < cap``); a participant's operations queue on their participant row; a submit on
its assignment row; the live stopping state (and the leases of a watched comparison) on the
comparison's ``stopping`` row. Nothing is lost or assigned twice
(``tests/integration/server/test_pg_concurrency.py`` hammers it with real connections).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine

from humeval import logbook
from humeval.design.tasks import ParticipantList
from humeval.errors import StoreError
from humeval.store.alive import beat
from humeval.store.assign import current_assignment, next_assignment, reap_due, standing
from humeval.store.context import StoreContext
from humeval.store.engine import database_url, is_sqlite, make_engines, operation_engine, redact_url
from humeval.store.generations import (
    all_generations,
    battle_prompt,
    claim_typed_prompt,
    generated,
    prompt_uses,
    record_battle,
    record_prompt,
    typed_prompts,
)
from humeval.store.live import was_abandoned
from humeval.store.migrations import migrate
from humeval.store.participants import (
    NO_LIMITS,
    EntryLimits,
    consent,
    decline,
    enter,
    network_key,
    route_of,
)
from humeval.store.pool import PooledWriter
from humeval.store.reads import (
    all_judgements,
    answer_of,
    judgement_rows,
    overview,
    participant_rows,
    stopping_states,
    unused_lists,
)
from humeval.store.records import AssignmentView, Progress
from humeval.store.screen import failed_attention
from humeval.store.seed import seed_rerun, seed_store, skip_doomed
from humeval.store.sql import sql_of
from humeval.store.submit import SubmitResult, attempts_after, submit_judgement
from humeval.store.writer import Executor, Writer
from humeval.study import StudyFolder

if TYPE_CHECKING:
    from humeval.store.live import Recruitment

__all__ = ["Store"]

T = TypeVar("T")

#: a decision's logbook entry (``decision``: the stopping row's ``outcome``), and the statements that log it once
_DECISION_KEYS = ("comparison", "decision", "system_a", "system_b", "n", "successes", "estimate", "threshold_a",
                  "threshold_b", "rule", "delta", "reason", "decided_at")
_UNLOGGED = ("SELECT " + ", ".join("outcome" if k == "decision" else k for k in _DECISION_KEYS)
             + " FROM stopping WHERE outcome <> 'continue' AND logged = 0")
_LOGGED = "UPDATE stopping SET logged = 1 WHERE comparison = :c AND logged = 0"


def _claim_logging(conn: Connection, comparison: str) -> int:
    """Mark the comparison's decision as logged: 1 for the process that claims it, 0 once another has."""
    return sql_of(conn).run(_LOGGED, {"c": comparison})

#: PostgreSQL: write operations of one process in flight at once (and connections of its pool): 12 served more
#: judgements per second than 6 or 20 with operations of one round trip; with two, 4 and 12 measured the same within
#: the noise of a shared 2-core machine (docs/collection.md, Measuring)
OPERATIONS_IN_FLIGHT = 12


class Store:
    """Participants, assignments and judgements of one study in SQLite or PostgreSQL."""

    def __init__(self, study: StudyFolder, url: str, *, sqlite_sync: str = "full") -> None:
        self.study = study
        self.url = url
        self.write_engine: Engine
        self.read_engine: Engine
        self.write_engine, self.read_engine = make_engines(url, sqlite_sync=sqlite_sync)
        self.writer: Executor
        self.op_engine: Engine | None = None
        if is_sqlite(url):
            self.writer = Writer(self.write_engine)
        else:
            self.op_engine = operation_engine(url, OPERATIONS_IN_FLIGHT)
            self.writer = PooledWriter(self.op_engine, OPERATIONS_IN_FLIGHT)
        #: how messages and the logbook name this store: the SQLite file, or the URL without its secrets
        self.where = str(study.relative(Path(url.split("///", 1)[1]))) if is_sqlite(url) and "///" in url else redact_url(url)
        self.writer.where = self.where
        self.writer.on_rollback = self._forget_rules
        self._ctx: StoreContext | None = None

    def _forget_rules(self) -> None:
        """A write transaction rolled back: the live rules it fed may hold outcomes that were never stored
        (and that another process may store differently), so each is rebuilt from the store when next used."""
        if self._ctx is not None:
            with self._ctx.rules_lock:
                self._ctx.rules.clear()

    @classmethod
    def open(cls, study: StudyFolder, db: str | None = None, *, sqlite_sync: str = "full") -> Store:
        """The store of ``study``: ``db`` is a URL or file path; default ``study.db`` in the study.

        ``sqlite_sync`` (SQLite only): ``full`` makes every commit reach the disk before a
        judgement is acknowledged; ``normal`` (WAL) survives a crash of the process but not
        of the operating system or the power (see :mod:`humeval.store.engine`).
        """
        return cls(study, database_url(db, study.db_file), sqlite_sync=sqlite_sync)

    # -- setup --------------------------------------------------------------------
    def check_database(self, *, seeded: bool = False) -> None:
        """Raise :class:`StoreError` when the database cannot hold the store: on PostgreSQL a search_path that names
        no schema of the database (every statement would fail: "no schema has been selected", "relation does not
        exist"); with ``seeded``, a database that holds no store of a study yet (nothing was ever served there)."""
        from sqlalchemy import inspect, text

        with self.read_engine.connect() as conn:
            if not is_sqlite(self.url) and conn.execute(text("SELECT current_schema()")).scalar() is None:
                path = conn.execute(text("SHOW search_path")).scalar()
                raise StoreError(f"--db {self.where}: its search_path ({path}) names no schema of this database; "
                                 "create the schema first (CREATE SCHEMA <name>) or fix options=-csearch_path%3D<name> "
                                 "in the URL")
            if seeded and not inspect(conn).has_table("tasks"):
                raise StoreError(f"--db {self.where}: no store of a study in this database yet; serve the study on it "
                                 f"first (`humeval serve {self.study.root} --db URL`) or name the database it was "
                                 "served on")

    def prepare(self, progress: Callable[[str, int, int], None] | None = None) -> bool:
        """Apply migrations and seed from the study (idempotent); True if it seeded now.

        ``progress(what, done, total)``: rows of table ``what`` seeded so far."""
        self.check_database()
        with self.write_engine.connect() as conn, conn.begin():
            migrate(conn)
            seeded = seed_store(conn, self.study, progress)
        self.log_decisions()
        return seeded

    def add_rerun(self, path: Path) -> int:
        """Add the re-run lists ``collate`` wrote to ``path`` (once per file); how many were added."""
        with self.write_engine.connect() as conn, conn.begin():
            added = seed_rerun(conn, self.study, path)
        self._ctx = None
        return added

    def rerun_lists(self, path: Path) -> list[ParticipantList]:
        """The re-run lists of ``path`` as :meth:`add_rerun` adds them (without the battles whose failure would come
        again: :func:`humeval.store.seed.skip_doomed`)."""
        from humeval.files import read_jsonl

        lists = [ParticipantList.from_json(r) for r in read_jsonl(path, what="re-run lists")]
        return self.read(lambda conn: skip_doomed(conn, self.study, lists))

    @property
    def context(self) -> StoreContext:
        if self._ctx is None:
            with self.read_engine.connect() as conn:
                self._ctx = StoreContext.load(conn, self.study.protocol)
        return self._ctx

    def close(self) -> None:
        self.writer.close()
        if self.op_engine is not None:
            self.op_engine.dispose()
        self.write_engine.dispose()
        self.read_engine.dispose()

    # -- writes -------------------------------------------------------------------
    def write(self, fn: Callable[[Connection], T]) -> T:
        return self.writer.run(fn)

    async def awrite(self, fn: Callable[[Connection], T]) -> T:
        return await self.writer.arun(fn)

    async def enter(self, participant_id: str, platform: str, params: dict[str, Any], *, user_agent: str = "",
                    consented: bool = False, limits: EntryLimits = NO_LIMITS,
                    networks: tuple[str, str] | None = None) -> str:
        """Record an entry (see :func:`humeval.store.participants.enter`) within ``limits``: ``networks`` are the
        client's network and wider network (``198.51.100.7/32``, ``198.51.100.0/24``; None: counted by none),
        stored as their keys under the store's secret (:func:`~humeval.store.participants.network_key`)."""
        secret = self.context.secret
        keys = (network_key(secret, networks[0]), network_key(secret, networks[1])) if networks else (None, None)
        return await self.awrite(functools.partial(
            enter, participant_id=participant_id, platform=platform, params=params, user_agent=user_agent,
            consented=consented, limits=limits, networks=keys, active_window=float(self.context.lease_seconds)))

    def keep_alive(self, *, beating: bool = False) -> float:
        """The service is up now: one beat of :mod:`humeval.store.alive`. After a downtime (a restart, the whole
        service paused) the live leases, held lists and recent activity are moved by it; returns the seconds moved
        (0.0 when none). ``beating``: this process beats regularly from now on (the server's lifespan), so it reaps
        only while the last beat is fresh."""
        ctx = self.context
        ctx.heartbeat = ctx.heartbeat or beating
        return self.write(lambda conn: beat(conn, ctx))

    async def akeep_alive(self, *, beating: bool = False) -> float:
        """:meth:`keep_alive` as an operation of the event loop (the server's lifespan beats with it)."""
        ctx = self.context
        ctx.heartbeat = ctx.heartbeat or beating
        return await self.awrite(lambda conn: beat(conn, ctx))

    async def areap(self) -> None:
        """Reclaim the leases that ran out and settle the participants who abandoned their sessions
        (:func:`humeval.store.assign.reap_due`) without a request: the server's heartbeat does it, so that a place a
        quitter held opens while nobody asks for a task (participants on the waitlist only read the places)."""
        ctx = self.context
        await self.awrite(lambda conn: reap_due(conn, ctx, time.time()))

    def first_delivery(self, key: str, keep: float) -> bool:
        """Record a signed platform delivery; False for a replay of one received within ``keep`` seconds
        (:mod:`humeval.store.deliveries`)."""
        from humeval.store.deliveries import first_delivery

        return self.write(lambda conn: first_delivery(conn, key, keep))

    def forget_delivery(self, key: str) -> None:
        """Forget a delivery whose handling failed (the sender's retry is handled)."""
        from humeval.store.deliveries import forget_delivery

        self.write(lambda conn: forget_delivery(conn, key))

    async def route_of(self, participant_id: str) -> str | None:
        """The platform label of the participant's first entry; None for someone new (a read, no write)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.read, functools.partial(route_of, participant_id=participant_id))

    async def consent(self, participant_id: str) -> bool:
        return await self.awrite(functools.partial(consent, participant_id=participant_id))

    async def next_assignment(self, participant_id: str) -> AssignmentView | Progress:
        ctx = self.context
        return await self._assignment(lambda conn: next_assignment(conn, ctx, participant_id))

    async def current_assignment(self, participant_id: str) -> AssignmentView | Progress:
        """The participant's live lease, read without writing (showing a page again); when they hold none, their
        next assignment (:meth:`next_assignment`, which leases it)."""
        ctx = self.context
        return await self._assignment(lambda conn: current_assignment(conn, ctx, participant_id))

    async def _assignment(self, fn: Callable[[Connection], AssignmentView | Progress]) -> AssignmentView | Progress:
        # (a read runs as an operation too: on SQLite the writer's connection, whose cache is warm; another
        # connection finds its cache stale after every commit)
        result = await self.awrite(fn)
        if isinstance(result, Progress) and self.context.watched:  # settling the participant may have decided
            await asyncio.get_running_loop().run_in_executor(None, self.log_decisions)
        return result

    async def submit(self, participant_id: str, assignment_id: str, idempotency_key: str, values: Any,
                     seconds: float | None = None, *, only_open: bool = False, comment: Any = "",
                     then_next: bool = False) -> SubmitResult:
        """Store a judgement (:func:`humeval.store.submit.submit_judgement`; ``only_open``: no edit of an answered one;
        ``comment``: the participant's optional free text). ``then_next``: in the same operation, give the participant
        their next assignment too (``result.next``)."""
        ctx = self.context
        result = await self.awrite(
            lambda conn: submit_judgement(conn, ctx, participant_id, assignment_id, idempotency_key, values, seconds,
                                          only_open=only_open, comment=comment, then_next=then_next)
        )
        if result.decided or (isinstance(result.next, Progress) and ctx.watched):  # settling may have decided
            await asyncio.get_running_loop().run_in_executor(None, self.log_decisions)
        return result

    async def _standing(self, participant_id: str, *, why: bool = False) -> tuple[bool, str | None, Progress]:
        ctx = self.context
        return await asyncio.get_running_loop().run_in_executor(
            None, self.read, lambda conn: standing(conn, ctx, participant_id, why=why))

    async def has_consented(self, participant_id: str) -> bool:
        return (await self._standing(participant_id))[0]

    async def progress(self, participant_id: str) -> Progress:
        """Tasks done so far; ``completed`` once the participant finished their work."""
        return (await self._standing(participant_id, why=True))[2]

    async def ended_early(self, participant_id: str) -> bool:
        """Whether the participant's session (a list with watched tasks) ended before its last task because the
        stopping rule decided (the rest of the list was closed), not because they were away for longer than a lease
        (settled as abandoned: the rest of their list went to the next participant)."""
        if not self.context.list_watched:
            return False
        _, list_id, prog = await self._standing(participant_id)
        if list_id not in self.context.list_watched or prog.done >= prog.total:
            return False
        return not await asyncio.get_running_loop().run_in_executor(
            None, self.read, functools.partial(was_abandoned, participant_id=participant_id))

    async def screened_out(self, participant_id: str) -> bool:
        """Whether the participant failed the attention checks (gets the screen-out link at the end)."""
        ctx = self.context
        if not any(r.rule == "attention" for r in ctx.protocol.exclusion):
            return False
        return await asyncio.get_running_loop().run_in_executor(
            None, self.read, lambda conn: failed_attention(conn, ctx, participant_id))

    async def answer_of(self, participant_id: str, assignment_id: str) -> tuple[list[str], dict[str, Any]] | None:
        """The systems the participant was shown in ``assignment_id`` and their answer's values, once they answered
        it (an arena's reveal after the vote); None before, or when the assignment is not theirs."""
        return await asyncio.get_running_loop().run_in_executor(
            None, self.read, functools.partial(answer_of, participant_id=participant_id, assignment_id=assignment_id))

    async def attempts_left(self, participant_id: str, assignment_id: str) -> int:
        """The attempts the participant has left at the qualification check ``assignment_id``, whose answer was not
        the one it asks for (:func:`humeval.store.submit.attempts_after`; 0 otherwise)."""
        ctx = self.context
        if ctx.protocol.design.qualification_attempts < 2:
            return 0
        return await asyncio.get_running_loop().run_in_executor(
            None, self.read, lambda conn: attempts_after(conn, ctx, participant_id, assignment_id))

    async def record_battle(self, assignment_id: str, participant_id: str, task_id: str,
                            records: list[dict[str, Any]]) -> bool:
        """Store a battle's generations (:func:`humeval.store.generations.record_battle`): True when it can be voted
        on, False when a generation failed (the lease ended as ``failed``; a failure that would come again closes the
        task, :func:`~humeval.store.generations.record_battle`)."""
        now = time.time()
        arena = self.context.protocol.arena
        recorded = {m.name for m in arena.models if m.kind == "recorded"} if arena is not None else set()
        return await self.awrite(lambda conn: record_battle(conn, assignment_id, participant_id, task_id, records, now,
                                                            recorded))

    async def generated(self, assignment_id: str) -> list[str] | None:
        """A live battle's answers in display order once both were generated; None before or after a failure."""
        return await asyncio.get_running_loop().run_in_executor(
            None, self.read, functools.partial(generated, assignment_id=assignment_id))

    async def battle_prompt(self, assignment_id: str, participant_id: str) -> dict[str, Any] | None:
        """The prompt stored for a battle (:func:`humeval.store.generations.battle_prompt`), or None."""
        return await asyncio.get_running_loop().run_in_executor(None, self.read, functools.partial(
            battle_prompt, assignment_id=assignment_id, participant_id=participant_id))

    async def record_prompt(self, assignment_id: str, participant_id: str, prompt: dict[str, Any]) -> dict[str, Any]:
        """Store a battle's prompt unless one is (:func:`humeval.store.generations.record_prompt`); the stored one."""
        now = time.time()
        return await self.awrite(lambda conn: record_prompt(conn, assignment_id, participant_id, prompt, now))

    async def claim_typed_prompt(self, assignment_id: str, participant_id: str, prompt: dict[str, Any], key: str,
                                 max_repeats: int) -> dict[str, Any] | None:
        """Store a typed prompt while its text is used fewer than ``max_repeats`` times, by every process of the
        study (:func:`humeval.store.generations.claim_typed_prompt`); the stored prompt, or None when used up."""
        now = time.time()
        return await self.awrite(lambda conn: claim_typed_prompt(conn, assignment_id, participant_id, prompt, key,
                                                                 max_repeats, now))

    def prompt_uses(self, key: str) -> int:
        """How often the typed prompt of ``key`` was used as typed (:func:`humeval.store.generations.prompt_uses`)."""
        return self.read(lambda conn: prompt_uses(conn, key))

    def typed_prompts(self) -> list[str]:
        """The texts of the typed prompts stored (:func:`humeval.store.generations.typed_prompts`)."""
        return self.read(typed_prompts)

    def generations(self) -> list[dict[str, Any]]:
        """Every generation of an arena's battles (:func:`humeval.store.generations.all_generations`)."""
        return self.read(all_generations)

    async def decline(self, participant_id: str) -> None:
        """Record that the participant declined consent and give back any list they hold."""
        await self.awrite(functools.partial(decline, participant_id=participant_id))

    def log_decisions(self) -> list[dict[str, Any]]:
        """Append each stored decision not yet in the logbook to it (once, across processes)."""
        rows = self.read(lambda conn: sql_of(conn).all(_UNLOGGED))
        if not rows:
            return []
        recorded = {(e.field("comparison"), e.field("n")) for e in logbook.entries(self.study) if e.stage == "stopping"}
        entries: list[dict[str, Any]] = []
        for row in rows:
            r = dict(zip(_DECISION_KEYS, row, strict=True))
            claimed = self.write(functools.partial(_claim_logging, comparison=r["comparison"]))
            if claimed == 1 and (r["comparison"], r["n"]) not in recorded:
                entries.append(logbook.append(self.study, {"stage": "stopping", "outcome": "ok", **r, "store": self.where}))
        return entries

    # -- reads --------------------------------------------------------------------
    def read(self, fn: Callable[[Connection], T]) -> T:
        with self.read_engine.connect() as conn:
            return fn(conn)

    def judgements(self) -> list[dict[str, Any]]:
        return self.read(all_judgements)

    def judgement_rows(self) -> list[dict[str, Any]]:
        ctx = self.context
        return self.read(lambda conn: judgement_rows(conn, ctx))

    def participants(self, *, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
        """Participants in the order they entered: all, or a page of ``limit`` from ``offset``."""
        return self.read(lambda conn: participant_rows(conn, limit=limit, offset=offset))

    def unused_lists(self) -> tuple[int, int]:
        """(lists never given to a participant, their tasks, checks aside): what stopping now saves."""
        ctx = self.context
        return self.read(lambda conn: unused_lists(conn, ctx))

    def stopping(self) -> list[dict[str, Any]]:
        return self.read(stopping_states)

    def waves(self) -> list[dict[str, Any]]:
        """The confirmation waves of the decided pairs (``stopping.drift_check: wave``; :func:`humeval.store.live.waves`)."""
        from humeval.store.live import waves

        return self.read(waves)

    def exclusion_overview(self) -> dict[str, Any]:
        """What the preregistered exclusion rules did so far, live (:func:`humeval.store.live.exclusion_overview`)."""
        from humeval.store.live import exclusion_overview

        ctx = self.context
        return self.read(lambda conn: exclusion_overview(conn, ctx))

    def recruitment(self) -> Recruitment:
        """The places a crowd platform should offer now (:func:`humeval.store.live.recruitment`)."""
        from humeval.store.live import recruitment

        ctx = self.context
        return self.read(lambda conn: recruitment(conn, ctx))

    def leaderboards(self) -> dict[str, dict[str, Any]]:
        """Live leaderboards of the goals over K systems (:func:`humeval.store.live.live_leaderboards`)."""
        from humeval.store.live import live_leaderboards

        ctx = self.context
        return self.read(lambda conn: live_leaderboards(conn, ctx))

    def overview(self, *, items_limit: int | None = None, items_offset: int = 0) -> dict[str, Any]:
        """Progress totals, per criterion, per system and per item (all items, or a page of them)."""
        ctx = self.context
        return self.read(lambda conn: overview(conn, ctx, items_limit=items_limit, items_offset=items_offset))

    def texts(self, item_id: str, system: str) -> tuple[str, str, str, str]:
        """(output, input, references, format) of one system's output for an item (format: the output's
        own, empty for the study's ``presentation.output_format``)."""
        return self.context.texts.get((item_id, system), ("", "", "", ""))

    def event_count(self, kind: str) -> int:
        return int(self.read(lambda conn: sql_of(conn).scalar("SELECT count(*) FROM events WHERE kind = :k", {"k": kind})))

    def _meta(self) -> dict[str, str]:
        return self.read(lambda conn: dict(sql_of(conn).all("SELECT key, value FROM meta")))

    def systems(self) -> list[str]:
        return list(json.loads(self._meta().get("systems", "[]")))
