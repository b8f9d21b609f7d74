"""Fill an empty store from the study: outputs, tasks and lists (``lists/*.jsonl``), comparisons.

The watched comparisons (and so the ``stopping`` rows and ``watched_tasks``) come from
:func:`humeval.protocol.comparisons.watched_comparisons`; a pair it cannot resolve raises
its :class:`~humeval.errors.ProtocolError` here, before the server collects anything.

Run once by ``humeval serve`` before the server processes start. :func:`add_lists` adds
participant lists to a seeded store (a re-run of short tasks) while no server runs on it. A store already seeded
from the same protocol is left alone; one seeded from a different protocol is refused
(judgements would no longer match their tasks).
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from typing import Any

from sqlalchemy import Connection, func, insert, select, text

from humeval.design.tasks import ParticipantList, Task
from humeval.errors import StoreError
from humeval.hashing import sha256_file
from humeval.protocol.comparisons import watched_comparisons
from humeval.store import schema as s
from humeval.store.context import strategy_of, watched_tasks
from humeval.study import Study

__all__ = ["add_lists", "seed_store"]

_CHUNK = 500


def _insert(conn: Connection, table: Any, rows: list[dict[str, Any]]) -> None:
    for i in range(0, len(rows), _CHUNK):
        conn.execute(insert(table), rows[i : i + _CHUNK])


def _task_row(seq: int, t: Task, cap: int) -> dict[str, Any]:
    return {
        "seq": seq,
        "task_id": t.task_id,
        "item_id": t.item_id,
        "systems": json.dumps(list(t.systems)),
        "criteria": json.dumps(list(t.criteria)),
        "family": t.family,
        "kind": t.kind,
        "expected": json.dumps(t.expected),
        "text": t.text,
        "repeat_of": t.repeat_of,
        "cap": cap,
        "taken": 0,
        "done": 0,
        "open": int(cap > 0),
        "closed": 0,
    }


def _insert_lists(conn: Connection, lists: list[ParticipantList]) -> None:
    _insert(conn, s.lists,
            [{"list_id": pl.list_id, "round": pl.round, "size": len(pl.tasks), "completed": 0} for pl in lists])
    _insert(conn, s.list_tasks,
            [{"list_id": pl.list_id, "position": i, "task_id": t.task_id} for pl in lists for i, t in enumerate(pl.tasks)])


_RAISE_CAP = "UPDATE tasks SET cap = cap + :k, open = CASE WHEN taken < cap + :k THEN 1 ELSE 0 END WHERE task_id = :t"


def add_lists(conn: Connection, lists: list[ParticipantList]) -> list[str]:
    """Add participant lists to a seeded store (a re-run of the tasks collation found short); returns the ids added.

    Lists already in the store are skipped (by ``list_id``). A task already in the store has its
    cap raised by the times the new lists hold it; a new task (an attention check of a re-run
    list) gets a row of its own. Running server processes cache the tasks when they start: add
    lists while no server runs on the store, then start it. Participant lists only: a store of a
    pool strategy (``assignment.strategy`` other than ``list``) is refused.
    """
    row = conn.execute(select(s.meta.c.value).where(s.meta.c.key == "protocol_sha256")).first()
    if row is None:
        raise StoreError("add lists: the store is not seeded yet; run `humeval serve` (or Store.prepare) first")
    if not conn.execute(select(s.lists.c.list_id).limit(1)).first():
        raise StoreError("add lists: the store holds no participant lists (a pool strategy assigns tasks itself)")
    existing = {r[0] for r in conn.execute(select(s.lists.c.list_id))}
    new = [pl for pl in lists if pl.list_id not in existing]
    if not new:
        return []
    known = {r[0] for r in conn.execute(select(s.tasks.c.task_id))}
    occurrences = Counter(t.task_id for pl in new for t in pl.tasks)
    first = conn.execute(select(func.max(s.tasks.c.seq))).scalar_one() + 1
    fresh: dict[str, Task] = {}
    for pl in new:
        for t in pl.tasks:
            if t.task_id not in known:
                fresh.setdefault(t.task_id, t)
    _insert(conn, s.tasks, [_task_row(first + i, t, occurrences[tid]) for i, (tid, t) in enumerate(fresh.items())])
    for tid, k in occurrences.items():
        if tid in known:
            conn.execute(text(_RAISE_CAP), {"k": k, "t": tid})
    _insert_lists(conn, new)
    return [pl.list_id for pl in new]


def seed_store(conn: Connection, study: Study) -> bool:
    """Seed inside the caller's transaction; True if it seeded, False if already seeded."""
    protocol = study.protocol
    digest = sha256_file(study.protocol_file)
    meta = dict(conn.execute(select(s.meta.c.key, s.meta.c.value)).all())
    if "secret" not in meta:
        conn.execute(insert(s.meta).values(key="secret", value=secrets.token_hex(32)))
    if "protocol_sha256" in meta:
        if meta["protocol_sha256"] != digest:
            raise StoreError(
                f"{study.protocol_file}: the store was filled from another version of the protocol "
                f"(sha256 {meta['protocol_sha256'][:12]}..., now {digest[:12]}...); "
                "use a new --db or restore the protocol"
            )
        return False
    tasks_file, lists_file = study.tasks_file, study.lists_file
    if not tasks_file.is_file() or not lists_file.is_file():
        raise StoreError(f"{study.lists_dir}: no tasks or participant lists yet; run `humeval run {study.root}` first")
    outputs = study.outputs()  # pandas: only here, never in a server process
    frame = outputs.frame
    systems = list(protocol.systems) or outputs.systems
    frame = frame.drop_duplicates(["item_id", "system"])
    _insert(
        conn,
        s.outputs,
        [
            {"item_id": r.item_id, "system": r.system, "output": r.output, "input": r.input, "references": r.references}
            for r in frame.itertuples(index=False)
        ],
    )
    design_tasks = study.read_tasks()
    lists = study.read_lists()
    strategy = strategy_of(protocol)
    by_id: dict[str, Task] = {t.task_id: t for t in design_tasks}
    if strategy is None:
        occurrences = Counter(t.task_id for pl in lists for t in pl.tasks)
        for pl in lists:
            for t in pl.tasks:
                by_id.setdefault(t.task_id, t)
        caps = {tid: occurrences.get(tid, 0) for tid in by_id}
    else:
        first = strategy.workers_needed([])
        caps = {tid: first for tid in by_id}
    _insert(conn, s.tasks, [_task_row(seq, t, caps[tid]) for seq, (tid, t) in enumerate(by_id.items())])
    if strategy is None:
        _insert_lists(conn, lists)
    comparisons = {c.criterion: c for c in watched_comparisons(protocol, systems)}  # ProtocolError: unresolvable
    for comparison in comparisons.values():
        conn.execute(
            insert(s.stopping).values(
                comparison=comparison.criterion,
                rule=comparison.rule,
                delta=comparison.delta,
                system_a=comparison.system_a,
                system_b=comparison.system_b,
                n=0,
                successes=0,
                outcome="continue",
                reason="no outcome yet",
                logged=0,
            )
        )
    _insert(
        conn,
        s.watched_tasks,
        [{"comparison": c, "task_id": tid} for tid, cs in watched_tasks(by_id, comparisons).items() for c in cs],
    )
    conn.execute(
        insert(s.meta),
        [{"key": "protocol_sha256", "value": digest}, {"key": "systems", "value": json.dumps(systems)}],
    )
    return True
