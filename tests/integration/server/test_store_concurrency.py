"""Real concurrent connections on the store: several stores (as several server processes) hammer enter, next
and submit at once, on PostgreSQL (each store a pool of connections, READ COMMITTED) and on SQLite (the
one writer).

Afterwards: every list was claimed once, no task went over its cap, every assignment has at most one
first judgement, and the live stopping state counts exactly the judgements stored. And 60 entries at
once while 300 lists are free: every one gets a list (a claim skips lists being claimed, it never gives up).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from humeval.files import write_jsonl
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.store import schema as s
from humeval.store.records import AssignmentView, Progress
from humeval.store.refusal import Refusal
from humeval.store.store import Store
from humeval.study import StudyFolder
from humeval.templates import generate_outputs

pytestmark = pytest.mark.timeout(300)

PROTOCOL = """
version: 1
study: {{name: hammer, seed: 11}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?"}}
presentation: {{setup: separate, randomise_order: true}}
design: {{judgements_per_item: {per_item}, items_per_participant: 10, counterbalancing: latin-square}}
assignment: {{strategy: list}}
{stopping}
platform: {{kind: local, completion_code: DONE-1}}
"""
STOPPING = "stopping: {rule: anytime, delta: 0.000001, systems: [baseline, candidate], min_in_flight: 10000}"


def _study(root: Path, items: int, *, per_item: int = 3, stopping: bool = False) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(items, seed=11))
    (root / "humeval.yaml").write_text(PROTOCOL.format(per_item=per_item, stopping=STOPPING if stopping else ""),
                                       encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


def _stores(study: StudyFolder, db_url: str | None) -> list[Store]:
    """Three stores on PostgreSQL (three processes' pools), the one SQLite takes."""
    first = Store.open(study, db_url)
    first.prepare()
    return [first] + ([Store.open(study, db_url) for _ in range(2)] if db_url else [])


def test_sixty_entries_at_once_each_get_a_list(tmp_path: Path, db_url: str | None) -> None:
    study = _study(tmp_path / "study", items=1000)  # 3000 judgements in 300 lists of 10
    stores = _stores(study, db_url)
    try:
        assert len(stores[0].context.list_sizes) == 300

        async def arrive(i: int) -> AssignmentView | Progress:
            store = stores[i % len(stores)]
            await store.enter(f"E{i:02d}", "local", {})
            return await store.next_assignment(f"E{i:02d}")

        async def main() -> list[AssignmentView | Progress]:
            return await asyncio.gather(*(arrive(i) for i in range(60)))

        got = asyncio.run(main())
        assert all(isinstance(g, AssignmentView) for g in got), [g for g in got if not isinstance(g, AssignmentView)][:3]
        p = s.participants.c
        held = stores[0].read(lambda conn: conn.execute(select(p.list_id)).scalars().all())
        assert len(held) == 60 and None not in held and len(set(held)) == 60  # 60 lists, one each
    finally:
        for store in stores:
            store.close()


def test_hammering_loses_nothing_and_assigns_nothing_twice(tmp_path: Path, db_url: str | None) -> None:
    items, per_item = 100, 3
    study = _study(tmp_path / "study", items=items, per_item=per_item, stopping=True)
    stores = _stores(study, db_url)
    acknowledged: dict[str, str] = {}
    ids = iter(range(10**6))
    rng = random.Random(3)
    idle = [0]

    async def annotator(k: int) -> None:
        store = stores[k % len(stores)]
        other = stores[(k + 1) % len(stores)]
        while idle[0] < 6:
            pid = f"H{next(ids):04d}"
            await store.enter(pid, "local", {})
            n = 0
            while isinstance(a := await store.next_assignment(pid), AssignmentView):
                n += 1
                key = f"{pid}-{n}"
                values = {"quality": rng.choice("AB")}
                if rng.random() < 0.2:  # two tabs at once, through two processes: one stores, the other is refused
                    results = await asyncio.gather(
                        store.submit(pid, a.assignment_id, key, values, only_open=True),
                        other.submit(pid, a.assignment_id, key + "b", values, only_open=True), return_exceptions=True)
                    stored = [r for r in results if not isinstance(r, BaseException)]
                    refused = [r for r in results if isinstance(r, Refusal)]
                    assert len(stored) == 1 and len(refused) == 1 and refused[0].code == "already_submitted", results
                    acknowledged[stored[0].judgement.idempotency_key] = a.assignment_id
                else:
                    r = await store.submit(pid, a.assignment_id, key, values)
                    acknowledged[key] = a.assignment_id
                    again = await other.submit(pid, a.assignment_id, key, values)  # a retried request
                    assert again.judgement.id == r.judgement.id and not again.judgement.created
            idle[0] = idle[0] + 1 if n == 0 else 0

    async def main() -> None:
        await asyncio.gather(*(annotator(k) for k in range(24)))

    try:
        asyncio.run(main())
        reader = stores[0]
        j, t, a, st = s.judgements.c, s.tasks.c, s.assignments.c, s.stopping.c

        def read(conn):  # type: ignore[no-untyped-def]
            return (conn.execute(select(j.idempotency_key, j.assignment_id, j.task_id, j.revision, j.participant_id)).all(),
                    conn.execute(select(t.task_id, t.cap, t.taken, select(func.count()).where(  # the assignments done
                        a.task_id == t.task_id, a.status == "done").scalar_subquery()).where(t.kind == "task")).all(),
                    conn.execute(select(s.events.c.data).where(s.events.c.kind == "list_claimed")).scalars().all(),
                    conn.execute(select(a.list_id, a.position).where(a.status.in_(['leased', 'done']), a.list_id.is_not(None))).all(),
                    conn.execute(select(st.n, st.outcome)).one(),
                    conn.execute(select(s.outcomes.c.n)).scalars().all(),
                    conn.execute(select(s.fed.c.seq).where(s.fed.c.seq.is_not(None))).scalars().all(),
                    conn.execute(select(s.settled.c.participant_id)).scalars().all())

        stored, tasks, claims, positions, (n, outcome), outcomes, seqs, settled = reader.read(read)
        keys = Counter(r.idempotency_key for r in stored)
        assert max(keys.values()) == 1
        assert not [k for k in acknowledged if k not in keys], "an acknowledged judgement was lost"
        first = Counter(r.assignment_id for r in stored if r.revision == 0)
        assert max(first.values()) == 1, "an assignment was answered twice"
        per_task = Counter(r.task_id for r in stored if r.revision == 0)
        for task_id, cap, taken, done in tasks:
            assert per_task[task_id] == done <= taken <= cap == per_item, (task_id, cap, taken, done)
        assert sum(per_task.values()) == items * per_item, "the study was not collected to its end"
        claimed = Counter(claims)
        assert len(claimed) == len(reader.context.list_sizes) and max(claimed.values()) == 1, "a list was claimed twice"
        assert max(Counter(positions).values()) == 1, "a list's place was taken twice"
        pairs = Counter((r.participant_id, r.task_id) for r in stored)
        assert max(pairs.values()) == 1
        # the live rule: every first judgement of a settled participant fed once, in one sequence
        fed = [r for r in stored if r.revision == 0 and r.participant_id in set(settled)]
        assert outcome == "continue"
        assert n == len(outcomes) == len(seqs) == len(fed) == items * per_item
        assert sorted(outcomes) == list(range(1, n + 1)) and sorted(seqs) == list(range(1, n + 1))
    finally:
        for store in stores:
            store.close()


@pytest.mark.postgres
def test_pooled_writer_batches_commit_whole_or_not_at_all(db_url: str | None) -> None:
    """PostgreSQL's executor: a batch is one round trip whose statements see each other's writes; a refused or
    failed operation leaves nothing behind; statements stay prepared across rollbacks."""
    if db_url is None:
        pytest.skip("PostgreSQL's executor")
    from sqlalchemy import text

    from humeval.errors import HumevalError, StoreError
    from humeval.store.engine import database_url, operation_engine
    from humeval.store.pool import PooledWriter
    from humeval.store.sql import sql_of

    engine = operation_engine(database_url(db_url, Path("unused")), 3)
    writer = PooledWriter(engine, 3)
    ins = "INSERT INTO kv (k, v) VALUES (:k, :v)"
    try:
        writer.run(lambda conn: sql_of(conn).batch([("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)", None)], commit=True))

        def two_then(conn, k: str, fail: Exception | None):  # type: ignore[no-untyped-def]
            db = sql_of(conn)
            got = db.batch([(ins, {"k": k, "v": 1}), ("UPDATE kv SET v = v + 1 WHERE k = :k RETURNING v", {"k": k}),
                            ("SELECT count(*) FROM kv", None)])
            if fail is not None:
                raise fail
            return got[1].scalar, db.trips

        assert writer.run(lambda conn: two_then(conn, "a", None)) == (2, 2)  # one batch, then the COMMIT
        with pytest.raises(HumevalError):
            writer.run(lambda conn: two_then(conn, "b", HumevalError("refused")))
        with pytest.raises(StoreError, match="kept conflicting"):  # a unique key taken in the batch: run again, given up
            writer.run(lambda conn: sql_of(conn).batch([(ins, {"k": "c", "v": 1}), (ins, {"k": "c", "v": 2})], commit=True))
        assert writer.run(lambda conn: two_then(conn, "d", None))[0] == 2  # prepared statements still there

        def whole(conn, rows: list[tuple[str, int]]):  # type: ignore[no-untyped-def]
            db = sql_of(conn)
            before = db.trips
            db.batch([(ins, {"k": k, "v": v}) for k, v in rows], commit=True)
            return db.trips - before, db.raw.info.transaction_status

        # a batch that is the whole transaction: one round trip without BEGIN and COMMIT (the pipeline's
        # implicit transaction, committed at its Sync), nothing left open, and all or nothing
        assert writer.run(lambda conn: whole(conn, [("e", 1), ("f", 1)])) == (1, 0)
        with pytest.raises(StoreError, match="kept conflicting"):
            writer.run(lambda conn: whole(conn, [("g", 1), ("e", 2)]))
        with engine.connect() as conn:
            assert conn.execute(text("SELECT k, v FROM kv ORDER BY k")).all() == [("a", 2), ("d", 2), ("e", 1), ("f", 1)]
            # statements are planned once per connection (see humeval.store.engine.operation_engine)
            assert conn.exec_driver_sql("SHOW plan_cache_mode").scalar() == "force_generic_plan"
    finally:
        writer.close()
        engine.dispose()


@pytest.mark.postgres
def test_a_rolled_back_feed_leaves_no_outcome_in_the_rule(tmp_path: Path, db_url: str | None) -> None:
    """Process A feeds an outcome in a transaction that rolls back; process B then stores a different outcome at
    the same place. A's next outcome must follow B's, not the one it fed and lost (the rule cache is dropped on
    every rollback)."""
    if db_url is None:
        pytest.skip("two processes on one store: PostgreSQL")
    from humeval.errors import HumevalError
    from humeval.store.live import _feed

    study = _study(tmp_path / "study", 30, stopping=True)
    a, b = _stores(study, db_url)[:2]
    try:
        ctx_a, ctx_b = a.context, b.context
        task = sorted(ctx_a.watched)[0]

        def feed_then_refuse(conn):  # type: ignore[no-untyped-def]
            _feed(conn, ctx_a, "quality", 1, task, 0.0)
            raise HumevalError("refused after feeding")

        with pytest.raises(HumevalError):
            a.writer.run(feed_then_refuse)
        b.writer.run(lambda conn: _feed(conn, ctx_b, "quality", 0, task, 0.0))
        a.writer.run(lambda conn: _feed(conn, ctx_a, "quality", 1, task, 0.0))
        with a.read_engine.connect() as conn:
            stored = [r[0] for r in conn.execute(select(s.outcomes.c.outcome).order_by(s.outcomes.c.n))]
            n, successes = conn.execute(select(s.stopping.c.n, s.stopping.c.successes)).one()
        assert stored == [0, 1] and (n, successes) == (2, 1)
    finally:
        a.close()
        b.close()


@contextlib.contextmanager
def _round_trips(trips: list[int]) -> Iterator[None]:
    """Count the round trips to PostgreSQL of the participant operations in ``trips[-1]``: every batch (a statement
    sent alone is one too), every ``COMMIT`` sent alone (:class:`humeval.store.sql.Sql`)."""
    from humeval.store import sql

    pipeline, commit = sql._pg_pipeline, sql.Sql.commit

    def piped(*args, **kw):  # type: ignore[no-untyped-def]
        trips[-1] += 1
        return pipeline(*args, **kw)

    def committed(self, **kw):  # type: ignore[no-untyped-def]
        trips[-1] += 1 if self.in_tx else 0
        return commit(self, **kw)

    sql._pg_pipeline, sql.Sql.commit = piped, committed  # type: ignore[method-assign]
    try:
        yield
    finally:
        sql._pg_pipeline, sql.Sql.commit = pipeline, commit  # type: ignore[method-assign]


@pytest.mark.postgres
def test_each_participant_operation_takes_a_few_round_trips(tmp_path: Path, db_url: str | None) -> None:
    """PostgreSQL: enter takes two round trips; a first next three (the state, the list claimed with its first tasks
    for them, the task taken and leased with the list recorded as theirs and the COMMIT); a first answer one (its conditional
    writes, a whole transaction); a later next two (the state with the list's next tasks; the task taken and leased
    with the COMMIT). The rarer answers are decided after that batch stored nothing: a repeated key in three (the
    batch, the assignment read, the COMMIT), an edit in three (the batch, the read, the edit with the COMMIT), an
    answered one refused in two; values the task does not admit are refused after the read alone (one)."""
    if db_url is None:
        pytest.skip("round trips to PostgreSQL")

    study = _study(tmp_path / "study", 30)
    store = _stores(study, db_url)[0]
    trips: list[int] = []

    async def op(coro):  # type: ignore[no-untyped-def]
        trips.append(0)
        return await coro

    async def main() -> None:
        await op(store.enter("T1", "local", {}))
        view = await op(store.next_assignment("T1"))
        assert isinstance(view, AssignmentView) and store.context.task_of(view.assignment_id) is view.task
        first = await op(store.submit("T1", view.assignment_id, "k1", {"quality": "A"}))
        assert first.judgement.created and first.judgement.revision == 0
        again = await op(store.submit("T1", view.assignment_id, "k1", {"quality": "A"}))  # the same key: the stored one
        assert again.judgement.id == first.judgement.id and not again.judgement.created
        edit = await op(store.submit("T1", view.assignment_id, "k2", {"quality": "B"}))
        assert edit.judgement.revision == 1
        with pytest.raises(Refusal) as refused:
            await op(store.submit("T1", view.assignment_id, "k3", {"quality": "B"}, only_open=True))
        assert refused.value.code == "already_submitted"
        with pytest.raises(Refusal) as refused:  # someone else's assignment: unknown to them, before any value check
            await op(store.submit("T2", view.assignment_id, "k4", {"quality": "nonsense"}))
        assert refused.value.code == "unknown_assignment"
        await op(store.next_assignment("T1"))

    try:
        with _round_trips(trips):
            asyncio.run(main())
        with store.read_engine.connect() as conn:
            rows = conn.execute(select(s.judgements.c.idempotency_key, s.judgements.c.revision)).all()
    finally:
        store.close()
    assert trips == [2, 3, 1, 3, 3, 2, 1, 2], trips
    assert sorted(rows) == [("k1", 0), ("k2", 1)]


@pytest.mark.postgres
def test_an_answer_with_next_leases_the_next_task_in_the_same_operation(tmp_path: Path, db_url: str | None) -> None:
    """PostgreSQL: ``submit(..., then_next=True)`` stores the answer and leases the next position of the list in one
    round trip (the answer's conditional writes, then the take and the lease of the place after the one answered,
    which the process remembered when it leased that one): the same tasks, in the same order, as the page's way, in
    whichever process; a repeated answer leases nothing more."""
    if db_url is None:
        pytest.skip("round trips to PostgreSQL")

    study = _study(tmp_path / "study", 30)
    store, other = _stores(study, db_url)[:2]
    trips: list[int] = [0]

    async def main() -> list[tuple[int, str]]:
        await store.enter("N1", "local", {})
        view = await store.next_assignment("N1")
        leased = []
        for n in range(1, 11):
            assert isinstance(view, AssignmentView)
            leased.append(view.assignment_id)
            trips.append(0)  # the round trips of this answer
            result = await store.submit("N1", view.assignment_id, f"n-{n}", {"quality": "A"}, then_next=True)
            trips.append(0)  # (those of the checks below: not counted)
            assert result.judgement.created
            if n == 3:  # the same answer again: stored once, and the assignment already leased comes back
                again = await store.submit("N1", view.assignment_id, f"n-{n}", {"quality": "A"}, then_next=True)
                assert not again.judgement.created and again.next.assignment_id == result.next.assignment_id
            if n == 5:  # another process shows the participant their page: the same task
                assert (await other.next_assignment("N1")).assignment_id == result.next.assignment_id
            view = result.next
            if n < 10:
                assert view.progress.done == n and (await store.next_assignment("N1")).assignment_id == view.assignment_id
        assert isinstance(view, Progress) and view.completed
        with store.read_engine.connect() as conn:
            a = s.assignments.c
            rows = conn.execute(select(a.position, a.assignment_id).where(a.participant_id == "N1")).all()
        assert sorted(aid for _, aid in rows) == sorted(leased)
        return sorted(rows)

    try:
        with _round_trips(trips):
            rows = asyncio.run(main())
    finally:
        store.close()
        other.close()
    assert [pos for pos, _ in rows] == list(range(10))  # the list's positions in order, each once
    # each answer: one round trip; the 10th, with no place after it, reads the participant's state with the answer
    # (1), then marks the list done and them completed, with the COMMIT (1)
    answers = trips[1::2]
    assert answers == [1] * 9 + [2], trips


def test_a_participant_is_pinned_to_the_link_of_their_first_entry(tmp_path: Path, db_url: str | None) -> None:
    """Another SESSION_ID for a known PROLIFIC_PID is refused, also when both arrive at once through several
    stores: exactly one session wins, and nothing of the other is written."""
    study = _study(tmp_path / "study", items=40)
    stores = _stores(study, db_url)

    def link(session: str) -> dict[str, str]:
        return {"PROLIFIC_PID": "P1", "STUDY_ID": "st", "SESSION_ID": session}

    def sessions() -> int:
        return len(stores[0].read(lambda c: c.execute(select(s.sessions.c.session_id)).all()))

    try:
        async def main() -> list[str | Refusal]:
            await stores[0].enter("P1", "prolific", link("S1"))
            await stores[-1].enter("P1", "prolific", link("S1"))  # the same session comes back
            with pytest.raises(Refusal) as refused:
                await stores[-1].enter("P1", "prolific", link("S2"))
            assert refused.value.code == "entry_session_mismatch" and refused.value.status == 403
            assert "SESSION_ID" in refused.value.message and "S1" not in refused.value.message
            race = [st.enter(f"R{j}", "prolific", {"PROLIFIC_PID": f"R{j}", "STUDY_ID": "st", "SESSION_ID": f"S{k}"})
                    for j in range(8) for k, st in enumerate((stores[0], stores[-1], stores[0]))]
            return await asyncio.gather(*race, return_exceptions=True)

        outcomes = asyncio.run(main())
        assert sessions() == 2 + 8  # P1 twice, then one session per raced participant
        for j in range(8):
            three = outcomes[3 * j:3 * j + 3]
            assert sum(isinstance(o, str) for o in three) == 1, three  # one session wins the race
            assert all(o.code == "entry_session_mismatch" for o in three if isinstance(o, Refusal)), three
    finally:
        for st in stores:
            st.close()


def test_a_take_lost_between_the_read_and_the_lease_reads_again(tmp_path: Path, db_url: str | None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer sent with the lease of the list's next place leases nothing when that place's task is full (here
    taken by others before the answer); the operation then reads the list's next task with room and takes it with its
    lease in the next round trip, and when another transaction takes that task's last unit in between, the take's
    batch leases nothing (no assignment, so no list place) and the operation reads again: the answer is stored once
    and the participant gets the list's next task with room."""
    from humeval.store import assign

    study = _study(tmp_path / "study", items=30)
    store = _stores(study, db_url)[0]
    lease, full, stolen = assign._lease, [], []

    def lose_first(db, ctx, participant_id, task_id, *args, **kw):  # type: ignore[no-untyped-def]
        if not stolen:  # another transaction takes the last unit now
            stolen.append(task_id)
            db.run("UPDATE tasks SET taken = cap WHERE task_id = :t", {"t": task_id})
        return lease(db, ctx, participant_id, task_id, *args, **kw)

    async def main() -> tuple[AssignmentView, AssignmentView | Progress | None]:
        await store.enter("L1", "local", {})
        first = await store.next_assignment("L1")
        assert isinstance(first, AssignmentView)
        leased, _, position, task_id, _ = store.context.upcoming["L1"]  # the place the answer's batch will lease
        assert leased.assignment_id == first.assignment_id and position == 1
        full.append(task_id)
        store.write(lambda conn: conn.execute(update(s.tasks).where(s.tasks.c.task_id == task_id).values(taken=s.tasks.c.cap)))
        monkeypatch.setattr(assign, "_lease", lose_first)
        result = await store.submit("L1", first.assignment_id, "l-1", {"quality": "A"}, then_next=True)
        assert result.judgement.created
        return first, result.next

    try:
        first, following = asyncio.run(main())
        assert isinstance(following, AssignmentView) and stolen and following.task.task_id not in (*full, *stolen)
        assert following.progress.done == 1
        with store.read_engine.connect() as conn:
            a, j = s.assignments.c, s.judgements.c
            mine = conn.execute(select(a.task_id, a.status).where(a.participant_id == "L1")).all()
            judged = conn.execute(select(j.assignment_id)).scalars().all()
    finally:
        store.close()
    assert sorted(mine) == sorted([(first.task.task_id, "done"), (following.task.task_id, "leased")])
    assert judged == [first.assignment_id]
