"""The store's participant operations as a state machine, on SQLite and on PostgreSQL.

Hypothesis draws random sequences of enter, next (a lease), submit (a first answer, an edit, an
answer to an expired or withdrawn lease, and with ``then_next`` the next lease in the same
operation), retries with the same idempotency key, a key reused with other values, decline,
and the expiry of every lease (the store's clock is driven: :class:`Clock`), on three studies:
``sessions`` (``list`` strategy with live stopping: sessions admitted by the rule, a decision
that closes the comparison's tasks), ``lists`` (``list`` strategy, one judgement per task) and
``pool`` (the ``one`` labelling strategy). A plain model of the rules keeps what each operation
must do (a task's leases and judgements against its cap, what each participant was given, every
acknowledged submit, who was settled, who was told ``closed``, the decision) and, after every
step, is compared with the store's rows.

It catches a drift of the cap rule, written once (:data:`humeval.store.lease.TAKE`): with its
``taken < cap`` changed to ``taken <= cap``, it failed (``pool`` on SQLite, and with
``HUMEVAL_STATEFUL_EXAMPLES=30``) with "submit on a expired lease was stored, expected lease_expired"
after enter P0, next P0, the leases expired, enter P1, P1 answers one task (the same task, cap 1),
P0 answers its expired lease: the reclaim took a unit the cap no longer had. The random examples of a run
do not always reach that edge (12 did not, on 2026-11-28), so the sequence is kept as a replay below
(``test_an_expired_lease_is_not_taken_again_over_the_cap``), which fails on that drift in every run.

It found a bug, fixed since and kept as a replay below: a late answer to an expired lease was stored
although its participant had given that list back and held another one (the reclaim now also needs the
participant to hold the list, and, for a watched task, not to be settled).

``HUMEVAL_STATEFUL_EXAMPLES`` raises the number of examples (default 12 per study and database).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import event as _event
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from humeval.protocol.models import TwoAFC
from humeval.store import assign as store_assign
from humeval.store import participants as store_participants
from humeval.store import submit as store_submit
from humeval.store.assign import reap
from humeval.store.live import settle_abandoned
from humeval.store.records import AssignmentView, Progress
from humeval.store.refusal import Refusal
from humeval.store.store import Store
from humeval.study import StudyFolder
from tests.integration.server.conftest import PG, _pg_available
from tests.integration.server.studies import pairwise_study

pytestmark = pytest.mark.timeout(300)

EXAMPLES = int(os.environ.get("HUMEVAL_STATEFUL_EXAMPLES", "12"))
STEPS = 40
LEASE = 60
#: no "explain" phase: its tracer slows a failing example's replay a hundredfold
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)
#: the store's clock starts here (far from the real time: the store reaps only when a step expires leases)
START = 1_000_000.0


#: what the examples reached (``pytest -s`` prints it per test)
SEEN: Counter[str] = Counter()


def event(what: str) -> None:
    SEEN[what] += 1
    _event(what)


class Clock:
    """``time`` for the store's modules: ``time()`` is the driven clock (a millisecond further at each call, so
    that rows keep their order), everything else the real module."""

    def __init__(self) -> None:
        self.now = START

    def time(self) -> float:
        self.now += 0.001
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@dataclass(frozen=True)
class Config:
    """A study of the machine: ``pairwise_study``'s arguments."""

    name: str
    strategy: str
    items: int
    per_item: int
    per_participant: int
    stopping: bool
    delta: float = 0.4


CONFIGS = [
    Config("sessions", "list", items=9, per_item=2, per_participant=3, stopping=True),
    Config("lists", "list", items=6, per_item=1, per_participant=3, stopping=False),
    Config("pool", "one", items=5, per_item=1, per_participant=3, stopping=False),
]


@dataclass
class Person:
    """What the model knows of a participant."""

    tasks: set[str] = field(default_factory=set)  # every task they were given a lease of
    aids: list[str] = field(default_factory=list)  # their assignments, in order
    done: int = 0  # first answers
    settled: bool = False
    closed_at: float | None = None  # told ``closed`` then
    list_id: str | None = None  # ``list``: the list they held when they had done work


@dataclass
class Lease:
    """An assignment as the model knows it."""

    pid: str
    task: str
    status: str  # leased, expired, withdrawn, done


@dataclass
class Ack:
    """An acknowledged submit."""

    aid: str
    values: dict[str, str]
    judgement_id: int


class StoreMachine(RuleBasedStateMachine):
    """One fresh store per example; the class attributes are set by :func:`machine_for`."""

    config: Config
    study: StudyFolder
    open_store: Callable[[], tuple[Store, Callable[[], None]]]
    clock: Clock

    def __init__(self) -> None:
        super().__init__()
        self.clock.now = START
        self.store, self._drop = self.open_store()
        self.store.prepare()
        self.ctx = self.store.context
        self.ctx.last_reap = START  # leases expire only when a step says so (:meth:`expire`)
        self.loop = asyncio.new_event_loop()
        self.caps: dict[str, int] = dict(self._rows("SELECT task_id, cap FROM tasks"))
        self.watched = set(self.ctx.watched)
        self.comparison = next(iter(self.ctx.comparisons.values()), None)
        self.taken: Counter[str] = Counter()
        self.votes: dict[str, list[int]] = {}  # pool strategies: per task, the votes of its first answers
        self.people: dict[str, Person] = {}
        self.leases: dict[str, Lease] = {}
        self.acks: dict[str, Ack] = {}
        self.keys = 0
        self.decided_at: float | None = None

    def teardown(self) -> None:
        self.loop.close()
        self.store.close()
        self._drop()

    # -- helpers ------------------------------------------------------------------------------
    def _rows(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return self.store.read(lambda conn: [tuple(r) for r in conn.exec_driver_sql(sql, params or {}).all()])

    def _run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def _pick(self, k: int, among: list[str]) -> str:
        return among[k % len(among)]

    @property
    def entered(self) -> list[str]:
        return sorted(self.people)

    def _live_lease(self, pid: str) -> str | None:
        return next((aid for aid in self.people[pid].aids if self.leases[aid].status == "leased"), None)

    def _values(self, view_display: tuple[str, ...] | list[str], choice: str) -> dict[str, str]:
        """``prefer``: the candidate wins; ``other``: the baseline wins; ``tie``."""
        if choice == "tie":
            return {"quality": "tie"}
        winner = "candidate" if choice == "prefer" else "baseline"
        return {"quality": "A" if view_display[0] == winner else "B"}

    def _closed(self, task: str) -> bool:
        return self.decided_at is not None and task in self.watched

    def _held_list(self, pid: str) -> str | None:
        got = self._rows("SELECT p.list_id FROM participants p JOIN lists l ON l.list_id = p.list_id "
                         "WHERE p.participant_id = %(p)s AND l.participant_id = %(p)s" if self._pg else
                         "SELECT p.list_id FROM participants p JOIN lists l ON l.list_id = p.list_id "
                         "WHERE p.participant_id = :p AND l.participant_id = :p", {"p": pid})
        return got[0][0] if got else None

    @property
    def _pg(self) -> bool:
        return not self.store.url.startswith("sqlite")

    def _observe_next(self, pid: str, got: AssignmentView | Progress | None, admitted: bool | None) -> None:
        """Check what ``next`` gave ``pid`` against the model, then record it."""
        p = self.people[pid]
        live = self._live_lease(pid)
        if got is None:  # an answer with then_next could not lease the next one
            return
        # a participant whose first reservations ran out FIRST_LEASES times without an answer gets no other
        lapsed = sum(1 for aid in p.aids if self.leases[aid].status == "expired")
        no_more_first = p.done == 0 and lapsed >= store_assign.FIRST_LEASES
        if isinstance(got, Progress):
            assert live is None, f"{pid} holds the live lease {live} but was told {got}"
            assert got.done == p.done, (got, p.done)
            if self.config.strategy != "list" and p.done < self.config.per_participant and not no_more_first:
                room = [t for t, cap in self.caps.items() if self.taken[t] < cap and t not in p.tasks]
                assert not room, f"{pid} was given nothing although {room} have room and are new to them"
            if got.reason:
                event(f"told {got.reason}")
            if no_more_first:
                event("no third first lease")
            elif got.reason == "closed":
                p.closed_at = p.closed_at or self.clock.now
            # the rule decided during their first task (withdrawn): a session, paid whole, so completed
            cut_first = p.done == 0 and any(self.leases[a].status == "withdrawn" for a in p.aids)
            if cut_first:
                assert got.completed, f"{pid}'s first task was withdrawn at the decision, and they were told {got}"
            if self.watched and (p.done > 0 or cut_first):
                p.settled = True  # nothing left for one who did work (or whose session the decision cut): settled
            return
        aid, task = got.assignment_id, got.task.task_id
        if live is not None:
            assert aid == live, f"{pid} holds {live} but was given {aid}"
            return
        assert aid not in self.leases, f"{aid} given again to {pid}"
        assert not no_more_first, f"{pid} let {lapsed} first leases run out and was given {task}"
        assert p.closed_at is None, f"{pid} was told 'closed' at {p.closed_at} and later given {task}"
        assert not p.settled, f"{pid} is settled and was given {task}"
        assert task not in p.tasks, f"{pid} was given {task} twice"
        assert self.taken[task] < self.caps[task], f"{task} leased over its cap {self.caps[task]}"
        assert not self._closed(task), f"{task} leased after the decision"
        if admitted is False:
            raise AssertionError(f"{pid} started a session the rule did not admit ({task})")
        if self.config.strategy != "list":
            assert p.done < self.config.per_participant, f"{pid} was given more than their share"
        self.leases[aid] = Lease(pid, task, "leased")
        p.aids.append(aid)
        p.tasks.add(task)
        self.taken[task] += 1

    def _admitted(self, pid: str) -> bool | None:
        """Sessions: whether a participant without work or list may start a session now (None: not asked)."""
        if not self.watched or self.config.strategy != "list" or self.decided_at is not None:
            return None
        if self.people[pid].done > 0 or self._live_lease(pid) is not None or self._held_list(pid) is not None:
            return None
        return all(a.wanted > 0 for a in self.store.recruitment().comparisons if a.outcome == "continue")

    def _after(self) -> None:
        """The decision, if this step made it: the comparison's leases withdrawn, its sessions within the bound."""
        if not self.watched or self.decided_at is not None:
            return
        row = self._rows("SELECT outcome, decided_at FROM stopping")[0]
        if row[0] == "continue":
            return
        self.decided_at = float(row[1])
        event("decided")
        for lease in self.leases.values():
            if lease.status == "leased" and lease.task in self.watched:
                lease.status = "withdrawn"
                self.taken[lease.task] -= 1
        if self.config.strategy == "list":
            a = self.store.recruitment().comparisons[0]
            assert a.pending <= a.unused_bound, f"admitted but unused at the decision: {a}"

    def _raise_cap(self, task: str, values: dict[str, str], display: list[str]) -> None:
        """Pool strategies: a first answer that leaves a pair task's label short of votes (a tie) raises its cap
        to the judgements so far plus the workers still needed, at most twice the strategy's workers."""
        strategy = self.ctx.strategy
        if strategy is None:
            return
        votes = self.votes.setdefault(task, [])
        answers = sum(1 for x in self.leases.values() if x.task == task and x.status == "done")
        vote = TwoAFC.vote(values["quality"], display, self.ctx.tasks[task].systems[0])
        if vote is not None:
            votes.append(vote)
        more, limit = strategy.workers_needed(votes), 2 * strategy.max_workers
        if more > 0 and answers < limit:
            self.caps[task] = max(self.caps[task], min(answers + more, limit))

    # -- rules --------------------------------------------------------------------------------
    @rule(i=st.integers(0, 5))
    def enter(self, i: int) -> None:
        pid = f"P{i}"
        self._run(self.store.enter(pid, "local", {}, consented=True))
        self.people.setdefault(pid, Person())

    @precondition(lambda self: self.people)
    @rule(k=st.integers(0, 7))
    def next(self, k: int) -> None:
        self._next(self._pick(k, self.entered))

    def _next(self, pid: str) -> AssignmentView | Progress:
        admitted = self._admitted(pid)
        got = self._run(self.store.next_assignment(pid))
        self._observe_next(pid, got, admitted)
        self._after()
        return got

    @precondition(lambda self: self.people)
    @rule(k=st.integers(0, 7), n=st.integers(1, 6), choice=st.sampled_from(["prefer", "prefer", "other"]),
          then_next=st.booleans())
    def work(self, k: int, n: int, choice: str, then_next: bool = False) -> None:
        """A participant answers up to ``n`` tasks in a row (next, then submit, with the same checks; with
        ``then_next`` each answer brings the next task, as a client that sends ``"next": true``)."""
        pid = self._pick(k, self.entered)
        got: AssignmentView | Progress | None = None
        for _ in range(n):
            if got is None or not then_next:
                got = self._next(pid)
            if not isinstance(got, AssignmentView):
                return
            got = self._submit(got.assignment_id, choice, then_next)

    @precondition(lambda self: self.leases)
    @rule(k=st.integers(0, 63), choice=st.sampled_from(["prefer", "prefer", "other", "tie"]), then_next=st.booleans())
    def submit(self, k: int, choice: str, then_next: bool) -> None:
        self._submit(self._pick(k, list(self.leases)), choice, then_next)

    @precondition(lambda self: any(lease.status == "expired" for lease in self.leases.values()))
    @rule(k=st.integers(0, 63), choice=st.sampled_from(["prefer", "other"]), then_next=st.booleans())
    def late(self, k: int, choice: str, then_next: bool) -> None:
        """An answer to a lease that expired: stored (the lease taken again) only while its task has room and it is
        still theirs. The edge of the cap rule, reached in every example that expires a lease."""
        self._submit(self._pick(k, [aid for aid, lease in self.leases.items() if lease.status == "expired"]), choice,
                     then_next)

    def _submit(self, aid: str, choice: str, then_next: bool) -> AssignmentView | Progress | None:
        """Answer ``aid``; with ``then_next``, what came with the answer (None when it was refused or brought none)."""
        lease = self.leases[aid]
        p = self.people[lease.pid]
        display = self._rows("SELECT display FROM assignments WHERE assignment_id = " + ("%(a)s" if self._pg else ":a"),
                             {"a": aid})[0][0]
        values = self._values(json.loads(display), choice)
        self.keys += 1
        key = f"K{self.keys}"
        if lease.status == "withdrawn":
            expect = "lease_withdrawn"
        elif lease.status == "done":
            final = lease.task in self.watched and (self.config.strategy != "list" or p.settled)
            expect = "judgement_final" if final else "edit"
        elif lease.status == "expired":
            room = self.taken[lease.task] < self.caps[lease.task] and not self._closed(lease.task)
            # the lease could still be theirs: they hold its list (``list``), and their outcomes are not final
            list_id, holder = self._rows(
                "SELECT a.list_id, l.participant_id FROM assignments a LEFT JOIN lists l ON l.list_id = a.list_id "
                "WHERE a.assignment_id = " + ("%(a)s" if self._pg else ":a"), {"a": aid})[0]
            theirs = (list_id is None or holder == lease.pid) and not (lease.task in self.watched and p.settled)
            expect = "first" if room and theirs else "lease_expired"
        else:
            expect = "first"
        admitted = self._admitted(lease.pid) if then_next else None
        # the place after the answered one goes with the answer (store_assign.lease_after) when this store leased it
        remembered = self.ctx.upcoming.get(lease.pid)
        planned = then_next and not self.watched and remembered is not None and remembered[0].assignment_id == aid
        try:
            result = self._run(self.store.submit(lease.pid, aid, key, values, then_next=then_next))
        except Refusal as refusal:
            assert refusal.code == expect, f"submit on a {lease.status} lease: refused {refusal.code}, expected {expect}"
            event(f"submit on a {lease.status} lease: {refusal.code}")
            self._after()
            return None
        assert expect in ("first", "edit"), f"submit on a {lease.status} lease was stored, expected {expect}"
        event(f"submit on a {lease.status} lease: stored")
        j = result.judgement
        assert j.created and (j.revision == 0) == (expect == "first"), (expect, j)
        self.acks[key] = Ack(aid, values, j.id)
        if expect == "first":
            if lease.status == "expired":  # reclaimed: the task's cap taken again
                self.taken[lease.task] += 1
            lease.status = "done"
            p.done += 1
            self._raise_cap(lease.task, values, json.loads(display))
        if then_next:
            if planned:
                event(f"the next place sent with the answer: {type(result.next).__name__}")
            self._observe_next(lease.pid, result.next, admitted)
        self._after()
        return result.next if then_next else None

    @precondition(lambda self: self.acks)
    @rule(k=st.integers(0, 63))
    def retry(self, k: int) -> None:
        """The same idempotency key again: the stored judgement, nothing new."""
        key = self._pick(k, list(self.acks))
        ack = self.acks[key]
        result = self._run(self.store.submit(self.leases[ack.aid].pid, ack.aid, key, ack.values))
        assert not result.judgement.created and result.judgement.id == ack.judgement_id, (key, result.judgement)

    @precondition(lambda self: self.acks)
    @rule(k=st.integers(0, 63))
    def reuse_key(self, k: int) -> None:
        """The same idempotency key with other values: refused."""
        key = self._pick(k, list(self.acks))
        ack = self.acks[key]
        other = {"quality": {"A": "B", "B": "tie", "tie": "A"}[ack.values["quality"]]}
        with pytest.raises(Refusal) as refused:
            self._run(self.store.submit(self.leases[ack.aid].pid, ack.aid, key, other))
        assert refused.value.code == "idempotency_conflict", refused.value.code

    @precondition(lambda self: self.people)
    @rule(k=st.integers(0, 7))
    def decline(self, k: int) -> None:
        self._run(self.store.decline(self._pick(k, self.entered)))

    @rule()
    def expire(self) -> None:
        """Time passes beyond a lease: every lease expires, and (live stopping) who holds watched judgements
        is settled as abandoned; what the store's next does every ``REAP_EVERY`` seconds, now."""
        self.clock.now += LEASE + 1
        now = self.clock.now
        ctx = self.ctx
        self.store.write(lambda conn: (reap(conn, now), settle_abandoned(conn, ctx, now)))
        ctx.last_reap = now
        for lease in self.leases.values():
            if lease.status == "leased":
                lease.status = "expired"
                self.taken[lease.task] -= 1
        if self.watched:
            for person in self.people.values():
                if any(self.leases[a].status == "done" and self.leases[a].task in self.watched for a in person.aids):
                    person.settled = True

    # -- invariants ---------------------------------------------------------------------------
    @invariant()
    def caps_hold(self) -> None:
        rows = self._rows(
            "SELECT t.task_id, t.taken, t.cap, (SELECT count(*) FROM assignments a WHERE a.task_id = t.task_id "
            "AND a.status IN ('leased', 'done')) FROM tasks t")
        for task, taken, cap, live in rows:
            assert taken == live, f"{task}: taken {taken}, but {live} leases and judgements"
            assert taken <= cap, f"{task}: taken {taken} over its cap {cap}"
            assert cap == self.caps[task], f"{task}: cap {cap}, the model says {self.caps[task]}"
            assert taken == self.taken[task], f"{task}: taken {taken}, the model says {self.taken[task]}"

    @invariant()
    def assignments_as_modelled(self) -> None:
        rows = self._rows("SELECT assignment_id, participant_id, task_id, status, list_id, created_at FROM assignments")
        stored = {r[0]: (r[1], r[2], r[3]) for r in rows}
        modelled = {aid: (x.pid, x.task, x.status) for aid, x in self.leases.items()}
        assert stored == modelled, {a: (stored.get(a), modelled.get(a)) for a in stored.keys() | modelled.keys()
                                    if stored.get(a) != modelled.get(a)}
        pairs = Counter((r[1], r[2]) for r in rows)
        assert max(pairs.values(), default=1) == 1, [k for k, n in pairs.items() if n > 1]
        if self.config.strategy == "list":  # one who did work never gets a second list
            held = dict(self._rows("SELECT participant_id, list_id FROM participants"))
            for pid, person in self.people.items():
                if person.done:
                    person.list_id = person.list_id or held[pid]
                    assert held[pid] == person.list_id, f"{pid} did work on {person.list_id}, then got {held[pid]}"
        for pid, person in self.people.items():
            if person.closed_at is not None:
                late = [r[2] for r in rows if r[1] == pid and r[5] > person.closed_at]
                assert not late, f"{pid} was told 'closed' and then given {late}"
        if self.decided_at is not None:
            late = [r[2] for r in rows if r[2] in self.watched and r[5] > self.decided_at]
            assert not late, f"leased after the decision: {late}"

    @invariant()
    def acknowledged_once(self) -> None:
        rows = self._rows("SELECT idempotency_key, id, assignment_id FROM judgements")
        assert len(rows) == len({r[0] for r in rows})
        assert {r[0]: (r[1], r[2]) for r in rows} == {k: (a.judgement_id, a.aid) for k, a in self.acks.items()}

    @invariant()
    def settled_as_modelled(self) -> None:
        if not self.watched:
            return
        settled = {r[0] for r in self._rows("SELECT participant_id FROM settled")}
        assert settled == {pid for pid, p in self.people.items() if p.settled}

    @invariant()
    def decision_replays(self) -> None:
        if self.comparison is None:
            return
        n, successes, outcome = self._rows("SELECT n, successes, outcome FROM stopping")[0]
        outcomes = [r[0] for r in self._rows("SELECT outcome FROM outcomes ORDER BY n")]
        assert len(outcomes) == n
        rule_ = self.comparison.build_rule()
        replayed = "continue"
        for o in outcomes:
            assert replayed == "continue", "an outcome was fed after the decision"
            d = rule_.update(int(o))
            replayed = d.outcome if d.decided else "continue"
            assert int(d.n) <= n
        if outcomes:
            assert (int(d.n), int(d.successes)) == (n, successes), (d, n, successes)
        assert replayed == outcome, (outcomes, outcome)


def _pid_lists(machine: StoreMachine) -> dict[str, set[str]]:
    rows = machine._rows("SELECT participant_id, list_id FROM assignments WHERE status IN ('done', 'leased')")
    out: dict[str, set[str]] = {}
    for pid, list_id in rows:
        out.setdefault(pid, set()).add(list_id)
    return out


# -- the stores: a fresh SQLite file or PostgreSQL schema per example ----------------------------------------
def _sqlite(root: Path) -> Callable[[Store | None], Any]:
    def open_store(study: StudyFolder) -> tuple[Store, Callable[[], None]]:
        return Store.open(study, str(root / f"{uuid.uuid4().hex[:10]}.db")), lambda: None

    return open_store


def _postgres(study: StudyFolder) -> tuple[Store, Callable[[], None]]:
    import psycopg

    schema = f"hvsm_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')

    def drop() -> None:
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')

    return Store.open(study, f"{PG}?options=-csearch_path%3D{schema}"), drop


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, StudyFolder]:
    root = tmp_path_factory.mktemp("machine")
    return {c.name: pairwise_study(root / c.name, items=c.items, strategy=c.strategy, per_item=c.per_item,
                                   per_participant=c.per_participant, stopping=c.stopping, delta=c.delta, lease=LEASE)
            for c in CONFIGS}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    """The store's modules read the driven clock."""
    c = Clock()
    for module in (store_assign, store_submit, store_participants):
        monkeypatch.setattr(module, "time", c)
    yield c


@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_store_follows_the_model(backend: str, config: Config, studies: dict[str, StudyFolder], clock: Clock,
                                 tmp_path: Path) -> None:
    if backend == "postgres" and not _pg_available():
        pytest.skip(f"PostgreSQL is not reachable at {PG}")
    study = studies[config.name]
    opener = _sqlite(tmp_path) if backend == "sqlite" else _postgres
    machine = type(f"StoreMachine_{config.name}_{backend}", (StoreMachine,),
                   {"config": config, "study": study, "clock": clock,
                    "open_store": staticmethod(lambda: opener(study))})
    run_state_machine_as_test(machine, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, phases=PHASES,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much], database=None))
    print(f"\n{config.name} on {backend}: {dict(sorted(SEEN.items()))}")
    SEEN.clear()


def _replay(backend: str, config: Config, studies: dict[str, StudyFolder], clock: Clock, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> StoreMachine:
    """The machine outside Hypothesis, for a sequence it found, kept as a plain test."""
    if backend == "postgres" and not _pg_available():
        pytest.skip(f"PostgreSQL is not reachable at {PG}")
    monkeypatch.setattr(sys.modules[__name__], "_event", lambda what: None)
    study = studies[config.name]
    opener = _sqlite(tmp_path) if backend == "sqlite" else _postgres
    return type("Replay", (StoreMachine,), {"config": config, "study": study, "clock": clock,
                                            "open_store": staticmethod(lambda: opener(study))})()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_late_answer_keeps_the_participant_on_one_list(backend: str, studies: dict[str, StudyFolder], clock: Clock,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    machine = _replay(backend, CONFIGS[1], studies, clock, tmp_path, monkeypatch)
    try:
        for i in range(3):
            machine.enter(i)
        machine.work(0, 1, "prefer")  # P0 answers the first task of L0001
        machine.expire()
        machine.next(2)  # P2 takes L0002 (L0001 is still held a little beyond P0's lease)
        machine.expire()
        machine.decline(2)  # P2 gives L0002 back, having done nothing
        machine.next(2)  # ... and takes L0001, left by P0
        machine.submit(1, "prefer", False)  # P2's expired lease of L0002 is answered: refused (lease_expired)
        assert all(len(lists) == 1 for lists in _pid_lists(machine).values()), _pid_lists(machine)
    finally:
        machine.teardown()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_decline_after_answers_leaves_them_counted(backend: str, studies: dict[str, StudyFolder], clock: Clock,
                                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the state machine: a participant who answered a whole session and then declined consent gave their
    list back, so their answers were neither pending nor fed, and sessions were admitted past the bound (6 > 3
    pending at the decision). Now such a list stays held until its participant is settled."""
    machine = _replay(backend, CONFIGS[0], studies, clock, tmp_path, monkeypatch)
    steps = [("enter", {"i": 4}), ("work", {"k": 0, "n": 3, "choice": "prefer"}), ("decline", {"k": 0}),
             ("enter", {"i": 0}), ("enter", {"i": 3}), ("enter", {"i": 5}), ("next", {"k": 3}),
             ("work", {"k": 1, "n": 3, "choice": "prefer"}), ("next", {"k": 1}), ("work", {"k": 0, "n": 4, "choice": "prefer"}),
             ("decline", {"k": 0}), ("next", {"k": 3}), ("next", {"k": 2})]
    try:
        for name, kwargs in steps:  # the decision's check (pending within the bound) runs after each step
            getattr(machine, name)(**kwargs)
            machine.settled_as_modelled()
            machine.caps_hold()
    finally:
        machine.teardown()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_session_cut_during_its_first_task_is_settled(backend: str, studies: dict[str, StudyFolder], clock: Clock,
                                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the state machine (the model lacked the rule, the store was right): P5's session is admitted and its
    first task leased; the decision withdraws it; asking again, P5 is completed (a session, paid whole) and settled.
    Asking once more, settled, they are still told completed (the store once said so only the first time: a random
    example of CI found it)."""
    machine = _replay(backend, CONFIGS[0], studies, clock, tmp_path, monkeypatch)
    steps = [("enter", {"i": 4}), ("next", {"k": 0}), ("submit", {"choice": "prefer", "k": 0, "then_next": False}),
             ("work", {"choice": "prefer", "k": 0, "n": 5}), ("enter", {"i": 3}),
             ("submit", {"choice": "prefer", "k": 0, "then_next": False}), ("enter", {"i": 5}),
             ("work", {"choice": "prefer", "k": 0, "n": 6}), ("next", {"k": 2}), ("enter", {"i": 0}),
             ("work", {"choice": "prefer", "k": 0, "n": 6}), ("next", {"k": 7})]
    try:
        for name, kwargs in steps:
            getattr(machine, name)(**kwargs)
            machine.settled_as_modelled()
            machine.assignments_as_modelled()
        assert machine.people["P5"].settled and machine.decided_at is not None
        assert [machine.leases[a].status for a in machine.people["P5"].aids] == ["withdrawn"]
        machine.next(k=7)  # P5 again: the model checks they are told completed
    finally:
        machine.teardown()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_an_expired_lease_is_not_taken_again_over_the_cap(backend: str, studies: dict[str, StudyFolder], clock: Clock,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The edge of the cap rule, as the state machine reached it (``pool``, cap 1): P0's lease expires, P1 leases and
    answers the same task, then P0 answers its expired lease: refused (``lease_expired``), the task's one unit taken.
    With :data:`humeval.store.lease.TAKE`'s ``taken < cap`` changed to ``taken <= cap`` it is stored (the model's
    check fails), so this drift fails every run, not only when the random examples reach it."""
    machine = _replay(backend, CONFIGS[2], studies, clock, tmp_path, monkeypatch)
    try:
        machine.enter(0)
        machine.next(0)
        machine.expire()
        machine.enter(1)
        machine.work(1, 1, "prefer")  # P1 (the second entered) is leased the same task and answers it
        (first,) = machine.people["P0"].aids
        assert machine.leases[first].task == machine.leases[machine.people["P1"].aids[0]].task
        machine.late(0, "prefer", False)  # P0's expired lease, the only one: refused
        machine.caps_hold()
        machine.assignments_as_modelled()
    finally:
        machine.teardown()
