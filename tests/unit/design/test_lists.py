"""Participant lists: coverage, no repeats within a list, balance, checks."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from humeval.design import build_lists, build_tasks, criterion_groups
from humeval.protocol import parse_protocol

BASE = {
    "study": {"name": "s", "seed": 1},
    "data": {"files": ["d.jsonl"]},
    "criteria": [
        {"name": "fluency", "type": "likert", "question": "?"},
        {"name": "adequacy", "type": "slider", "question": "?"},
        {"name": "pref", "type": "2afc", "question": "?"},
    ],
}


def _protocol(**design):
    return parse_protocol(BASE | {"design": design})


def test_groups_separate_and_joint():
    p = _protocol()
    assert criterion_groups(p) == [("single", ("fluency",)), ("single", ("adequacy",)), ("pair", ("pref",))]
    joint = parse_protocol(BASE | {"presentation": {"setup": "joint"}})
    assert criterion_groups(joint) == [("single", ("fluency", "adequacy")), ("pair", ("pref",))]


def test_tasks_per_item():
    tasks = build_tasks(_protocol(), ["i1", "i2"], ["a", "b", "c"])
    # per item: 3 systems x 2 single criteria + 3 pairs
    assert len(tasks) == 2 * (3 * 2 + 3)
    assert len({t.task_id for t in tasks}) == len(tasks)
    assert {t.systems for t in tasks if t.family == "pair"} == {("a", "b"), ("a", "c"), ("b", "c")}


@settings(max_examples=40, deadline=None)
@given(
    n_items=st.integers(1, 30),
    n_systems=st.integers(1, 4),
    per_list=st.integers(1, 40),
    reps=st.integers(1, 5),
    order=st.sampled_from(["none", "random", "latin-square"]),
)
def test_every_task_judged_exactly_r_times_never_twice_in_a_list(n_items, n_systems, per_list, reps, order):
    p = parse_protocol(
        BASE
        | {
            "criteria": [BASE["criteria"][0]],
            "design": {"judgements_per_item": reps, "items_per_participant": per_list, "counterbalancing": order},
        }
    )
    tasks = build_tasks(p, [f"i{i}" for i in range(n_items)], [f"s{s}" for s in range(n_systems)])
    lists = build_lists(tasks, p, seed=3)
    counts = Counter(t.task_id for pl in lists for t in pl.tasks)
    assert set(counts) == {t.task_id for t in tasks}
    assert set(counts.values()) == {reps}
    for pl in lists:
        ids = [t.task_id for t in pl.tasks]
        assert len(ids) == len(set(ids)) and len(ids) <= per_list
        # Latin-square property: one task per item whenever there are enough lists per round
        n_lists_per_round = -(-len(tasks) // min(per_list, len(tasks)))
        if n_systems <= n_lists_per_round:
            items = [t.item_id for t in pl.tasks]
            assert len(items) == len(set(items))


def test_latin_square_balances_systems():
    p = parse_protocol(BASE | {"criteria": [BASE["criteria"][0]], "design": {"judgements_per_item": 1, "items_per_participant": 12}})
    tasks = build_tasks(p, [f"i{i}" for i in range(12)], ["a", "b", "c"])
    lists = build_lists(tasks, p, seed=0)
    assert len(lists) == 3
    for pl in lists:
        assert Counter(t.systems[0] for t in pl.tasks) == {"a": 4, "b": 4, "c": 4}
        assert len({t.item_id for t in pl.tasks}) == 12


def test_attention_checks_and_repeats():
    p = _protocol(judgements_per_item=1, items_per_participant=6, attention_checks=2, repeated_items=1)
    tasks = build_tasks(p, ["i1", "i2"], ["a", "b"])
    lists = build_lists(tasks, p, seed=1)
    for pl in lists:
        kinds = Counter(t.kind for t in pl.tasks)
        assert kinds["attention"] == 2 and kinds["repeat"] == 1
        rep = next(t for t in pl.tasks if t.kind == "repeat")
        ids = [t.task_id for t in pl.tasks]
        assert ids.index(rep.repeat_of) < ids.index(rep.task_id)
        for check in (t for t in pl.tasks if t.kind == "attention"):
            assert check.expected is not None and "attention check" in check.text


@pytest.mark.parametrize("order", ["random", "latin-square"])
def test_lists_reproducible(order):
    p = _protocol(counterbalancing=order, attention_checks=1)
    tasks = build_tasks(p, [f"i{i}" for i in range(7)], ["a", "b"])
    a = [pl.to_json() for pl in build_lists(tasks, p, seed=4)]
    b = [pl.to_json() for pl in build_lists(tasks, p, seed=4)]
    c = [pl.to_json() for pl in build_lists(tasks, p, seed=5)]
    assert a == b and (order == "latin-square" or a != c)


def test_compact_lists_name_real_tasks_by_id_and_read_back_equal():
    from humeval.design.tasks import ParticipantList
    from humeval.errors import DataError

    p = _protocol(items_per_participant=6, judgements_per_item=2, attention_checks=1, repeated_items=1)
    tasks = build_tasks(p, [f"i{k}" for k in range(8)], ["a", "b", "c"])
    lists = build_lists(tasks, p, seed=4)
    by_id = {t.task_id: t for t in tasks}
    for pl in lists:
        data = pl.to_json(compact=True)
        kinds = Counter(t.kind for t in pl.tasks)
        assert sum(isinstance(t, str) for t in data["tasks"]) == kinds["task"]  # checks and repeats in full
        assert ParticipantList.from_json(data, by_id) == pl
        assert ParticipantList.from_json(pl.to_json()) == pl  # full lists (re-run files) need no tasks
    with pytest.raises(DataError, match="not in the design's tasks"):
        ParticipantList.from_json(lists[0].to_json(compact=True), {})
