"""Pair weights for pooled statements, by hand on three systems."""

from __future__ import annotations

import math

import numpy as np
import pytest

from humeval.errors import HumevalError
from humeval.policies.pooled_pairs import MIN_GAP, pooled_pair_weights


def test_three_systems_by_hand() -> None:
    # strengths 0.5, 0, 0 (logit); only "0 vs 1" is needed; no exploration
    theta = np.array([[0.5, 0.0, 0.0]])
    need = np.zeros((1, 3, 3), dtype=bool)
    need[0, 0, 1] = need[0, 1, 0] = True
    avail = np.ones((1, 3, 3), dtype=bool)
    w = pooled_pair_weights(theta, need, avail, "adaptive", explore=0.0)
    u = 1 / 0.25  # 1 / gap^2
    q02, q12 = 1 / (1 + math.exp(-0.5)), 0.5
    disc = q02 * (1 - q12) + (1 - q02) * q12  # a vote of (0, 2) and one of (1, 2) disagree
    value = {(0, 1): u, (0, 2): 0.5 * u * disc, (1, 2): 0.5 * u * disc}
    total = sum(value.values())
    for (a, b), v in value.items():
        assert w[0, a, b] == pytest.approx(v / total) and w[0, b, a] == pytest.approx(v / total)


def test_uniform_exploration_and_closeness_cap() -> None:
    theta = np.zeros((1, 3))
    need = np.ones((1, 3, 3), dtype=bool)
    avail = np.ones((1, 3, 3), dtype=bool)
    avail[0, 1, 2] = avail[0, 2, 1] = False
    uni = pooled_pair_weights(theta, need, avail, "uniform")
    assert uni[0, 0, 1] == pytest.approx(0.5) and uni[0, 1, 2] == 0.0
    # equal strengths: every gap is capped at MIN_GAP, so the two available pairs weigh the same
    ada = pooled_pair_weights(theta, need, avail, "adaptive")
    assert ada[0, 0, 1] == pytest.approx(ada[0, 0, 2]) and MIN_GAP > 0
    nothing = pooled_pair_weights(theta, need, np.zeros_like(avail), "adaptive")
    assert not nothing.any()
    with pytest.raises(HumevalError, match="did you mean|Did you mean"):
        pooled_pair_weights(theta, need, avail, "adaptiv")


def test_focal_statements_by_hand() -> None:
    from humeval.policies.pooled_pairs import focal_statements

    th = np.array([[0.5, 0.3, 0.0, -0.1, -0.2]])
    need = ~np.eye(5, dtype=bool)[None]
    pairs = lambda m: {(int(a), int(b)) for a, b in zip(*np.nonzero(np.triu(m[0], 1)), strict=True)}  # noqa: E731
    # best: the leader against every system still in contention (3 was beaten: out)
    beaten = np.array([[False, False, False, True, False]])
    assert pairs(focal_statements(th, need, "best", beaten=beaten)) == {(0, 1), (0, 2), (0, 4)}
    # top-2: each inside against the strongest outside (2), each outside against the weakest inside (1)
    assert pairs(focal_statements(th, need, "top-k", 2)) == {(0, 2), (1, 2), (1, 3), (1, 4)}
    # ranking: neighbours in the estimated order
    assert pairs(focal_statements(th[:, [4, 2, 0, 3, 1]], need, "ranking")) == {(2, 4), (1, 4), (1, 3), (0, 3)}
    # focal statements already resolved (not needed): back to every needed statement
    need2 = need.copy()
    need2[0, 0, :] = need2[0, :, 0] = False
    assert (focal_statements(th, need2, "best") == need2).all()
    # the weights: a near tie far from the answer (3 vs 4) gets nothing but the exploration floor
    from humeval.policies.pooled_pairs import pooled_pair_weights

    avail = np.ones((1, 5, 5), dtype=bool)
    w_old = pooled_pair_weights(th, need, avail, explore=0.0)
    w_new = pooled_pair_weights(th, need, avail, explore=0.0, goal="best")
    assert w_old[0, 3, 4] > w_old[0, 0, 4]
    assert w_new[0, 0, 1] == w_new[0].max() and w_new[0, 3, 4] < w_old[0, 3, 4]
