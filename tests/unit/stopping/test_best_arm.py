"""Best of K: the rule one judgement at a time, and the misidentification rate."""

from __future__ import annotations

import pytest
from scipy.stats import binom

from humeval.errors import HumevalError
from humeval.policies import BestPairPolicy
from humeval.simulate import simulate_best_arm
from humeval.stopping import BestArmRule


def test_misidentification_below_delta() -> None:
    res = simulate_best_arm([0.06, 0.03, 0.0], 0.1, iterations=600, max_judgements=200000, seed=4)
    assert res.decided_share > 0.95
    assert res.wrong_share <= binom.ppf(0.999, 600, 0.1) / 600


def test_sequential_policy_finds_the_best() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    quality = np.array([0.0, 0.4, 0.1])
    rule = BestArmRule(3, 0.05)
    policy = BestPairPolicy(rule)
    for _ in range(5000):
        i, j = policy.next_pair()
        p = (0.9 * (quality[i] - quality[j]) + 1) / 2
        d = policy.record(i, j, i if rng.random() < p else j)
        if d.decided:
            break
    assert d.best == 1
    with pytest.raises(HumevalError, match="already decided"):
        policy.next_pair()


def test_bad_input() -> None:
    with pytest.raises(HumevalError, match="integer >= 2"):
        BestArmRule(1, 0.05)
    with pytest.raises(HumevalError, match="winner"):
        BestArmRule(3, 0.05).update(0, 1, 2)
    with pytest.raises(HumevalError, match="tie"):
        simulate_best_arm([0.1, 0.1], 0.05)
