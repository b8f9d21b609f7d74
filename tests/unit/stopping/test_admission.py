"""The vectorised admission (simulator) is the scalar admission (live store), state by state."""

from __future__ import annotations

import numpy as np
import pytest

from humeval.stopping import admission as adm
from humeval.stopping.registry import get_rule


@pytest.mark.parametrize(("name", "horizon"), [("anytime", 120), ("hoeffding", 60), ("normal-mixture", 60)])
def test_distance_table_equals_scalar(name: str, horizon: int) -> None:
    rule = get_rule(name, 0.05)
    a = rule.boundary(horizon + 70)

    def a_min(m: np.ndarray) -> np.ndarray:  # the same boundary, looked up (the rule's own is slow to call 10^4 times)
        return a[np.asarray(m) - 1]

    assert np.array_equal(a_min(np.arange(1, 40)), rule.a_min(np.arange(1, 40)))
    table = adm.distance_table(a[:horizon], horizon + 3)
    for n in range(horizon + 4):
        for s in range(n + 1):
            assert table[n, s] == adm.distance(a_min, n, s, horizon), (n, s)


def test_distances_with_a_boundary_that_is_not_monotone() -> None:
    """A boundary whose slack n - a(n) goes down as well as up: the search finds the first crossing."""
    a = np.array([2, 3, 3, 5, 4, 7, 5, 6, 9, 7, 8, 8, 13, 9, 10, 11], dtype=np.int64)

    def a_min(m: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(m) <= len(a), a[np.minimum(np.asarray(m), len(a)) - 1], np.asarray(m) + 1)

    table = adm.distance_table(a, len(a) + 2)
    for n in range(len(a) + 3):
        for s in range(n + 1):
            assert table[n, s] == adm.distance(a_min, n, s, len(a)), (n, s)


def test_wanted_many_equals_wanted() -> None:
    rng = np.random.default_rng(3)
    pending, d, allow = rng.integers(0, 40, (3, 500))
    for w in (0, 1, 7, 10):
        many = adm.wanted_many(pending, w, d, allow)
        assert [adm.wanted(int(p), w, int(x), int(y)) for p, x, y in zip(pending, d, allow, strict=True)] == many.tolist()
