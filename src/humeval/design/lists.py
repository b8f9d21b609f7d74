"""Participant lists: every task judged ``judgements_per_item`` times, by different participants.

Tasks are sorted by item, so the S tasks of one item form a block. In each of R rounds
(R = ``judgements_per_item``) the sequence is dealt into ``m = ceil(T / L)`` lists by
striding (list j gets positions j, j+m, j+2m, ...): a list holds at most one task of an
item whenever S <= m, and no list exceeds L tasks. Before dealing, the block of item k
is rotated by ``c * floor(k * S / m) + round``, where c makes the per-wrap shift
coprime to S, so that every list sees every system (position in the block) equally
often: with m = S this is exactly the Latin square "list j shows item k with system
(j + k) mod S" of the classic design. Each list is one participant's work; within a
list the order is rotated by list number (``latin-square``), shuffled (``random``) or
kept (``none``).
Attention checks and repeated tasks are then inserted at seeded random positions; with
``design.qualification`` = q the first q checks open the list (the qualification), the rest as before.

With ``design.balance`` (item properties) the lists are *balanced* instead
(:func:`balanced_order`, Thomson & Belz 2025, section 4.1): the items of each property
combination are shuffled afresh in every round (seeded), and list j of the round takes,
for every combination c and every task position k of an item (its system, or pair),
task k of the combination's item ``(j + k * floor(n / B)) mod n`` (n items per
combination, B tasks per item). So a list holds one item of each combination for each
system, B distinct items per combination, and every task appears exactly once per round:
n lists of H x B tasks per round, ``judgements_per_item`` rounds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from humeval.design.order import order_items
from humeval.design.tasks import ParticipantList, Task, build_tasks
from humeval.errors import ProtocolError
from humeval.protocol.comparisons import Comparison, watched_comparisons, watched_tasks
from humeval.protocol.models import Criterion, Design, Protocol
from humeval.rng import as_generator, stream

__all__ = ["CheckAnswers", "ParticipantList", "attention_task", "balanced_order", "build_lists", "check_answers",
           "design_lists", "practice_tasks"]


def check_answers(criterion: Criterion) -> tuple[Any, ...]:
    """The answers an attention check of ``criterion`` may ask for (:meth:`humeval.tasks.TaskType.check_answers`):
    ``2afc`` the first or the second output (``A``, ``B``); ``likert`` every point; ``slider`` its minimum,
    quarters, middle and maximum; ``esa`` the scores 0, 25, 50, 75 and 100 (no error marked); ``magnitude`` and
    ``rankme`` the standard's score (the modulus: a free positive number has no cheap default to click, and
    typing the modulus everywhere is straight-lining)."""
    return criterion.task.check_answers(criterion)


def attention_task(template: Task, criterion: Criterion, index: int, expected: Any = None) -> Task:
    """An attention check shaped like ``template``: the shown text asks for ``expected`` (one of
    :func:`check_answers`; None: the first of them). ``index``: the list's number x 1000 + the check's number in
    the list (:func:`humeval.design.tasks.check_number`: the first ``design.qualification`` are the qualification)."""
    if expected is None:
        expected = check_answers(criterion)[0]
    ask = criterion.task.check_request(criterion, expected)
    text = f"This is an attention check. Please {ask} for '{criterion.name}'."
    return replace(
        template,
        task_id=f"attention-{index}|{template.family}|{criterion.name}",
        item_id=f"attention-{index}",
        criteria=(criterion.name,),
        kind="attention",
        expected=expected,
        text=text,
    )


def practice_tasks(protocol: Protocol) -> list[Task]:
    """The practice items (``design.practice``) as the first tasks of every list, in the protocol's order: the kind
    ``practice``, the outputs ``output-1``, ``output-2``, ... in the listed order (the texts are the protocol's: the item id
    ``practice-<n>`` names the n-th item, :func:`humeval.design.tasks.practice_index`), ``expected`` the answer the feedback calls right (or None)."""
    out = []
    for i, item in enumerate(protocol.design.practice):
        c = protocol.criterion(item.criterion)
        family = c.task.family
        out.append(Task(task_id=f"practice-{i + 1}|{family}|{c.name}", item_id=f"practice-{i + 1}",
                        systems=tuple(f"output-{j + 1}" for j in range(len(item.outputs))), criteria=(c.name,),
                        family=family, kind="practice", expected=item.expected(c)))
    return out


class CheckAnswers:
    """The expected answers of a study's attention checks, drawn from the study seed.

    Per criterion, every answer of :func:`check_answers` is asked equally often over the study (the counts
    differ by at most one), and within a list as evenly as its checks allow: a list with k checks of a
    criterion with n answers asks each answer floor(k / n) or ceil(k / n) times, the extra ones being the
    answers asked least so far (ties broken at random), in a random order. So a participant who always
    clicks the first output, or always the same point, fails a check in every list with at least two checks
    of the criterion. The draws come from their own stream of the seed (:func:`humeval.rng.stream`
    ``attention-checks``), so the lists' tasks and the checks' positions are those drawn without it.
    """

    def __init__(self, seed: int | np.random.Generator) -> None:
        self.rng = seed.spawn(1)[0] if isinstance(seed, np.random.Generator) else stream(seed, "attention-checks")
        self.asked: dict[str, np.ndarray] = {}

    def draw(self, criterion: Criterion, k: int) -> list[Any]:
        """The expected answers of the ``k`` checks of ``criterion`` in one list."""
        options = check_answers(criterion)
        n = len(options)
        asked = self.asked.setdefault(criterion.name, np.zeros(n, dtype=np.int64))
        full, extra = divmod(k, n)
        least = np.lexsort((self.rng.random(n), asked))[:extra]  # the least asked, ties at random
        picks = np.concatenate([np.tile(np.arange(n), full), least]).astype(np.int64)
        asked += np.bincount(picks, minlength=n)
        return [options[i] for i in self.rng.permutation(picks)]


def build_lists(tasks: list[Task], protocol: Protocol, seed: int,
                strata: dict[str, str] | None = None, *,
                watched: Mapping[str, tuple[str, ...]] | None = None) -> list[ParticipantList]:
    """Distribute ``tasks`` into participant lists as the protocol's design says.

    ``strata`` (item id -> property combination) makes the lists balanced
    (:func:`balanced_order`); the design stage passes it when ``design.balance`` is set.
    ``watched`` (task id -> the watched comparisons it feeds, :func:`humeval.protocol.comparisons.watched_tasks`):
    when some tasks are watched and others are not, the watched tasks are dealt into lists of their
    own, numbered first, and the other tasks into the lists after them (not with ``strata``: a
    balanced list needs every task of an item). Each list records the comparisons whose tasks it
    holds (``ParticipantList.watched``).
    """
    design: Design = protocol.design
    answers = CheckAnswers(seed)
    rng = as_generator(seed)
    watched = watched or {}
    if not tasks:
        return []
    if strata is not None:
        rounds = balanced_order(tasks, strata, design.items_per_participant, design.judgements_per_item, rng)
        return [_finish(chosen, protocol, rng, r, k, watched, answers)
                for k, (r, chosen) in enumerate((r, c) for r, lists in enumerate(rounds) for c in lists)]
    groups = [tasks]
    if watched:
        mine = [t for t in tasks if t.task_id in watched]
        others = [t for t in tasks if t.task_id not in watched]
        groups = [g for g in (mine, others) if g]
    lists: list[ParticipantList] = []
    for group in groups:
        _deal(group, protocol, rng, watched, lists, answers)
    return lists


def _deal(tasks: list[Task], protocol: Protocol, rng: np.random.Generator,
          watched: Mapping[str, tuple[str, ...]], lists: list[ParticipantList], answers: CheckAnswers) -> None:
    """Deal ``tasks`` (sorted by item) into lists by striding, R rounds, appending to ``lists``."""
    design = protocol.design
    n = len(tasks)
    per_list = min(design.items_per_participant, n)
    m = math.ceil(n / per_list)
    block = _block_size(tasks)
    c = 0 if math.gcd(m, block) == 1 else (m - 1) % block
    starts = np.arange(0, n, block)
    for r in range(design.judgements_per_item):
        shift = (c * (starts // m) + r) % block
        within = (np.arange(n) - np.repeat(starts, block)) % block
        order = np.repeat(starts, block) + (within + np.repeat(shift, block)) % block
        for j in range(m):
            lists.append(_finish([tasks[i] for i in order[j::m]], protocol, rng, r, len(lists), watched, answers))


def _finish(chosen: list[Task], protocol: Protocol, rng: np.random.Generator, r: int, k: int,
            watched: Mapping[str, tuple[str, ...]], answers: CheckAnswers) -> ParticipantList:
    """List number ``k`` of round ``r``: ordered as ``counterbalancing`` says, with checks inserted."""
    counterbalancing = protocol.design.counterbalancing
    if counterbalancing == "latin-square":
        shift = k % len(chosen)
        chosen = chosen[shift:] + chosen[:shift]
    elif counterbalancing == "random":
        chosen = [chosen[i] for i in rng.permutation(len(chosen))]
    names = tuple(sorted({c for t in chosen for c in watched.get(t.task_id, ())}))
    return ParticipantList(f"L{k + 1:04d}", r, practice_tasks(protocol) + _add_checks(chosen, protocol, rng, k, answers),
                           names)


def balanced_order(tasks: list[Task], strata: dict[str, str], per_list: int, rounds: int,
                   rng: np.random.Generator) -> list[list[list[Task]]]:
    """Balanced lists per round: every list one item of each combination for each task position.

    ``tasks`` are sorted by item with the same B tasks per item (one per system, pair or
    criterion group, in the same order); ``strata`` maps every item to its property
    combination. Returns ``rounds`` rounds of n lists of H x B tasks (H combinations, n
    items per combination), in combination order then task position. Errors name what
    does not fit: unequal combination sizes, fewer items than tasks per item, or a list
    size other than H x B.
    """
    blocks: dict[str, list[Task]] = {}
    for t in tasks:
        blocks.setdefault(t.item_id, []).append(t)
    sizes = {len(b) for b in blocks.values()}
    if len(sizes) != 1:
        raise ProtocolError(f"design.balance: items have different numbers of tasks ({sorted(sizes)}); a balanced design needs the same tasks for every item")
    b = sizes.pop()
    missing = [i for i in blocks if i not in strata]
    if missing:
        raise ProtocolError(f"design.balance: item '{missing[0]}' has no property values ({len(missing)} such items)")
    groups: dict[str, list[str]] = {}
    for item in blocks:
        groups.setdefault(strata[item], []).append(item)
    combos = sorted(groups)
    counts = {c: len(groups[c]) for c in combos}
    n = counts[combos[0]]
    if len(set(counts.values())) != 1:
        shown = ", ".join(f"{c}: {k}" for c, k in list(counts.items())[:6])
        raise ProtocolError(
            f"design.balance: every property combination needs the same number of selected items, got {shown}"
            f"{' ...' if len(counts) > 6 else ''}; select them with `sampling.method: stratified` and "
            "`params: {by: [...], allocation: equal}` at a rate giving an equal count per combination")
    if n < b:
        raise ProtocolError(f"design.balance: each combination has {n} selected item(s), fewer than the {b} tasks per item; "
                            f"a list needs {b} different items of every combination")
    if per_list != len(combos) * b:
        raise ProtocolError(
            f"design.items_per_participant: a balanced list holds one item of each of the {len(combos)} property "
            f"combinations for each of the {b} tasks per item = {len(combos) * b} tasks, got {per_list}; "
            f"set items_per_participant: {len(combos) * b}")
    step = n // b
    index = (np.arange(n)[:, None] + step * np.arange(b)[None, :]) % n  # (list j, position k) -> item rank
    out = []
    for _ in range(rounds):
        order = {c: [groups[c][i] for i in rng.permutation(n)] for c in combos}
        out.append([[blocks[order[c][index[j, k]]][k] for c in combos for k in range(b)] for j in range(n)])
    return out


def _block_size(tasks: list[Task]) -> int:
    """Tasks per item (the same for every item, as :func:`build_tasks` makes them)."""
    items = [t.item_id for t in tasks]
    size = len(items) // len(dict.fromkeys(items))
    if size * len(dict.fromkeys(items)) != len(items) or any(
        items[i] != items[i - i % size] for i in range(len(items))
    ):
        return 1
    return size


def _add_checks(chosen: list[Task], protocol: Protocol, rng: np.random.Generator, k: int,
                answers: CheckAnswers) -> list[Task]:
    design = protocol.design
    if not design.repeated_items and not design.attention_checks:
        return list(chosen)  # nothing to insert (and no random draw: the same lists as drawing none)
    out = list(chosen)
    originals = [t for t in chosen if t.kind == "task"]
    repeats = rng.choice(len(originals), size=min(design.repeated_items, len(originals)), replace=False)
    for i in sorted(repeats):
        t = originals[i]
        pos = int(rng.integers(out.index(t) + 1, len(out) + 1))
        out.insert(pos, replace(t, task_id=f"{t.task_id}|repeat", kind="repeat", repeat_of=t.task_id))
    templates = [chosen[a % len(chosen)] for a in range(design.attention_checks)]
    names = [t.criteria[0] for t in templates]
    expected: dict[str, list[Any]] = {n: answers.draw(protocol.criterion(n), names.count(n)) for n in dict.fromkeys(names)}
    first = design.qualification  # the qualification: that many checks first, in order
    for a, template in enumerate(templates):
        check = attention_task(template, protocol.criterion(names[a]), k * 1000 + a, expected[names[a]].pop())
        # one draw per check whatever the qualification: the stream, so every other list, stays that of 0
        pos = int(rng.integers(first if a >= first else 0, len(out) + 1))
        out.insert(a if a < first else pos, check)
    return out


def design_lists(protocol: Protocol, items: list[str], systems: list[str], strata: dict[str, str] | None = None,
                 ) -> tuple[list[Comparison], list[str], list[Task], list[ParticipantList]]:
    """The design of ``items`` (in selection order): the watched comparisons, the items in serving order (a
    watched study's; :func:`humeval.design.order.serving_order`), their tasks and the participant lists, the
    watched tasks in lists of their own. The design stage writes them; ``validate`` counts them before it runs."""
    comparisons = watched_comparisons(protocol, systems)
    ordered = order_items(items, protocol.study.seed, comparisons)
    tasks = build_tasks(protocol, ordered, systems)
    watched = watched_tasks({t.task_id: t for t in tasks}, {c.criterion: c for c in comparisons})
    lists = build_lists(tasks, protocol, protocol.study.seed, strata, watched=watched)
    return comparisons, ordered, tasks, lists
