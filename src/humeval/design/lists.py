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
Attention checks and repeated tasks are then inserted at seeded random positions.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from humeval.design.tasks import ParticipantList, Task
from humeval.protocol.models import Criterion, Design, Protocol
from humeval.rng import as_generator

__all__ = ["ParticipantList", "attention_task", "build_lists"]


def attention_task(template: Task, criterion: Criterion, index: int) -> Task:
    """An attention check shaped like ``template``: the shown text asks for a given answer."""
    if criterion.type == "2afc":
        expected: Any = "A"
        ask = "choose the FIRST output (A)"
    elif criterion.type == "likert":
        expected = 1
        ask = "give the LOWEST score (1)"
    elif criterion.type == "slider":
        expected = criterion.min
        ask = f"set the slider to its LOWEST value ({criterion.min:g})"
    else:
        expected = criterion.modulus
        ask = f"give exactly the score of the standard ({criterion.modulus:g})"
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


def build_lists(tasks: list[Task], protocol: Protocol, seed: int) -> list[ParticipantList]:
    """Distribute ``tasks`` into participant lists as the protocol's design says."""
    design: Design = protocol.design
    rng = as_generator(seed)
    n = len(tasks)
    if n == 0:
        return []
    per_list = min(design.items_per_participant, n)
    m = math.ceil(n / per_list)
    block = _block_size(tasks)
    c = 0 if math.gcd(m, block) == 1 else (m - 1) % block
    starts = np.arange(0, n, block)
    lists = []
    for r in range(design.judgements_per_item):
        shift = (c * (starts // m) + r) % block
        within = (np.arange(n) - np.repeat(starts, block)) % block
        order = np.repeat(starts, block) + (within + np.repeat(shift, block)) % block
        for j in range(m):
            chosen = [tasks[i] for i in order[j::m]]
            k = len(lists)
            if design.counterbalancing == "latin-square":
                shift = k % len(chosen)
                chosen = chosen[shift:] + chosen[:shift]
            elif design.counterbalancing == "random":
                chosen = [chosen[i] for i in rng.permutation(len(chosen))]
            chosen = _add_checks(chosen, protocol, rng, k)
            lists.append(ParticipantList(f"L{k + 1:04d}", r, chosen))
    return lists


def _block_size(tasks: list[Task]) -> int:
    """Tasks per item (the same for every item, as :func:`build_tasks` makes them)."""
    items = [t.item_id for t in tasks]
    size = len(items) // len(dict.fromkeys(items))
    if size * len(dict.fromkeys(items)) != len(items) or any(
        items[i] != items[i - i % size] for i in range(len(items))
    ):
        return 1
    return size


def _add_checks(chosen: list[Task], protocol: Protocol, rng: np.random.Generator, k: int) -> list[Task]:
    design = protocol.design
    out = list(chosen)
    originals = [t for t in chosen if t.kind == "task"]
    repeats = rng.choice(len(originals), size=min(design.repeated_items, len(originals)), replace=False)
    for i in sorted(repeats):
        t = originals[i]
        pos = int(rng.integers(out.index(t) + 1, len(out) + 1))
        out.insert(pos, replace(t, task_id=f"{t.task_id}|repeat", kind="repeat", repeat_of=t.task_id))
    for a in range(design.attention_checks):
        template = chosen[a % len(chosen)]
        check = attention_task(template, protocol.criterion(template.criteria[0]), k * 1000 + a)
        out.insert(int(rng.integers(0, len(out) + 1)), check)
    return out
