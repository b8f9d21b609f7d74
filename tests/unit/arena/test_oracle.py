"""The replay's oracle pieces: Davidson's outcome probabilities, duel times and the lower bound on any policy's votes."""

from __future__ import annotations

import numpy as np
import pytest

from humeval.arena.replay import davidson_probs, duel_lower_bound, duel_times, simulate_statements
from humeval.stopping.mixture import log_mixture_ratio
from humeval.stopping.pooled import statement_delta


def test_davidson_probs() -> None:
    th = np.array([0.4, 0.0, -0.3])
    p = davidson_probs(th, 1.2)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0)
    # given decisive, Bradley-Terry; at equal strengths P(tie) = nu / (2 + nu)
    assert p[0, 2, 0] / (p[0, 2, 0] + p[0, 2, 1]) == pytest.approx(1 / (1 + np.exp(-0.7)))
    assert p[1, 1, 2] == pytest.approx(1.2 / 3.2)


def test_duel_times_by_a_direct_loop() -> None:
    level = 0.01
    times = duel_times(0.75, level, runs=30, seed=3)
    rng = np.random.default_rng(3)  # the same draws, one duel at a time
    draws = rng.random((30, 5000)) < 0.75
    for r in range(30):
        s = 0
        for n in range(1, 5001):
            s += int(draws[r, n - 1])
            if s > n - s and log_mixture_ratio(n, s, 14.0) >= np.log(1 / level):
                assert times[r] == n
                break


def test_lower_bound_below_the_votes_of_both_policies() -> None:
    th = np.array([0.5, 0.2, 0.0, -0.2])
    nu = 1.0
    duels, bound = duel_lower_bound(th, nu, 0, 1, statement_delta(0.05, 3), runs=400, seed=1)
    assert bound >= duels  # at most one duel per vote
    for policy in ("uniform", "adaptive"):
        st, _ = simulate_statements(davidson_probs(th, nu), "best", policy=policy, runs=20, max_votes=200_000,
                                    seed=2, first_batch=200)
        assert st.decided.all() and st.decided_at.mean() > bound
