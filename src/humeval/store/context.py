"""What every store operation of a process needs to know: the protocol and the cached tasks.

Loaded once per process from the store (not from the data files: a server process never
imports pandas). A study of 100,000 items x 3 systems has 600,000 tasks and 300,000 texts: held
whole in every process, they took most of a server's memory. :class:`Tasks` holds every task
compactly, :class:`Texts` every item's texts compressed: the hot path never reads the store for
either. The labelling strategy
comes from :mod:`humeval.policies`, the stopping rule from :mod:`humeval.stopping`. The watched
comparisons come from the one resolver, :func:`humeval.protocol.comparisons.watched_comparisons`.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import hmac
import json
import threading
import time
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from sys import intern
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection

from humeval.design.tasks import Task
from humeval.errors import StoreError
from humeval.protocol.comparisons import Comparison, watched_comparisons, watched_tasks
from humeval.protocol.feed import feed_problems
from humeval.protocol.load import format_path
from humeval.protocol.models import Protocol

if TYPE_CHECKING:
    from humeval.policies import LabellingStrategy
    from humeval.store.records import AssignmentView

__all__ = ["LIST_HOLD_SLACK", "RENEW", "RENEW_LIST", "StoreContext", "Tasks", "Texts", "strategy_of"]

#: hex digits of an assignment id's random token (12 bytes: :func:`humeval.store.assign` draws them)
_TOKEN_HEX = 24
_HEX = frozenset("0123456789abcdef")


#: seconds a list may be held beyond what was asked for (:meth:`StoreContext.list_hold`)
LIST_HOLD_SLACK = 60.0
#: a list's hold extended (with :meth:`StoreContext.list_hold`'s parameters), its row written only when the hold
#: would end too soon: the list ``{l}`` (:data:`RENEW_LIST`: the parameter ``:l``)
RENEW = "UPDATE lists SET expires_at = :hold WHERE list_id = {l} AND COALESCE(expires_at, 0) < :renew"
RENEW_LIST = RENEW.format(l=":l")


META = "SELECT key, value FROM meta"
_LIST_WATCHED = ("SELECT lt.list_id, w.comparison, count(*) FROM list_tasks lt JOIN watched_tasks w "
                 "ON w.task_id = lt.task_id GROUP BY lt.list_id, w.comparison")

#: the ``tasks`` columns :class:`Tasks` reads, in its order
TASK_COLUMNS = ("task_id", "item_id", "systems", "criteria", "family", "kind", "expected", "text", "repeat_of", "seq")


@functools.lru_cache(maxsize=4096)
def _names(encoded: str) -> tuple[str, ...]:
    """A JSON list of names as a tuple (systems and criteria repeat across tasks: decoded once)."""
    return tuple(json.loads(encoded))


class Tasks(Mapping[str, Task]):
    """Every task of the store by id (and by ``seq``: :meth:`by_seq`), held compactly: per task its id, its item
    (one string per item) and the index of its shape (systems, criteria, family, kind, expected answer, text,
    repeat: shared by the tasks that differ only in item). A :class:`~humeval.design.tasks.Task` (with its
    ``seq``) is made when asked for; the last ones made are kept, so that the same task asked for twice meanwhile
    is the same object.

    A study of 100,000 items x 3 systems has 600,000 tasks: held as tuples of their own, they took 160 MB of
    every server process; held so, 90 MB. A task's fixed part never changes once seeded (a re-run adds tasks:
    the store loads a new context)."""

    def __init__(self, rows: Iterable[Any], size: int = 4096) -> None:
        """``rows``: the ``tasks`` rows (:data:`TASK_COLUMNS`, in that order)."""
        self.size = size
        self._ids: list[str | None] = []
        self._items: list[str] = []
        self._shape = array("I")
        self._seq: dict[str, int] = {}
        shapes: dict[tuple[Any, ...], int] = {}
        #: (systems, criteria, family, kind, expected, text, repeat_of): a Task's fields after its item
        self._shapes: list[tuple[tuple[str, ...], tuple[str, ...], str, str, Any, str, str]] = []
        for task_id, item_id, systems, criteria, family, kind, expected, text, repeat_of, seq in rows:
            key = (systems, criteria, family, kind, expected, text or "", repeat_of or "")
            if (k := shapes.get(key)) is None:
                k = shapes[key] = len(self._shapes)
                self._shapes.append((_names(systems), _names(criteria), family, kind,
                                     json.loads(expected) if expected != "null" else None, text or "", repeat_of or ""))
            if seq >= len(self._ids):
                grow = seq + 1 - len(self._ids)
                self._ids.extend([None] * grow)
                self._items.extend([""] * grow)
                self._shape.extend([0] * grow)
            self._ids[seq], self._items[seq], self._shape[seq] = task_id, intern(item_id), k
            self._seq[task_id] = seq
        self._made: dict[int, Task] = {}

    @property
    def seqs(self) -> int:
        """One more than the highest ``seq``."""
        return len(self._ids)

    def by_seq(self, seq: int) -> Task | None:
        """The task numbered ``seq``, or None."""
        if (made := self._made.get(seq)) is not None:
            return made
        if not 0 <= seq < len(self._ids) or (task_id := self._ids[seq]) is None:
            return None
        if len(self._made) >= self.size:
            self._made = {}  # the ones made last are kept: a new window (a dict replaced whole: no lock needed)
        made = self._made[seq] = Task(task_id, self._items[seq], *self._shapes[self._shape[seq]], seq=seq)
        return made

    def __getitem__(self, task_id: str) -> Task:
        task = self.by_seq(self._seq[task_id])
        assert task is not None
        return task

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._seq

    def __len__(self) -> int:
        return len(self._seq)

    def __iter__(self) -> Iterator[str]:
        return iter(self._seq)


#: an output's texts: (output, input, references, format)
Text = tuple[str, str, str, str]
D = TypeVar("D")


class Texts:
    """The outputs' texts by (item, system), held compressed: per item, the texts of every system as one
    zlib-compressed JSON document (a study of 100,000 items x 3 systems: 157 MB as strings, ~40 MB so), unpacked
    when a page shows one of them; the last ``items`` unpacked are kept (the answer to a page checks their
    lengths)."""

    def __init__(self, conn: Connection, items: int = 512) -> None:
        self.items = items
        self._packed: dict[str, bytes] = {}
        rows = conn.exec_driver_sql('SELECT item_id, system, output, input, "references", format FROM outputs ORDER BY item_id')
        item: str | None = None
        texts: dict[str, list[str]] = {}
        for r in rows:
            if r[0] != item:
                if item is not None:
                    self._packed[intern(item)] = zlib.compress(json.dumps(texts).encode(), 1)
                item, texts = r[0], {}
            texts[r[1]] = [r[2], r[3], r[4], r[5]]
        if item is not None:
            self._packed[intern(item)] = zlib.compress(json.dumps(texts).encode(), 1)
        self._kept: dict[str, dict[str, Text]] = {}

    def of_item(self, item_id: str) -> dict[str, Text]:
        """Every system's texts of ``item_id`` (empty for an item the store does not have)."""
        if (found := self._kept.get(item_id)) is not None:
            return found
        packed = self._packed.get(item_id)
        found = {} if packed is None else {k: (v[0], v[1], v[2], v[3]) for k, v in json.loads(zlib.decompress(packed)).items()}
        if len(self._kept) >= self.items:
            self._kept = {}
        self._kept[item_id] = found
        return found

    def get(self, key: tuple[str, str], default: D) -> Text | D:
        """The texts of (item, system), or ``default``."""
        return self.of_item(key[0]).get(key[1], default)


def strategy_of(protocol: Protocol) -> LabellingStrategy | None:
    """The labelling strategy of a dynamic assignment, or None for precomputed lists."""
    a = protocol.assignment
    if a.strategy == "list":
        return None
    # numpy (and the stopping rules): imported only for the pool strategies
    from humeval.policies import get_strategy

    if a.strategy == "majority":
        return get_strategy(f"majority{a.workers}")
    return get_strategy(a.strategy)


def _give_back_memory() -> None:
    """The memory the process freed returned to the operating system, which the C library would otherwise keep
    for it: a process loads its context before it serves, and the one that seeded the store freed SQLite's page
    cache of the load and the task ids it counted (a study of 100,000 items: 230 MB kept, 85 MB once returned).
    Where the C library has no ``malloc_trim`` (not glibc), nothing."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


@dataclass
class StoreContext:
    """Per-process state: protocol, task, output and list-size caches, the stopping rules in memory."""

    protocol: Protocol
    tasks: Tasks
    texts: Texts
    systems: list[str]
    comparisons: dict[str, Comparison]
    strategy: LabellingStrategy | None
    secret: bytes
    list_sizes: dict[str, int] = field(default_factory=dict)
    #: ``list`` strategy: per list holding watched pair tasks, how many each comparison watches (a session's
    #: ``w``, :mod:`humeval.stopping.admission`)
    list_watched: dict[str, dict[str, int]] = field(default_factory=dict)
    #: per comparison, the most of its tasks one list holds: ``w``, the size of a session
    session_sizes: dict[str, int] = field(default_factory=dict)
    #: the places of every list that hold a task (checks aside), counted on first use (:func:`humeval.store.reads.unused_lists`)
    task_places: int | None = None
    last_reap: float = 0.0
    #: the process beats (:mod:`humeval.store.alive`: a server): it reaps only while the last beat is fresh, so that
    #: a downtime is moved before anything is reclaimed for it
    heartbeat: bool = False
    #: ``list`` strategy: per participant, the lease this process gave them last, its list, the list's next place
    #: with its task, and until when at least the list is held (:func:`humeval.store.assign.lease_after`)
    upcoming: dict[str, tuple[AssignmentView, str, int, str, float]] = field(default_factory=dict)
    rules: dict[str, tuple[Any, int]] = field(default_factory=dict)
    watched: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: goals over K systems: criterion -> (i, j) -> the pair's watched tasks (built on first use)
    pair_tasks: dict[str, dict[tuple[int, int], list[str]]] = field(default_factory=dict)
    #: how long a list and lease are held before a participant's first submit (None: a whole lease)
    first_lease_seconds: int | None = None
    #: :attr:`lease_seconds`, once worked out
    lease: int | None = None
    #: held while a rule object of :attr:`rules` is brought up to date, fed or read (PostgreSQL runs
    #: several operations of a process at once; the rows they feed from are locked in the database)
    rules_lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def per_participant(self) -> int:
        return self.protocol.design.items_per_participant

    @property
    def lease_seconds(self) -> int:
        """The protocol's lease (:meth:`humeval.protocol.models.Protocol.lease`) for its longest list (worked out on
        first use: it is read by every answer)."""
        if self.lease is None:
            self.lease = self.protocol.lease(max(self.list_sizes.values(), default=0) or None)
        return self.lease

    def reservation(self, done: int) -> int:
        """Seconds a lease (and the list) is held for a participant who has submitted ``done`` tasks."""
        if done > 0 or self.first_lease_seconds is None:
            return self.lease_seconds
        return min(self.lease_seconds, self.first_lease_seconds)

    def list_hold(self, now: float, seconds: float) -> dict[str, float]:
        """The parameters of :data:`RENEW_LIST`: a list held for ``seconds`` from ``now``.

        Its row is written only when its hold ends sooner (``renew``), and then held a little longer (a tenth
        of ``seconds``, at most :data:`LIST_HOLD_SLACK`): a participant answering task after task rewrites
        their list's row about once a minute, not with every answer, and is never held for less than asked."""
        renew = now + seconds
        return {"renew": renew, "hold": renew + min(LIST_HOLD_SLACK, seconds / 10)}

    def assignment_id(self, task: Task, token: str) -> str:
        """A new assignment's id: a random token (hex) followed by the task's ``seq`` hidden under a pad that only
        the store's secret and the token give (:meth:`task_of` reads it back).

        Without the secret the id says nothing of its task: the pad is pseudo-random per token, so the hidden
        ``seq`` of one id is uniform over 32 bits whatever the task's kind or place (a check, a repeat and a regular
        task look alike: ``tests/unit/store/test_assignment_ids.py``)."""
        if task.seq < 0:
            return token
        return f"{token}{task.seq ^ self._pad(token):08x}"

    def _pad(self, token: str) -> int:
        digest = hmac.new(self.secret, b"assignment|" + token.encode(), hashlib.sha256).digest()
        return int.from_bytes(digest[:4], "big")

    def live_battle(self, task: Task | None) -> bool:
        """Whether ``task`` is a battle whose answers are generated when it is served: an arena with ``models``, a
        task (no check) of a battle criterion (:mod:`humeval.store.generations`)."""
        arena = self.protocol.arena
        return (task is not None and arena is not None and bool(arena.models) and task.kind == "task"
                and any(self.protocol.criterion(c).task.arena for c in task.criteria))

    def task_of(self, assignment_id: str) -> Task | None:
        """The task an assignment id names (a submit validates its values before reading the store);
        None for an id without one. The id is only a hint: the store's row is what counts.
        Ids of an earlier format (``<token>.<seq>``, leased before an upgrade) are read too."""
        _, dot, seq = assignment_id.rpartition(".")
        if dot:  # the earlier format
            number = int(seq) if seq.isascii() and seq.isdigit() and len(seq) < 10 else -1
        elif len(assignment_id) == _TOKEN_HEX + 8 and set(assignment_id) <= _HEX:
            number = int(assignment_id[_TOKEN_HEX:], 16) ^ self._pad(assignment_id[:_TOKEN_HEX])
        else:
            return None
        return self.tasks.by_seq(number)

    @classmethod
    def load(cls, conn: Connection, protocol: Protocol) -> StoreContext:
        unfit = feed_problems(protocol)  # what is fed at each judgement could not be taken back
        if unfit:
            raise StoreError("; ".join(f"{format_path(loc)}: {msg}" for loc, msg in unfit))
        # plain driver rows (no SQLAlchemy row processing or Core): a study of 100,000 items has 600,000 tasks and
        # 150,000 lists; run once, before the process serves
        tasks = Tasks(conn.exec_driver_sql("SELECT " + ", ".join(f'"{c}"' for c in TASK_COLUMNS) + " FROM tasks"))
        meta: dict[str, str] = dict(conn.exec_driver_sql(META).fetchall())
        list_sizes: dict[str, int] = dict(conn.exec_driver_sql("SELECT list_id, size FROM lists").fetchall())
        systems = json.loads(meta.get("systems", "[]"))
        comparisons = {c.criterion: c for c in watched_comparisons(protocol, systems)}
        list_watched: dict[str, dict[str, int]] = {}
        for list_id, comparison, k in conn.exec_driver_sql(_LIST_WATCHED):
            list_watched.setdefault(list_id, {})[comparison] = int(k)
        _give_back_memory()
        return cls(
            protocol=protocol,
            tasks=tasks,
            texts=Texts(conn),
            systems=systems,
            comparisons=comparisons,
            strategy=strategy_of(protocol),
            secret=bytes.fromhex(meta["secret"]),
            list_sizes=list_sizes,
            list_watched=list_watched,
            session_sizes={c: max((k.get(c, 0) for k in list_watched.values()), default=0) for c in comparisons},
            last_reap=time.time(),
            watched=watched_tasks(tasks, comparisons) if comparisons else {},
        )
