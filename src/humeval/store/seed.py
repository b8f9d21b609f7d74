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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from itertools import count, islice, repeat
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Table

from humeval.design.tasks import ParticipantList, Task, list_entries, unknown_task
from humeval.errors import DataError, StoreError
from humeval.files import iter_jsonl, read_jsonl
from humeval.hashing import sha256_file
from humeval.protocol.comparisons import watched_comparisons, watched_tasks
from humeval.store import schema as s
from humeval.store.context import META, strategy_of
from humeval.store.generations import doomed_tasks
from humeval.store.migrations import MARK_WATCHED_LISTS
from humeval.store.sql import sql_of
from humeval.study import StudyFolder

__all__ = ["seed_rerun", "seed_store", "skip_doomed"]

_CHUNK = 50_000
#: SQLite's page cache while seeding, KiB
_SEED_CACHE_KIB = 128 * 1024

#: ``progress(what, done, total)``: of the step ``what`` (the lines of a design file, the indexes
#: built), ``done`` of ``total`` so far
Progress = Callable[[str, int, int], None]

_TASK_COLUMNS = ("seq", "task_id", "item_id", "systems", "criteria", "family", "kind", "expected", "text", "repeat_of",
                 "cap", "taken", "open", "closed")
_OUTPUT_COLUMNS = ("item_id", "system", "output", "input", "references", "format")
_META_PUT = "INSERT INTO meta (key, value) VALUES (:k, :v)"
_INDEXES = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = :t AND sql IS NOT NULL"
#: a re-run's occurrences of a task added to its cap (a closed task's row is matched, and left as it is)
_GROW_CAP = ("UPDATE tasks SET cap = cap + CASE WHEN closed = 0 THEN :n ELSE 0 END, "
             "open = CASE WHEN closed = 0 THEN 1 ELSE open END WHERE task_id = :t")


class _Loader:
    """Bulk inserts in the caller's transaction: ``COPY ... FROM STDIN`` on PostgreSQL, the driver's
    ``executemany`` on positional rows elsewhere (SQLAlchemy's per-row parameter processing took
    most of the seeding time of a large study)."""

    def __init__(self, conn: Connection) -> None:
        self.db = sql_of(conn)
        self.dbapi = conn.connection.dbapi_connection
        self.copy = self.db.pg
        self.quote = conn.dialect.identifier_preparer.quote
        self.mark = "%s" if conn.dialect.paramstyle in ("format", "pyformat") else "?"

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """A larger page cache on SQLite while seeding (the unique index on task ids is filled in
        random order: with SQLite's default 2 MB cache its pages are spilled and read back)."""
        if self.copy:
            yield
            return
        before = int(self.db.scalar("PRAGMA cache_size"))
        self.db.run(f"PRAGMA cache_size={-_SEED_CACHE_KIB}")
        try:
            yield
        finally:
            self.db.run(f"PRAGMA cache_size={before}")

    @contextmanager
    def indexes_after(self, table: Table, progress: Progress | None = None) -> Iterator[None]:
        """SQLite: the table's own indexes dropped for the bulk load and built once after it (in the
        same transaction), instead of updated row by row in random order; ``progress`` hears of each."""
        if self.copy:
            yield
            return
        ddl = self.db.all(_INDEXES, {"t": table.name})
        for name, _ in ddl:
            self.db.run(f"DROP INDEX {self.quote(name)}")
        yield
        for i, (_, sql) in enumerate(ddl):
            if progress:
                progress(f"indexes of {table.name}", i, len(ddl))
            self.db.run(sql)
        if progress and ddl:
            progress(f"indexes of {table.name}", len(ddl), len(ddl))

    def analyze(self, *tables: Table) -> None:
        """PostgreSQL: statistics of the freshly loaded tables now (the planner would otherwise plan the
        first queries, e.g. the admin page's aggregates, for empty tables until autovacuum runs)."""
        if self.copy:
            self.db.run("ANALYZE " + ", ".join(self.quote(t.name) for t in tables))

    def insert(self, table: Table, columns: tuple[str, ...], rows: Iterable[tuple[Any, ...]]) -> None:
        """Insert ``rows`` (tuples in the order of ``columns``), ``_CHUNK`` rows per statement."""
        names, it = ", ".join(map(self.quote, columns)), iter(rows)
        cursor = self.dbapi.cursor()  # type: ignore[union-attr]
        try:
            while chunk := list(islice(it, _CHUNK)):
                if self.copy:
                    with cursor.copy(f"COPY {self.quote(table.name)} ({names}) FROM STDIN") as copy:
                        for row in chunk:
                            copy.write_row(row)
                else:
                    marks = ", ".join([self.mark] * len(columns))
                    cursor.executemany(f"INSERT INTO {self.quote(table.name)} ({names}) VALUES ({marks})", chunk)
        finally:
            cursor.close()


def _lines(path: Path) -> int:
    """Lines in ``path`` (the total a streamed file's progress counts towards)."""
    n, last = 0, b"\n"
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            n, last = n + block.count(b"\n"), block[-1:]
    return n + (last != b"\n")


def _stream(path: Path, what: str, label: str, progress: Progress | None) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``path`` one by one; ``progress(label, lines read, lines)`` every ``_CHUNK``
    lines and at the end."""
    total = _lines(path) if progress else 0
    lineno = told = 0
    for lineno, row in iter_jsonl(path, what=what, hint="run `humeval run` (sample and design) first"):
        yield row
        if progress and lineno - told >= _CHUNK:
            progress(label, lineno, total)
            told = lineno
    if progress:
        progress(label, lineno, lineno)


def _texts(study: StudyFolder, progress: Progress | None) -> Iterator[tuple[str, ...]]:
    """The store's ``outputs`` rows: ``lists/texts.jsonl`` (the design stage's, no data tables needed);
    for a design made before that file existed, every row of the study's outputs (pandas)."""
    if study.texts_file.is_file():
        for r in _stream(study.texts_file, "texts", "outputs, rows of lists/texts.jsonl", progress):
            get = r.get
            yield tuple([str(get(c, "")) for c in _OUTPUT_COLUMNS])
        return
    frame = study.outputs().frame.drop_duplicates(["item_id", "system"])
    yield from frame[list(_OUTPUT_COLUMNS)].itertuples(index=False, name=None)


class _Encoded(dict[tuple[str, ...], str]):
    """JSON text of the tuples tasks repeat (their systems, their criteria): each encoded once."""

    def __missing__(self, key: tuple[str, ...]) -> str:
        self[key] = text = json.dumps(list(key))
        return text


def seed_store(conn: Connection, study: StudyFolder, progress: Progress | None = None) -> bool:
    """Seed inside the caller's transaction; True if it seeded, False if already seeded.

    The design files are streamed (a study of 100,000 items has 600,000 tasks and 1,800,000
    list places): nothing proportional to the study is held but the task ids and their
    occurrences. ``progress(what, done, total)`` hears of every 50,000 lines of each file."""
    digest = sha256_file(study.protocol_file)
    db = sql_of(conn)
    meta = dict(db.all(META))
    if "secret" not in meta:
        db.run(_META_PUT, {"k": "secret", "v": secrets.token_hex(32)})
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
    load = _Loader(conn)
    with load.bulk():
        return _seed(conn, study, load, digest, progress)


def _seed(conn: Connection, study: StudyFolder, load: _Loader, digest: str, progress: Progress | None) -> bool:
    protocol, tasks_file, lists_file = study.protocol, study.tasks_file, study.lists_file
    seen_systems: set[str] = set()

    def outputs() -> Iterator[tuple[str, ...]]:
        for row in _texts(study, progress):
            seen_systems.add(row[1])
            yield row

    load.insert(s.outputs, _OUTPUT_COLUMNS, outputs())
    systems = list(protocol.systems) or sorted(seen_systems)
    comparisons = {c.criterion: c for c in watched_comparisons(protocol, systems)}  # ProtocolError: unresolvable
    strategy = strategy_of(protocol)

    # the lists first (the list strategy caps a task at its occurrences in them); the ids they name are checked below
    named: Counter[str] = Counter()  # occurrences of every task in the lists
    inline: dict[str, Task] = {}  # attention checks and repeats, written in full in the lists
    rows: list[tuple[Any, ...]] = []
    places: list[tuple[str, int, str]] = []
    with load.indexes_after(s.lists, progress):
        for data in _stream(lists_file, "participant lists", "lists and list_tasks, lists of lists/lists.jsonl", progress):
            list_id, round_, ids, written = list_entries(data)
            named.update(ids)
            for t in written.values():
                inline.setdefault(t.task_id, t)
            if strategy is not None:  # pool strategies serve no lists: they are only read to be checked
                continue
            rows.append((list_id, round_, len(ids), 0))
            places.extend(zip(repeat(list_id), count(), ids))
            if len(places) >= _CHUNK:
                load.insert(s.lists, ("list_id", "round", "size", "completed"), rows)
                load.insert(s.list_tasks, ("list_id", "position", "task_id"), places)
                rows.clear()
                places.clear()
        load.insert(s.lists, ("list_id", "round", "size", "completed"), rows)
        load.insert(s.list_tasks, ("list_id", "position", "task_id"), places)

    first = None if strategy is None else strategy.workers_needed([])
    known: set[str] = set()  # the ids of lists/tasks.jsonl
    watched: dict[str, tuple[str, ...]] = {}
    encoded = _Encoded()

    def row(seq: int, t: Task) -> tuple[Any, ...]:
        cap = named.get(t.task_id, 0) if first is None else first
        expected = "null" if t.expected is None else json.dumps(t.expected)
        return (seq, t.task_id, t.item_id, encoded[t.systems], encoded[t.criteria], t.family, t.kind, expected,
                t.text, t.repeat_of, cap, 0, int(cap > 0), 0)

    def task_rows() -> Iterator[tuple[Any, ...]]:
        batch: dict[str, Task] = {}
        for seq, data in enumerate(_stream(tasks_file, "tasks", "tasks, rows of lists/tasks.jsonl", progress)):
            t = Task.from_json(data)
            if t.task_id in known:
                raise DataError(f"{tasks_file}: task {t.task_id!r} appears twice; run the design stage again (`humeval run`)")
            known.add(t.task_id)
            if comparisons:  # no comparison watches any task otherwise
                batch[t.task_id] = t
            if len(batch) >= _CHUNK:
                watched.update(watched_tasks(batch, comparisons))
                batch.clear()
            yield row(seq, t)
        seq = len(known)
        if strategy is None:  # then the attention checks and repeats only the lists hold, in their order
            for tid, t in inline.items():
                if tid not in known:
                    batch[tid] = t
                    yield row(seq, t)
                    seq += 1
        watched.update(watched_tasks(batch, comparisons))

    with load.indexes_after(s.tasks, progress):
        load.insert(s.tasks, _TASK_COLUMNS, task_rows())
    if missing := next((tid for tid in named if tid not in known and tid not in inline), None):
        raise unknown_task(_first_list_naming(lists_file, missing), missing)

    load.insert(s.stopping, ("comparison", "rule", "delta", "system_a", "system_b", "n", "successes", "outcome",
                             "reason", "logged"),
                [(c.criterion, c.rule, c.delta, c.system_a, c.system_b, 0, 0, "continue", "no outcome yet", 0)
                 for c in comparisons.values()])
    load.insert(s.watched_tasks, ("comparison", "task_id"), ((c, tid) for tid, cs in watched.items() for c in cs))
    db = sql_of(conn)
    db.run(MARK_WATCHED_LISTS)
    load.analyze(s.outputs, s.tasks, s.lists, s.list_tasks, s.watched_tasks)
    db.run(_META_PUT, {"k": "protocol_sha256", "v": digest})
    db.run(_META_PUT, {"k": "systems", "v": json.dumps(systems)})
    return True


def _first_list_naming(lists_file: Path, task_id: str) -> str:
    """The id of the first participant list that names ``task_id`` (for the error message)."""
    for _, data in iter_jsonl(lists_file, what="participant lists"):
        if task_id in data["tasks"]:
            return str(data["list_id"])
    return "?"


def skip_doomed(conn: Connection, study: StudyFolder, lists: list[ParticipantList]) -> list[ParticipantList]:
    """``lists`` without the live battles whose failure would come again (:func:`humeval.store.generations.doomed_tasks`:
    a recorded model's missing or unusable answer to the data's prompt); a list left empty is dropped."""
    arena = study.protocol.arena
    if arena is None or not arena.models:
        return lists
    doomed = doomed_tasks(conn, {m.name for m in arena.models if m.kind == "recorded"})
    if not doomed:
        return lists
    kept = (replace(pl, tasks=[t for t in pl.tasks if t.task_id not in doomed]) for pl in lists)
    return [pl for pl in kept if pl.tasks]


def seed_rerun(conn: Connection, study: StudyFolder, path: Path) -> int:
    """Add the re-run lists in ``path`` (written by ``collate``) once; return how many lists were added.

    A live battle that failed in a way that would fail it again is left out (:func:`skip_doomed`). Each task's cap
    grows by its occurrences in the re-run lists (decided and closed tasks
    stay closed); with the ``list`` strategy the lists themselves are added under ids that
    carry the file's hash (``R0001.<hash8>``), so a later collation's lists never collide
    with these. A file already added is left alone; a task the store does not know is refused.
    """
    if not path.is_file():
        return 0
    digest = sha256_file(path)
    marker = f"rerun:{digest[:32]}"  # meta keys are at most 64 characters
    db = sql_of(conn)
    if db.one("SELECT 1 FROM meta WHERE key = :k", {"k": marker}) is not None:
        return 0
    lists = skip_doomed(conn, study, [ParticipantList.from_json(r) for r in read_jsonl(path, what="re-run lists")])
    extra = Counter(t.task_id for pl in lists for t in pl.tasks)
    # every task of the lists is known (its row is updated; closed tasks stay as they are), or nothing is added
    if unknown := sorted(task_id for task_id, n in extra.items() if db.run(_GROW_CAP, {"t": task_id, "n": n}) == 0):
        raise StoreError(f"{path}: {len(unknown)} task(s) the store was not seeded with, e.g. {unknown[0]!r}; "
                         "collate the judgements of this study's own store")
    if strategy_of(study.protocol) is None:
        ids = {pl.list_id: f"{pl.list_id}.{digest[:8]}" for pl in lists}
        load = _Loader(conn)
        load.insert(s.lists, ("list_id", "round", "size", "completed"),
                    [(ids[pl.list_id], pl.round, len(pl.tasks), 0) for pl in lists])
        load.insert(s.list_tasks, ("list_id", "position", "task_id"),
                    [(ids[pl.list_id], i, task.task_id) for pl in lists for i, task in enumerate(pl.tasks)])
        db.run(MARK_WATCHED_LISTS)
    db.run(_META_PUT, {"k": marker, "v": str(len(lists))})
    return len(lists)
