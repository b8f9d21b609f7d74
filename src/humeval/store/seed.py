"""Fill an empty store from the study: outputs, tasks and lists (``lists/*.jsonl``), comparisons.

The watched comparisons (and so the ``stopping`` rows and ``watched_tasks``) come from
:func:`humeval.protocol.comparisons.watched_comparisons`; a pair it cannot resolve raises
its :class:`~humeval.errors.ProtocolError` here, before the server collects anything.

Run once by ``humeval serve`` before the server processes start; :func:`seed_rerun` then adds
the re-run lists ``humeval collate`` dealt for the judgements still missing (once per file). A store already seeded
from the same protocol is left alone; one seeded from a different protocol is refused
(judgements would no longer match their tasks).
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, and_, insert, select, update

from humeval.design.tasks import ParticipantList, Task
from humeval.errors import StoreError
from humeval.files import read_jsonl
from humeval.hashing import sha256_file
from humeval.protocol.comparisons import watched_comparisons
from humeval.store import schema as s
from humeval.store.context import strategy_of, watched_tasks
from humeval.study import Study

__all__ = ["seed_rerun", "seed_store"]

_CHUNK = 20_000

#: ``progress(what, done, total)``: rows of ``what`` inserted so far
Progress = Callable[[str, int, int], None]


def _insert(conn: Connection, table: Any, rows: list[dict[str, Any]], progress: Progress | None = None) -> None:
    """Bulk insert in the caller's transaction: the driver's ``executemany`` on named parameters
    (SQLAlchemy's per-row parameter processing took most of the seeding time of a large study)."""
    if not rows:
        return
    names = list(rows[0])
    quote = conn.dialect.identifier_preparer.quote
    marks = [f":{n}" if conn.dialect.paramstyle in ("named", "qmark", "numeric") else f"%({n})s" for n in names]
    sql = f"INSERT INTO {quote(table.name)} ({', '.join(map(quote, names))}) VALUES ({', '.join(marks)})"
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        for i in range(0, len(rows), _CHUNK):
            cursor.executemany(sql, rows[i : i + _CHUNK])
            if progress:
                progress(table.name, min(i + _CHUNK, len(rows)), len(rows))
    finally:
        cursor.close()


def _texts(study: Study) -> list[dict[str, str]]:
    """The store's ``outputs`` rows: ``lists/texts.jsonl`` (the design stage's, no data tables needed);
    for a design made before that file existed, every row of the study's outputs (pandas)."""
    columns = ("item_id", "system", "output", "input", "references", "format")
    if study.texts_file.is_file():
        return [{c: str(r.get(c, "")) for c in columns} for r in read_jsonl(study.texts_file, what="texts")]
    frame = study.outputs().frame.drop_duplicates(["item_id", "system"])
    return [dict(zip(columns, values, strict=True)) for values in frame[list(columns)].itertuples(index=False)]


def seed_store(conn: Connection, study: Study, progress: Progress | None = None) -> bool:
    """Seed inside the caller's transaction; True if it seeded, False if already seeded.

    ``progress(what, done, total)`` hears of every chunk of rows inserted (a large study
    inserts millions of rows)."""
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
    texts = _texts(study)
    systems = list(protocol.systems) or sorted({r["system"] for r in texts})
    _insert(conn, s.outputs, texts, progress)
    design_tasks = study.read_tasks()
    lists = study.read_lists(design_tasks)
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
    rows = []
    encoded: dict[Any, str] = {}  # systems and criteria repeat across tasks: encode each tuple once

    def dumps(value: Any) -> str:
        key = (type(value), value) if isinstance(value, (tuple, str, int, float, type(None))) else None
        if key is None:
            return json.dumps(list(value) if isinstance(value, tuple) else value)
        if key not in encoded:
            encoded[key] = json.dumps(list(value) if isinstance(value, tuple) else value)
        return encoded[key]

    for seq, (tid, t) in enumerate(by_id.items()):
        rows.append(
            {
                "seq": seq,
                "task_id": tid,
                "item_id": t.item_id,
                "systems": dumps(t.systems),
                "criteria": dumps(t.criteria),
                "family": t.family,
                "kind": t.kind,
                "expected": dumps(t.expected),
                "text": t.text,
                "repeat_of": t.repeat_of,
                "cap": caps[tid],
                "taken": 0,
                "done": 0,
                "open": int(caps[tid] > 0),
                "closed": 0,
            }
        )
    _insert(conn, s.tasks, rows, progress)
    if strategy is None:
        _insert(
            conn,
            s.lists,
            [{"list_id": pl.list_id, "round": pl.round, "size": len(pl.tasks), "completed": 0} for pl in lists],
            progress,
        )
        _insert(
            conn,
            s.list_tasks,
            [
                {"list_id": pl.list_id, "position": i, "task_id": t.task_id}
                for pl in lists
                for i, t in enumerate(pl.tasks)
            ],
            progress,
        )
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


def seed_rerun(conn: Connection, study: Study, path: Path) -> int:
    """Add the re-run lists in ``path`` (written by ``collate``) once; return how many lists were added.

    Each task's cap grows by its occurrences in the re-run lists (decided and closed tasks
    stay closed); with the ``list`` strategy the lists themselves are added under ids that
    carry the file's hash (``R0001.<hash8>``), so a later collation's lists never collide
    with these. A file already added is left alone; a task the store does not know is refused.
    """
    if not path.is_file():
        return 0
    digest = sha256_file(path)
    marker = f"rerun:{digest[:32]}"  # meta keys are at most 64 characters
    if conn.execute(select(s.meta.c.key).where(s.meta.c.key == marker)).first() is not None:
        return 0
    lists = [ParticipantList.from_json(r) for r in read_jsonl(path, what="re-run lists")]
    extra = Counter(t.task_id for pl in lists for t in pl.tasks)
    t = s.tasks.c
    known = set(conn.execute(select(t.task_id).where(t.task_id.in_(list(extra)))).scalars())
    if unknown := sorted(set(extra) - known):
        raise StoreError(f"{path}: {len(unknown)} task(s) the store was not seeded with, e.g. {unknown[0]!r}; "
                         "collate the judgements of this study's own store")
    for task_id, n in extra.items():
        conn.execute(update(s.tasks).where(and_(t.task_id == task_id, t.closed == 0)).values(cap=t.cap + n, open=1))
    if strategy_of(study.protocol) is None:
        ids = {pl.list_id: f"{pl.list_id}.{digest[:8]}" for pl in lists}
        _insert(conn, s.lists, [{"list_id": ids[pl.list_id], "round": pl.round, "size": len(pl.tasks), "completed": 0}
                                for pl in lists])
        _insert(conn, s.list_tasks, [{"list_id": ids[pl.list_id], "position": i, "task_id": task.task_id}
                                     for pl in lists for i, task in enumerate(pl.tasks)])
    conn.execute(insert(s.meta).values(key=marker, value=str(len(lists))))
    return len(lists)
