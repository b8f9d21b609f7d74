from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from humeval.sampling.controller import control
from humeval.sampling.redundancy import bigram_matrix, similar_pairs


def _brute(x: sp.csr_matrix, t: float) -> np.ndarray:
    dense = (x @ x.T).toarray()
    sizes = np.diff(x.indptr)
    with np.errstate(invalid="ignore", divide="ignore"):
        dice = 2 * dense / (sizes[:, None] + sizes[None, :])
    np.fill_diagonal(dice, 0)
    return np.where(np.nan_to_num(dice) >= t, np.nan_to_num(dice), 0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), t=st.sampled_from([0.2, 0.35, 0.5, 0.8]))
def test_prefix_filter_finds_exactly_the_pairs_above_threshold(seed, t):
    rng = np.random.default_rng(seed)
    texts = np.array([[" ".join(f"w{k}" for k in rng.integers(0, 12, rng.integers(0, 9))) for _ in range(2)]
                      for _ in range(25)], dtype=object)
    x = bigram_matrix(texts)
    got = similar_pairs(x, t).toarray()
    np.testing.assert_allclose(got, _brute(x, t), atol=1e-9)


def test_controller_follows_the_three_rules():
    # items 0..5; item 9 is selected; graph: 0~9 (0.9), 1~9 (0.6), 3~9 (0.7), 4~9 (0.8)
    pairs = {(0, 9): 0.9, (1, 9): 0.6, (3, 9): 0.7, (4, 9): 0.8}
    rows = [a for a, b in pairs] + [b for a, b in pairs]
    cols = [b for a, b in pairs] + [a for a, b in pairs]
    graph = sp.csr_matrix((list(pairs.values()) * 2, (rows, cols)), shape=(10, 10))
    selected = np.zeros(10, dtype=bool)
    selected[9] = True
    order = np.array([0, 1, 2, 3, 4, 5])
    picks = control(order, 2, 3, 0, graph, selected, 0.5)
    # bucket [0,1,2]: 0 and 1 infeasible, 2 feasible -> rule 1 picks 2
    # bucket [3,4,5]: 3 and 4 infeasible, 5 feasible -> 5
    assert list(picks) == [2, 5]
    selected[:] = False
    selected[9] = True
    picks = control(np.array([0, 3, 4, 1]), 1, 4, 0, graph, selected, 0.5)
    assert list(picks) == [1]  # all infeasible: rule 2, smallest violation (0.6)
    selected[:] = False
    picks = control(np.array([0, 1, 2]), 1, 3, 1, graph, selected, 0.5)
    assert list(picks) == [1]  # all feasible: rule 3, the initial pick (offset 1)


def test_earlier_picks_of_a_phase_count_as_selected():
    texts = np.array([["a b c d", "a b c d"], ["a b c d", "a b c d"], ["x y z", "u v w"], ["p q r", "s t u"]], dtype=object)
    graph = similar_pairs(bigram_matrix(texts), 0.5)
    selected = np.zeros(4, dtype=bool)
    picks = control(np.array([0, 2, 1, 3]), 2, 2, 0, graph, selected, 0.5)
    assert list(picks) == [0, 3]  # item 1 duplicates item 0, picked in the first bucket


def test_hash_collisions_fall_back_to_exact_string_identity(monkeypatch):
    from humeval.sampling import redundancy

    texts = np.array([["the cat sat", "a b c"], ["the cat ran", "Ünï code x"], ["dog sat down", "a b"]], dtype=object)
    expected = (bigram_matrix(texts) @ bigram_matrix(texts).T).toarray()
    real = redundancy._block_bigrams

    def colliding(block, first):
        owner, key, check = real(block, first)
        return owner, np.zeros_like(key), check  # every bigram shares one key; the check key tells them apart

    monkeypatch.setattr(redundancy, "_block_bigrams", colliding)  # every key equal: exact path
    x = bigram_matrix(texts)
    np.testing.assert_array_equal((x @ x.T).toarray(), expected)
    assert x.shape[1] == 9  # the cat, cat sat, a b, b c, cat ran, ünï code, code x, dog sat, sat down


def _control_one_by_one(order, n, width, offset, graph, selected, threshold):
    """The controller as the paper states it: every bucket decided in turn against every earlier pick."""
    from humeval.sampling.controller import violations

    tie_break = np.abs(np.arange(width) - offset) * width + np.arange(width)
    picks = []
    for e in range(n):
        bucket = order[e * width : (e + 1) * width]
        vio = violations(graph, bucket, selected, threshold)
        feasible = vio == 0
        best = np.flatnonzero(feasible)[np.argmin(tie_break[feasible])] if feasible.any() else np.lexsort((tie_break, vio))[0]
        picks.append(bucket[best])
        selected[bucket[best]] = True
    return np.array(picks)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_items=st.integers(4, 60), edges=st.integers(0, 80), offset_middle=st.booleans())
def test_controller_decides_only_linked_buckets_and_matches_the_one_by_one_rule(seed, n_items, edges, offset_middle):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n_items, edges), rng.integers(0, n_items, edges)
    a, b = a[a != b], b[a != b]
    d = rng.uniform(0.5, 1.0, len(a))
    graph = sp.csr_matrix((np.concatenate([d, d]), (np.concatenate([a, b]), np.concatenate([b, a]))), shape=(n_items, n_items))
    graph.sum_duplicates()
    graph.data = np.minimum(graph.data, 1.0)
    chosen = rng.random(n_items) < 0.2
    order = rng.permutation(np.flatnonzero(~chosen))
    n = max(1, len(order) // int(rng.integers(1, 5)))
    if len(order) < n:
        return
    width = len(order) // n
    offset = (width - 1) // 2 if offset_middle else 0
    expected_selected = chosen.copy()
    expected = _control_one_by_one(order, n, width, offset, graph, expected_selected, 0.5)
    got_selected = chosen.copy()
    got = control(order, n, width, offset, graph, got_selected, 0.5)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got_selected, expected_selected)
