"""Vectorised votes: distinct workers, vote shares, agreement with a per-label loop."""

from __future__ import annotations

import numpy as np

from humeval.policies import Majority, MaxThree, OneWorker
from humeval.simulate.votes import draw_distinct, strategy_labels


def test_draw_distinct_is_uniform_without_replacement() -> None:
    rng = np.random.default_rng(0)
    w = draw_distinct(rng, 10, 7, (20000,))
    s = np.sort(w, axis=0)
    assert (np.diff(s, axis=0) > 0).all()
    counts = np.bincount(w.ravel(), minlength=10) / w.size
    assert np.allclose(counts, 0.1, atol=0.005)
    first_two = w[0] * 10 + w[1]
    pair_counts = np.bincount(first_two, minlength=100).reshape(10, 10)
    off = pair_counts[~np.eye(10, dtype=bool)] / 20000
    assert np.allclose(off, 1 / 90, atol=0.004)


def test_vote_share_matches_model() -> None:
    rng = np.random.default_rng(1)
    caps = rng.uniform(0.8, 1.0, 100)
    d = np.full(4000, 0.3, dtype=np.float32)
    labels, cost = strategy_labels(OneWorker(), caps, d, rng, 50)
    assert abs(labels.mean() - (caps.mean() * 0.3 + 1) / 2) < 0.005
    assert (cost == 1).all()


def test_against_per_label_loop_distribution() -> None:
    # majority-3 label probability for fixed d, workers uniform without replacement
    caps = np.array([0.2, 0.9, 0.5, 1.0])
    d = 0.6
    p = (caps * d + 1) / 2
    exact = 0.0
    import itertools

    for trio in itertools.permutations(range(4), 3):
        q = p[list(trio)]
        for votes in itertools.product([0, 1], repeat=3):
            pr = np.prod([q[i] if v else 1 - q[i] for i, v in enumerate(votes)])
            exact += pr * (sum(votes) >= 2) / 24
    rng = np.random.default_rng(2)
    labels, _ = strategy_labels(Majority(3), caps, np.full(2000, d, dtype=np.float32), rng, 100)
    assert abs(labels.mean() - exact) < 0.004


def test_max3_cost_share() -> None:
    rng = np.random.default_rng(3)
    caps = np.full(50, 1.0)
    d = np.full(5000, 0.0, dtype=np.float32)  # coin flips: disagreement half the time
    _, cost = strategy_labels(MaxThree(), caps, d, rng, 20)
    assert abs(cost.mean() - 2.5) < 0.01
