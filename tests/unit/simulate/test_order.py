"""Sorted data: the rules stay valid in the design's serving order and fail in file order.

Two systems (or K) tied over the items, A (system 0) better on the first half of the file
(P 0.8) and worse on the second (P 0.2), 3 judgements per item. In file order the first
half alone decides for A; in the serving order (a fresh ``serving_order`` per run) wrong
decisions stay within delta.
"""

from __future__ import annotations

import numpy as np
import pytest

from humeval.simulate.order import clopper_pearson_upper, simulate_served_goal, simulate_served_pair

N_ITEMS, RUNS, DELTA = 60, 400, 0.05


def _sorted_pair() -> np.ndarray:
    return np.r_[np.full(N_ITEMS // 2, 0.8), np.full(N_ITEMS // 2, 0.2)]


def _sorted_goal(k: int) -> np.ndarray:
    """System 0 tied with every other system overall (0.8 on the first half, 0.2 on the second);
    the others ordered 1 > 2 > ... at 0.9 on every item, so a ranking can be decided at all."""
    p = np.full((N_ITEMS, k, k), 0.5)
    for a in range(1, k):
        p[:, a, a + 1:], p[:, a + 1:, a] = 0.9, 0.1
    half = N_ITEMS // 2
    p[:half, 0, 1:], p[:half, 1:, 0] = 0.8, 0.2
    p[half:, 0, 1:], p[half:, 1:, 0] = 0.2, 0.8
    return p


def test_clopper_pearson_matches_r():
    assert clopper_pearson_upper(0, 400) == pytest.approx(0.009180, abs=1e-5)  # R: binom.test(0, 400)$conf.int[2]
    assert clopper_pearson_upper(10, 400) == pytest.approx(0.045430, abs=1e-4)  # R: binom.test(10, 400)$conf.int[2]


def test_anytime_rule_on_sorted_data_valid_in_serving_order_not_in_file_order():
    served = simulate_served_pair(_sorted_pair(), 3, rule="anytime", delta=DELTA, iterations=RUNS, seed=30)
    file = simulate_served_pair(_sorted_pair(), 3, rule="anytime", delta=DELTA, iterations=RUNS, seed=30, order="file")
    assert served.wrong_share <= DELTA, served.describe()
    assert f"upper bound {served.wrong_upper:.3f}" in served.describe()
    assert file.wrong_share > 10 * DELTA, file.describe()  # the old order: the first half decides for A


@pytest.mark.parametrize("goal", ["best", "ranking"])
def test_goals_on_sorted_data_valid_in_serving_order_not_in_file_order(goal):
    p = _sorted_goal(4)
    served = simulate_served_goal(p, goal, 3, delta=DELTA, iterations=RUNS, seed=30)
    file = simulate_served_goal(p, goal, 3, delta=DELTA, iterations=RUNS, seed=30, order="file")
    assert served.wrong_share <= DELTA, served.describe()
    assert file.wrong_share > 10 * DELTA, file.describe()


def test_a_real_difference_is_still_found_in_serving_order():
    p = np.full(N_ITEMS, 0.75)
    res = simulate_served_pair(p, 3, delta=DELTA, iterations=200, seed=1)
    assert res.decided >= 190 and res.wrong == 0, res.describe()
