"""Labelling strategies: one request at a time and vectorised, against enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from humeval.errors import HumevalError
from humeval.policies import (
    FixedWorker,
    Majority,
    MaxThree,
    OneWorker,
    get_strategy,
    parse_strategies,
)


@pytest.mark.parametrize("n", [1, 3, 5, 7, 9])
def test_majority_enumeration(n: int) -> None:
    st = Majority(n)
    votes = np.array(list(itertools.product([0, 1], repeat=n))).T
    labels, cost = st.aggregate(votes)
    for col, combo in enumerate(votes.T):
        assert labels[col] == st.label(list(combo)) == int(sum(combo) > n / 2)
    assert (cost == n).all()
    assert st.workers_needed([]) == n and st.workers_needed([1] * n) == 0


def test_max_three_all_triples() -> None:
    st = MaxThree()
    votes = np.array(list(itertools.product([0, 1], repeat=3))).T
    labels, cost = st.aggregate(votes)
    for col, (a, b, c) in enumerate(votes.T):
        if a == b:
            assert (labels[col], cost[col]) == (a, 2)
            assert st.label([a, b]) == a and st.workers_needed([a, b]) == 0
        else:
            assert (labels[col], cost[col]) == (int(a + b + c >= 2), 3)
            assert st.workers_needed([a, b]) == 1 and st.label([a, b, c]) == labels[col]


def test_single_vote_strategies() -> None:
    for st in (OneWorker(), FixedWorker()):
        labels, cost = st.aggregate(np.array([[1, 0, 1]]))
        assert labels.tolist() == [1, 0, 1] and cost.tolist() == [1, 1, 1]
        assert st.workers_needed([]) == 1 and st.label([0]) == 0
    assert FixedWorker().same_worker and not OneWorker().same_worker


@pytest.mark.parametrize("bad", [2, 4, 0, -3])
def test_even_majority_is_refused(bad: int) -> None:
    with pytest.raises(HumevalError, match=f"N={bad}"):
        Majority(bad)
    if bad > 0:
        with pytest.raises(HumevalError, match="odd"):
            get_strategy(f"majority{bad}")


def test_registry() -> None:
    assert [s.name for s in parse_strategies("one, max3,majority5,one")] == ["one", "max3", "majority5"]
    with pytest.raises(HumevalError, match="Did you mean 'max3'"):
        get_strategy("max33")
    with pytest.raises(HumevalError, match="vote"):
        OneWorker().label([2])
    with pytest.raises(HumevalError, match="max3"):
        MaxThree().label([1, 1, 0])
