"""Tasks (what one participant judges in one go: an output, a pair, or all outputs of an item) and participant lists.

Both are typed, written by the ``design`` stage (``lists/tasks.jsonl``, ``lists/lists.jsonl``) and read
once through :meth:`humeval.study.StudyFolder.read_tasks` / :meth:`~humeval.study.StudyFolder.read_lists` by store
seeding, collation, exclusion, dry runs, rehearsals and platforms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from humeval.errors import DataError
from humeval.protocol.models import Criterion, Design, Protocol
from humeval.tasks import TASK_TYPES

__all__ = ["FAMILIES", "ParticipantList", "Task", "build_tasks", "check_number", "criterion_groups", "family_of",
           "is_qualification", "list_entries", "practice_index", "unknown_task"]

#: how outputs are shown, by criterion type: one output, a pair, or all outputs side by side
FAMILIES = {entry.name: entry.value.family for entry in TASK_TYPES.entries()}


@dataclass(frozen=True, slots=True)
class Task:
    """One unit of work: an item, the systems whose outputs are shown, the criteria asked.

    ``kind`` is ``task`` for a real task, ``attention`` for an attention check (with the
    ``expected`` answer and the check ``text`` shown in place of an output), or
    ``repeat`` for a repeated task (``repeat_of`` names the original).

    The design writes tasks, the store reads them back (:class:`humeval.store.context.Tasks`, which makes them
    on demand: a study of 100,000 items has 600,000 tasks, hence the slots). ``seq`` is the task's row number in
    the store (-1: not from a store); not part of the task's JSON, nor of its equality.
    """

    task_id: str
    item_id: str
    systems: tuple[str, ...]
    criteria: tuple[str, ...]
    family: str
    kind: str = "task"
    expected: Any = None
    text: str = ""
    repeat_of: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    seq: int = field(default=-1, compare=False)

    def to_json(self) -> dict[str, Any]:
        data = {"task_id": self.task_id, "item_id": self.item_id, "systems": list(self.systems),
                "criteria": list(self.criteria), "family": self.family, "kind": self.kind, "expected": self.expected,
                "text": self.text, "repeat_of": self.repeat_of, "extra": dict(self.extra)}
        return {k: v for k, v in data.items() if v not in ("", None, {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Task:
        """The task of one line of ``lists/tasks.jsonl`` (the inverse of :meth:`to_json`)."""
        get = data.get  # positional arguments: a study of 100,000 items reads 600,000 tasks
        return cls(str(data["task_id"]), str(data["item_id"]), tuple(data["systems"]), tuple(data["criteria"]),
                   str(data["family"]), get("kind", "task"), get("expected"), get("text", ""), get("repeat_of", ""),
                   dict(get("extra") or {}))


@dataclass(frozen=True)
class ParticipantList:
    """The tasks one participant does, in display order.

    ``watched``: the watched comparisons (criterion names) whose tasks this list holds; a study
    with a watched comparison and other tasks deals the watched tasks into lists of their own
    (a *watched session*, empty for any other list). Written only when not empty; a lists file
    written before the field existed reads as empty.
    """

    list_id: str
    round: int
    tasks: list[Task]
    watched: tuple[str, ...] = ()

    def to_json(self, *, compact: bool = False) -> dict[str, Any]:
        """The list as JSON; ``compact``: a real task (``kind`` ``task``, written in full in
        ``lists/tasks.jsonl``) by its id alone, attention checks and repeats in full."""
        tasks = [t.task_id if compact and t.kind == "task" else t.to_json() for t in self.tasks]
        out: dict[str, Any] = {"list_id": self.list_id, "round": self.round, "tasks": tasks}
        if self.watched:
            out["watched"] = list(self.watched)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], tasks: Mapping[str, Task] | None = None) -> ParticipantList:
        """The list of one line of ``lists/lists.jsonl`` (the inverse of :meth:`to_json`);
        ``tasks`` (task id -> task) resolves the task ids of a compact list."""
        list_id, round_, ids, written = list_entries(data)
        out = []
        for i, tid in enumerate(ids):
            if i in written:
                out.append(written[i])
            elif tasks is not None and tid in tasks:
                out.append(tasks[tid])
            else:
                raise unknown_task(list_id, tid)
        return cls(list_id, round_, out, tuple(str(w) for w in data.get("watched") or ()))


def list_entries(data: dict[str, Any]) -> tuple[str, int, list[str], dict[int, Task]]:
    """One line of ``lists/lists.jsonl`` with its task ids unresolved: ``(list id, round, task ids,
    {position: task})``, the last for the attention checks and repeats written in full (for readers
    that stream the lists without holding every task, e.g. store seeding)."""
    raw = data["tasks"]
    if set(map(type, raw)) <= {str}:  # every task by id (the common case, checked without a Python loop)
        return str(data["list_id"]), int(data.get("round", 0)), list(raw), {}
    ids: list[str] = []
    written: dict[int, Task] = {}
    for t in raw:
        if not isinstance(t, str):
            written[len(ids)] = task = Task.from_json(t)
            t = task.task_id
        ids.append(t)
    return str(data["list_id"]), int(data.get("round", 0)), ids, written


def unknown_task(list_id: str, task_id: str) -> DataError:
    """The error for a list naming a task that ``lists/tasks.jsonl`` does not hold."""
    return DataError(f"participant list {list_id!r}: task {task_id!r} is not in the design's tasks "
                     "(lists/tasks.jsonl); run the design stage again (`humeval run`)")


def family_of(criterion: Criterion) -> str:
    return criterion.task.family


def criterion_groups(protocol: Protocol) -> list[tuple[str, tuple[str, ...]]]:
    """(family, criteria asked together): one group per criterion for the ``separate`` setup,
    one group per family for ``joint`` (criteria shown the same way are asked in one task)."""
    if protocol.presentation.setup == "separate":
        return [(family_of(c), (c.name,)) for c in protocol.criteria]
    groups: dict[str, list[Criterion]] = {}
    for c in protocol.criteria:
        groups.setdefault(c.task.joint_key(c), []).append(c)
    return [(family_of(cs[0]), tuple(c.name for c in cs)) for cs in groups.values()]


def _pairs(protocol: Protocol, systems: list[str]) -> list[tuple[str, str]]:
    if protocol.stopping is not None and len(protocol.stopping.systems) == 2:
        a, b = protocol.stopping.systems
        return [(a, b)]
    return list(combinations(systems, 2))


def build_tasks(protocol: Protocol, items: list[str], systems: list[str]) -> list[Task]:
    """Every task of the study, sorted by item (tasks of one item are adjacent); the systems of a group's tasks are
    its task type's (:meth:`humeval.tasks.TaskType.shown_systems`)."""
    groups = criterion_groups(protocol)
    pairs = _pairs(protocol, systems)
    designs = []
    for _family, criteria in groups:
        first = protocol.criterion(criteria[0])
        designs.append(first.task.shown_systems(first, items, systems, pairs, protocol.study.seed))
    tasks = []
    for i, item in enumerate(items):
        for (family, criteria), design in zip(groups, designs, strict=True):
            for sys_ in design[i]:
                task_id = f"{item}|{'+'.join(sys_)}|{'+'.join(criteria)}"
                tasks.append(Task(task_id, item, tuple(sys_), criteria, family))
    return tasks


def check_number(task: Task) -> int:
    """The number of an attention check in its list, from 0 (its item id is ``attention-<list number x 1000 +
    number>``, :func:`humeval.design.lists.attention_task`); -1 for any other task."""
    if task.kind != "attention":
        return -1
    try:
        return int(task.item_id.rsplit("-", 1)[1]) % 1000
    except (IndexError, ValueError):
        return -1


def practice_index(task: Task) -> int:
    """The index in ``design.practice`` of a practice item (its item id is ``practice-<index + 1>``,
    :func:`humeval.design.lists.practice_tasks`); -1 for any other task."""
    if task.kind != "practice":
        return -1
    try:
        return int(task.item_id.rsplit("-", 1)[1]) - 1
    except (IndexError, ValueError):
        return -1


def is_qualification(task: Task, design: Design) -> bool:
    """Whether ``task`` is a qualification check: one of the first ``design.qualification`` attention checks of its
    list."""
    return task.kind == "attention" and 0 <= check_number(task) < design.qualification
