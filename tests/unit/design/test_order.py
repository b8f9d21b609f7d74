"""The serving order of a watched comparison and its lists of their own."""

from __future__ import annotations

from collections import Counter

import numpy as np

from humeval.design import (
    ParticipantList,
    build_lists,
    build_tasks,
    order_items,
    serving_order,
)
from humeval.protocol import parse_protocol
from humeval.protocol.comparisons import watched_comparisons, watched_tasks

SYSTEMS = ["a", "b", "c"]
ITEMS = [f"i{k:02d}" for k in range(24)]
WATCHED = {
    "study": {"name": "s", "seed": 7},
    "data": {"files": ["d.jsonl"]},
    "criteria": [
        {"name": "pref", "type": "2afc", "question": "?"},
        {"name": "fluency", "type": "likert", "question": "?"},
    ],
    "design": {"judgements_per_item": 3, "items_per_participant": 6, "attention_checks": 1},
    "stopping": {"rule": "anytime", "delta": 0.05, "systems": ["a", "b"]},
}


def _design(data: dict, seed: int | None = None) -> tuple[list[str], list, list[ParticipantList]]:
    """What the design stage does: items in serving order, tasks, lists with the watched tasks apart."""
    p = parse_protocol(data)
    seed = p.study.seed if seed is None else seed
    comparisons = watched_comparisons(p, SYSTEMS)
    items = order_items(ITEMS, seed, comparisons)
    tasks = build_tasks(p, items, SYSTEMS)
    return items, tasks, build_lists(tasks, p, seed, watched=watched_tasks({t.task_id: t for t in tasks}, {c.criterion: c for c in comparisons}))


def test_serving_order_is_a_seeded_permutation():
    a, b, c = serving_order(7, 50), serving_order(7, 50), serving_order(8, 50)
    assert sorted(a) == list(range(50)) and (a == b).all() and not (a == c).all()
    assert not (a == np.arange(50)).all()


def test_same_seed_same_lists_other_seed_other_order():
    items, _, lists = _design(WATCHED)
    again, _, same = _design(WATCHED)
    other, _, moved = _design(WATCHED, seed=8)
    assert items == again and [pl.to_json() for pl in lists] == [pl.to_json() for pl in same]
    assert items != ITEMS and other != items and sorted(other) == sorted(items) == ITEMS
    assert [pl.to_json() for pl in moved] != [pl.to_json() for pl in lists]


def test_watched_tasks_in_lists_of_their_own_each_with_its_check():
    _, tasks, lists = _design(WATCHED)
    watched = [pl for pl in lists if pl.watched]
    rating = [pl for pl in lists if not pl.watched]
    assert watched and rating and all(pl.watched == ("pref",) for pl in watched)
    assert lists[: len(watched)] == watched  # watched sessions come first in list_id order
    for pl in watched:
        real = [t for t in pl.tasks if t.kind == "task"]
        assert {t.criteria for t in real} == {("pref",)} and {t.systems for t in real} == {("a", "b")}
        assert Counter(t.kind for t in pl.tasks)["attention"] == 1
    for pl in rating:
        assert all(t.criteria == ("fluency",) for t in pl.tasks if t.kind == "task")
        assert Counter(t.kind for t in pl.tasks)["attention"] == 1
    # every task is still judged judgements_per_item times
    counts = Counter(t.task_id for pl in lists for t in pl.tasks if t.kind == "task")
    assert set(counts) == {t.task_id for t in tasks} and set(counts.values()) == {3}


def test_watched_lists_hold_a_random_subset_in_a_random_order():
    _items, _, lists = _design(WATCHED)
    first = [t.item_id for t in lists[0].tasks if t.kind == "task"]
    rank = {item: ITEMS.index(item) for item in ITEMS}
    assert sorted(first, key=rank.get) != first  # not in file order within the list
    served = [t.item_id for pl in lists if pl.watched and pl.round == 0 for t in pl.tasks if t.kind == "task"]
    assert sorted(served) == ITEMS and served != ITEMS  # round 0 serves every item once, not in file order


def test_latin_square_still_balances_systems_with_the_serving_order():
    data = WATCHED | {"criteria": [WATCHED["criteria"][1], WATCHED["criteria"][0]],
                      "design": {"judgements_per_item": 1, "items_per_participant": 12}}
    for seed in (1, 2, 3):
        items, _, lists = _design(data, seed)
        assert items != ITEMS
        rating = [pl for pl in lists if not pl.watched]
        assert len(rating) == 6  # 24 items x 3 systems / 12
        for pl in rating:
            assert Counter(t.systems[0] for t in pl.tasks) == {"a": 4, "b": 4, "c": 4}


def test_a_study_without_a_watched_comparison_keeps_its_lists():
    data = {k: v for k, v in WATCHED.items() if k != "stopping"}
    items, _tasks, lists = _design(data)
    p = parse_protocol(data)
    assert items == ITEMS and not any(pl.watched for pl in lists)
    assert [pl.to_json() for pl in lists] == [pl.to_json() for pl in build_lists(build_tasks(p, ITEMS, SYSTEMS), p, 7)]


def test_only_watched_tasks_make_every_list_a_watched_session():
    data = WATCHED | {"criteria": [WATCHED["criteria"][0]]}
    _, _, lists = _design(data)
    assert lists and all(pl.watched == ("pref",) for pl in lists)


def test_lists_round_trip_and_old_lists_files_still_load():
    _, tasks, lists = _design(WATCHED)
    by_id = {t.task_id: t for t in tasks}
    for pl in lists:
        assert ParticipantList.from_json(pl.to_json(compact=True), by_id) == pl
        assert ParticipantList.from_json(pl.to_json()) == pl
    old = lists[0].to_json(compact=True)
    del old["watched"]  # a lists file written before the field existed
    assert ParticipantList.from_json(old, by_id).watched == ()
    assert "watched" not in lists[-1].to_json()  # a list of other tasks writes no field
