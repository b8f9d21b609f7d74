"""Balanced lists (design.balance): one item of each property combination per system in every list."""

from __future__ import annotations

from collections import Counter
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from humeval.design import build_lists, build_tasks
from humeval.design.lists import balanced_order
from humeval.errors import ProtocolError
from humeval.protocol import parse_protocol

LIKERT = {"name": "fluency", "type": "likert", "question": "?"}


def _protocol(per_list: int, reps: int = 1, order: str = "none", criteria=(LIKERT,)):
    return parse_protocol({
        "study": {"name": "s", "seed": 1}, "data": {"files": ["d.jsonl"], "properties": ["p"]},
        "criteria": list(criteria),
        "design": {"judgements_per_item": reps, "items_per_participant": per_list, "counterbalancing": order,
                   "balance": ["p"]},
    })


class _Identity:
    """A generator whose permutations keep the order: the lists can be computed by hand."""

    def permutation(self, n: int) -> np.ndarray:
        return np.arange(n)


def test_hand_computed_two_combinations_three_items_two_systems():
    # n = 3 items per combination, B = 2 systems, step = floor(3 / 2) = 1:
    # list j takes item (j + k) mod 3 of each combination for system k
    items = ["x0", "x1", "x2", "y0", "y1", "y2"]
    tasks = build_tasks(_protocol(4), items, ["A", "B"])
    strata = {i: i[0] for i in items}
    (rounds,) = balanced_order(tasks, strata, 4, 1, _Identity())
    got = [[(t.item_id, t.systems[0]) for t in lst] for lst in rounds]
    assert got == [
        [("x0", "A"), ("x1", "B"), ("y0", "A"), ("y1", "B")],
        [("x1", "A"), ("x2", "B"), ("y1", "A"), ("y2", "B")],
        [("x2", "A"), ("x0", "B"), ("y2", "A"), ("y0", "B")],
    ]


@settings(max_examples=30, deadline=None)
@given(combos=st.integers(1, 5), n=st.integers(1, 8), systems=st.integers(1, 4), reps=st.integers(1, 4),
       order=st.sampled_from(["none", "random", "latin-square"]), seed=st.integers(0, 10**6))
def test_every_list_is_balanced_and_every_output_judged_once_per_round(combos, n, systems, reps, order, seed):
    n = max(n, systems)
    items = [f"c{c}-{i}" for c, i in product(range(combos), range(n))]
    names = [f"s{s}" for s in range(systems)]
    p = _protocol(combos * systems, reps, order)
    tasks = build_tasks(p, items, names)
    strata = {i: i.split("-")[0] for i in items}
    lists = build_lists(tasks, p, seed, strata)
    assert len(lists) == n * reps
    for pl in lists:
        cells = Counter((strata[t.item_id], t.systems[0]) for t in pl.tasks)
        assert cells == Counter({(f"c{c}", s): 1 for c in range(combos) for s in names})
        assert len({t.item_id for t in pl.tasks}) == len(pl.tasks)
    for r in range(reps):
        judged = Counter(t.task_id for pl in lists if pl.round == r for t in pl.tasks)
        assert judged == Counter({t.task_id: 1 for t in tasks})
    assert [pl.to_json() for pl in build_lists(tasks, p, seed, strata)] == [pl.to_json() for pl in lists]


def test_pairs_are_balanced_like_systems():
    pref = {"name": "pref", "type": "2afc", "question": "?"}
    items = [f"{c}{i}" for c in "xy" for i in range(3)]
    p = _protocol(6, criteria=(pref,))
    tasks = build_tasks(p, items, ["a", "b", "c"])  # 3 pairs per item
    lists = build_lists(tasks, p, 0, {i: i[0] for i in items})
    assert len(lists) == 3
    for pl in lists:
        assert Counter((t.item_id[0], t.systems) for t in pl.tasks) == Counter(
            {(c, s): 1 for c in "xy" for s in [("a", "b"), ("a", "c"), ("b", "c")]})


def test_errors_say_what_does_not_fit():
    items = ["x0", "x1", "x2", "y0", "y1"]
    tasks = build_tasks(_protocol(4), items, ["A", "B"])
    with pytest.raises(ProtocolError, match=r"same number of selected items, got x: 3, y: 2"):
        build_lists(tasks, _protocol(4), 0, {i: i[0] for i in items})
    items = ["x0", "x1", "y0", "y1"]
    tasks = build_tasks(_protocol(6), items, ["A", "B"])
    with pytest.raises(ProtocolError, match=r"items_per_participant: 4"):
        build_lists(tasks, _protocol(6), 0, {i: i[0] for i in items})
    tasks = build_tasks(_protocol(6), items, ["A", "B", "C"])
    with pytest.raises(ProtocolError, match=r"fewer than the 3 tasks per item"):
        build_lists(tasks, _protocol(6), 0, {i: i[0] for i in items})
