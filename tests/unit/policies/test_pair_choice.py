"""Pair choice: uniform shares, the adaptive focus per goal, and the deficit round-robin."""

from __future__ import annotations

import numpy as np
import pytest

from humeval.errors import HumevalError
from humeval.policies.pair_choice import borda_scores, next_pair, pair_weights
from humeval.stopping.goals import goal_status, open_pairs


def test_uniform_spreads_over_all_pairs() -> None:
    w = pair_weights(np.zeros((4, 4)), np.zeros((4, 4), bool), np.ones(4, bool), "best", "uniform")
    assert w.sum() == pytest.approx(1.0)
    assert np.allclose(w[np.triu_indices(4, 1)], 1 / 6) and np.tril(w).sum() == 0


def test_adaptive_best_duels_the_leader_with_contenders() -> None:
    wins = np.zeros((4, 4))
    wins[2, :] = 10  # system 2 leads
    wins[2, 2] = 0
    resolved = np.zeros((4, 4), bool)
    resolved[2, 3] = True  # 3 is out
    _, cont = goal_status(resolved, "best")
    op = open_pairs(resolved, "best")
    w = pair_weights(wins, op, cont, "best", "adaptive", explore=0.0)
    # leader 2 against 0 and 1 only, half each
    assert w[0, 2] == pytest.approx(0.5) and w[1, 2] == pytest.approx(0.5)
    assert w.sum() == pytest.approx(1.0)
    # the floor goes to every open pair (unresolved, touching a contender): (0,1), (0,2), (0,3), (1,2), (1,3)
    w = pair_weights(wins, op, cont, "best", "adaptive", explore=0.1)
    assert w[0, 1] == pytest.approx(0.1 / 5) and w[2, 3] == 0.0


def test_adaptive_best_duels_the_leader_with_systems_others_beat() -> None:
    # 3 was beaten by 0, not by the leader 2: 2 must still beat 3 itself to be announced
    wins = np.zeros((4, 4))
    wins[2, :] = 10
    wins[2, 2] = 0
    resolved = np.zeros((4, 4), bool)
    resolved[0, 3] = True
    _, cont = goal_status(resolved, "best")
    assert cont.tolist() == [True, True, True, False]
    w = pair_weights(wins, open_pairs(resolved, "best"), cont, "best", "adaptive", explore=0.0)
    assert {(i, j) for i, j in zip(*np.nonzero(w), strict=True)} == {(0, 2), (1, 2), (2, 3)}
    # 1 vs 3 stays open (1 may still be the best) but is not one of the leader's duels
    assert open_pairs(resolved, "best")[1, 3]


def test_adaptive_ranking_uses_adjacent_pairs() -> None:
    wins = np.array([[0, 9, 9, 9], [1, 0, 9, 9], [1, 1, 0, 9], [1, 1, 1, 0]], dtype=float)
    assert np.argsort(-borda_scores(wins)).tolist() == [0, 1, 2, 3]
    none = np.zeros((4, 4), bool)
    _, cont = goal_status(none, "ranking")
    w = pair_weights(wins, open_pairs(none, "ranking"), cont, "ranking", "adaptive", explore=0.0)
    assert {(i, j) for i, j in zip(*np.nonzero(w), strict=True)} == {(0, 1), (1, 2), (2, 3)}


def test_deficit_round_robin_follows_the_shares() -> None:
    w = np.zeros((3, 3))
    w[0, 1], w[0, 2] = 0.75, 0.25
    counts = np.zeros((3, 3))
    seen = []
    for _ in range(8):
        i, j = next_pair(w, counts)
        seen.append((i, j))
        counts[i, j] += 1
        counts[j, i] += 1
    assert seen.count((0, 1)) == 6 and seen.count((0, 2)) == 2
    assert next_pair(np.zeros((3, 3)), counts) is None


def test_bad_policy() -> None:
    with pytest.raises(HumevalError, match="Did you mean 'adaptive'"):
        pair_weights(np.zeros((3, 3)), np.zeros((3, 3), bool), np.ones(3, bool), "best", "adaptve")
