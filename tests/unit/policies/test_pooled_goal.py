"""The goal on pooled statements fed one vote at a time (humeval.policies.pooled_goal): its epochs, its statements
against PooledStatements fed the same epochs directly, its pair weights frozen within an epoch, and the fallback."""

from __future__ import annotations

import numpy as np
import pytest

from humeval.errors import HumevalError
from humeval.policies.pooled_goal import PooledGoal, epoch_size
from humeval.stopping.pooled import PooledStatements


def _votes(rng: np.random.Generator, theta: np.ndarray, n: int) -> list[tuple[int, int, int]]:
    k = len(theta)
    out = []
    for _ in range(n):
        i, j = rng.choice(k, 2, replace=False)
        p = 1 / (1 + np.exp(theta[j] - theta[i]))
        out.append((int(i), int(j), int(i if rng.random() < p else j)))
    return out


def test_epoch_sizes_by_hand() -> None:
    # first 200, then max(200, ceil(0.1 start)): 200, 200, ..., at 2,000 votes 200, at 2,010 -> 201
    assert [epoch_size(s) for s in (0, 200, 1990, 2000, 2010, 10_000)] == [200, 200, 200, 200, 201, 1000]
    assert epoch_size(0, 50) == 50 and epoch_size(1000, 50) == 100


def test_one_vote_at_a_time_equals_the_statements_fed_the_same_epochs() -> None:
    rng = np.random.default_rng(4)
    theta = np.array([1.0, 0.4, 0.0, -0.3, -0.8])
    votes = _votes(rng, theta, 1500)
    goal = PooledGoal(5, "best", 0.05, epoch=100, seed=7)
    ref = PooledStatements(5, "best", 0.05, seed=7)
    closed = [goal.feed(i, j, w) for i, j, w in votes]
    # the epochs: 100 x 10 (to 1,000 votes), then 100, 110, 121 ... cut by the count alone
    ends, start = [], 0
    while start + epoch_size(start, 100) <= len(votes):
        start += epoch_size(start, 100)
        ends.append(start)
    assert [n + 1 for n, c in enumerate(closed) if c] == ends
    lo = 0
    for end in ends:
        w = np.zeros((5, 5), dtype=np.int64)
        for i, j, win in votes[lo:end]:
            w[win, j if win == i else i] += 1
        st = ref.update(w[None])
        lo = end
    assert np.array_equal(goal.state.resolved, st.resolved) and np.array_equal(goal.state.rank_low, st.rank_low)
    assert goal.state.decided_at[0] == st.decided_at[0] and goal.state.answer == st.answer
    assert goal.fed == len(votes) and goal.start == ends[-1]


def test_weights_are_frozen_within_an_epoch() -> None:
    goal = PooledGoal(4, "best", 0.05, epoch=50, seed=1)
    rng = np.random.default_rng(0)
    votes = _votes(rng, np.array([2.0, 0.0, -0.5, -1.0]), 120)
    w0 = goal.weights.copy()
    assert np.isclose(np.triu(w0[0], 1).sum(), 1.0)
    for n, (i, j, win) in enumerate(votes, 1):
        goal.feed(i, j, win)
        if n < 50:
            assert np.array_equal(goal.weights, w0)  # the epoch's votes are not read
        if n == 50:
            w1 = goal.weights.copy()
            assert not np.array_equal(w1, w0)  # set again at the epoch's end, from its votes
        if 50 < n < 100:
            assert np.array_equal(goal.weights, w1)


def test_a_preference_cycle_withdraws_pooling_and_says_so() -> None:
    # A > B > C > A strongly, D and E below all: virtual duels of A and B through C contradict the direct ones
    p = np.full((5, 5), 0.5)
    for a, b, q in ((0, 1, 0.9), (1, 2, 0.9), (2, 0, 0.9), (0, 3, 0.6), (1, 3, 0.6), (2, 3, 0.6), (0, 4, 0.6),
                    (1, 4, 0.6), (2, 4, 0.6), (3, 4, 0.5)):
        p[a, b], p[b, a] = q, 1 - q
    rng = np.random.default_rng(3)
    goal = PooledGoal(5, "best", 0.05, epoch=100, seed=2)
    for _ in range(6000):
        i, j = (int(x) for x in rng.choice(5, 2, replace=False))
        goal.feed(i, j, i if rng.random() < p[i, j] else j)
    st = goal.state
    assert st.misfit[0] and st.answer[0] is None
    assert "fit is poor" in st.reason(0) and "pooled statements withdrawn" in st.reason(0)


def test_bad_votes_refused() -> None:
    goal = PooledGoal(3, "best")
    with pytest.raises(HumevalError, match="two different systems"):
        goal.feed(1, 1, 1)
    with pytest.raises(HumevalError, match="stopping.epoch"):
        PooledGoal(3, "best", epoch=0)


def test_pooling_is_refused_where_nothing_can_be_pooled() -> None:
    from humeval.protocol.comparisons import goal_problems

    assert goal_problems("best", [], ["a", "b", "c"], pooling=True) == []
    (where, message), = goal_problems("pair", [], ["a", "b"], pooling=True)
    assert where == ("stopping", "pooling") and "got goal 'pair' over 2 systems" in message
    (where, message), = goal_problems("ranking", ["a", "b"], ["a", "b", "c"], pooling=True)
    assert where == ("stopping", "pooling") and "over 2 systems" in message
