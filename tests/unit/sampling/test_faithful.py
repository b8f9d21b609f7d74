"""casf-faithful against hand-computed cases (the authors' procedure, step by step)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from humeval.errors import DataError
from humeval.sampling import ItemTable, get_sampler
from humeval.sampling.faithful import (
    exchange_order,
    minimax_pick,
    ngram_distance,
    stepwise_exchange_order,
)
from humeval.sampling.ranking import permutation_tau


def test_preliminary_sort_swaps_on_partial_sums():
    # rows (5, 0) and (1, 1): after system 0, 5 > 1 swaps; after system 1 the carried sums are
    # 5 + 1 = 6 (row now at i) vs 1 + 0 = 1, so they swap back: the row with total 5 stays
    # before the row with total 2, which a sort would not do
    assert stepwise_exchange_order(np.array([[5.0, 0.0], [1.0, 1.0]])).tolist() == [0, 1]
    # (3,0) vs (1,5): swap after system 0 (3 > 1), back after system 1 (3+5 > 1+0); same for (3,0) vs (2,2);
    # (1,5) vs (2,2): no swap after system 0 (1 < 2), swap after system 1 (6 > 4)
    assert stepwise_exchange_order(np.array([[3.0, 0.0], [1.0, 5.0], [2.0, 2.0]])).tolist() == [0, 2, 1]


def test_batch_sort_is_ascending_and_copies_texts_over():
    # keys 2, 2, 1: i=0, j=1 no swap (2 > 2 is false); j=2 swaps: keys 1, 2, 2, rows 2, 1, 0;
    # the texts' tuple swap copies row 2's text to row 0 and leaves row 2's in place
    order, texts = exchange_order(np.array([2.0, 2.0, 1.0]))
    assert order.tolist() == [2, 1, 0]
    assert texts.tolist() == [2, 1, 2]


def test_batch_sort_matches_a_literal_exchange_sort():
    def literal(keys):
        keys, order, text = list(keys), list(range(len(keys))), list(range(len(keys)))
        for i in range(len(keys) - 1):
            for j in range(i + 1, len(keys)):
                if keys[i] > keys[j]:
                    keys[i], keys[j] = keys[j], keys[i]
                    order[i], order[j] = order[j], order[i]
                    text[i] = text[j]
        return order, text

    rng = np.random.default_rng(1)
    for _ in range(100):
        keys = rng.integers(0, 4, rng.integers(1, 12)).astype(float)
        order, texts = exchange_order(keys)
        assert (order.tolist(), texts.tolist()) == literal(keys)


def test_ngram_distance_is_the_codes_dissimilarity():
    assert ngram_distance("a b c", "a b d") == 2 + 2 - 2 * 1
    assert ngram_distance("x y x y", "x y") == 3 + 1 - 2 * 1  # bigram list counts repeats, the overlap does not
    assert ngram_distance("A b", "a b") == 2  # case kept
    assert ngram_distance("one", "two") == 0  # no bigrams: distance 0


def test_controller_takes_the_smallest_largest_distance_first_on_ties():
    assert minimax_pick(np.array([5, 3, 3, 9]), np.array([0, 4])) == 1
    assert minimax_pick(np.array([5, 3, 3, 9]), np.array([2, 4])) == 2


def _table() -> ItemTable:
    rows = []
    for i in range(10):
        for s, shift in (("a", 0.0), ("b", 0.3)):
            rows.append({"item_id": str(i), "system": s, "output": f"w{i} x{i} y{i % 3} z",
                         **{f"auto.m{k}": (i * 7 % 10) / 10 + shift + k / 100 for k in range(2)},
                         "human.q": float(i % 4) + shift})
    return ItemTable.from_long(pd.DataFrame(rows))


def test_small_case_by_hand():
    table = _table()
    sampler = get_sampler("casf-faithful", metric="auto.m0", features=["auto.m0", "auto.m1"], phases=2)
    selection = sampler.select(table, 4, seed=0)
    # metric per item summed over systems: 2 * (i * 7 % 10) / 10 + 0.3, distinct, one system's value
    # always below the other's, so the preliminary sort is the ascending sort by i * 7 % 10:
    # items 0, 3, 6, 9, 2, 5, 8, 1, 4, 7; phase 0 takes positions 0 and 5 (linspace(0, 10, 2))
    assert selection.item_ids[:2] == ["0", "5"]
    assert selection.phases == [0, 0, 1, 1]
    assert len(set(selection.item_ids)) == 4


def test_phase_sizes_and_limits():
    sampler = get_sampler("casf-faithful")
    assert sampler.plan(74, 147) == [14] * 5  # floor(size / phases), as int(N * 0.1) in the code
    with pytest.raises(DataError, match="floor"):
        sampler.plan(3, 100)
    with pytest.raises(DataError, match="limited to"):
        sampler.plan(10, 10_000_000)


def test_permutation_tau_is_the_authors_measure():
    from scipy.stats import kendalltau

    full, sub = np.array([3.0, 1.0, 2.0, 4.0]), np.array([3.0, 2.0, 1.0, 4.0])
    expected = kendalltau(np.argsort(full), np.argsort(sub)).statistic
    assert permutation_tau(sub, full) == pytest.approx(expected)
    assert permutation_tau(full, full) == 1.0


def test_vectorised_largest_distance_matches_the_pairwise_definition():
    from humeval.sampling.faithful import _bigram_sets, _max_distance

    rng = np.random.default_rng(4)
    words = ["a", "b", "c", "A", "d"]
    outputs = np.array([" ".join(rng.choice(words, rng.integers(0, 7))) for _ in range(24)], dtype=object).reshape(12, 2)
    sets, counts = _bigram_sets(outputs)
    flat = outputs.ravel()
    rows, others = np.arange(0, 24, 2), np.array([1, 5, 7, 20])
    expected = [max(ngram_distance(flat[o], flat[r]) for o in others) for r in rows]
    assert _max_distance(sets, counts, rows, others).tolist() == expected
