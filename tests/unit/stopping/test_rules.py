"""Stopping rules: boundaries against per-step loops, sequential use, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from humeval.errors import HumevalError
from humeval.stopping import (
    BetaMixtureRule,
    HoeffdingRule,
    LastRunRule,
    UnionHoeffdingRule,
    get_rule,
    log_mixture_ratio,
)


def _loop_hoeffding(x: np.ndarray, delta: float) -> tuple[int, int]:
    s = 0
    for n, v in enumerate(x, start=1):
        s += v
        t = math.sqrt(math.log(1 / delta) / (2 * n))
        if s / n - t > 0.5:
            return n, 1
        if s / n + t < 0.5:
            return n, -1
    return 0, 0


@pytest.mark.parametrize("delta", [0.05, 0.001])
def test_hoeffding_matches_loop(delta: float) -> None:
    rng = np.random.default_rng(1)
    x = (rng.random((60, 400)) < 0.58).astype(int)
    dec = HoeffdingRule(delta).decide_paths(np.cumsum(x, axis=1))
    for i in range(60):
        assert (dec.n[i], dec.outcome[i]) == _loop_hoeffding(x[i], delta)


def test_mixture_matches_quadrature() -> None:
    a = 20.0
    for n, s in [(10, 7), (100, 61), (400, 180)]:
        def integrand(p: float, n: int = n, s: int = s) -> float:
            return float((2 * p) ** s * (2 * (1 - p)) ** (n - s) * p ** (a - 1) * (1 - p) ** (a - 1))

        norm = quad(lambda p: p ** (a - 1) * (1 - p) ** (a - 1), 0, 1)[0]
        value = quad(integrand, 0, 1, points=[s / n], limit=200)[0] / norm
        assert float(log_mixture_ratio(n, s, a)) == pytest.approx(math.log(value), rel=1e-6)


def test_mixture_boundary_is_minimal() -> None:
    rule = BetaMixtureRule(0.01)
    n = np.arange(1, 2001)
    a = rule.boundary(2000)
    thr = math.log(100)
    ok = a <= n
    assert (log_mixture_ratio(n[ok], a[ok], rule.prior_strength) >= thr).all()
    below = a[ok] - 1
    keep = below > n[ok] / 2
    assert (log_mixture_ratio(n[ok][keep], below[keep], rule.prior_strength) < thr).all()


def test_sequential_update_agrees_with_paths() -> None:
    rng = np.random.default_rng(3)
    x = (rng.random(3000) < 0.56).astype(int)
    for name in ("hoeffding", "hoeffding-union", "anytime"):
        rule = get_rule(name, 0.01)
        path = rule.decide_paths(np.cumsum(x)[None, :])
        first = None
        for v in x:
            d = rule.update(int(v))
            if d.decided and first is None:
                first = d
        assert first is not None and first.n == path.n[0]
        assert first.outcome == {1: "A", -1: "B"}[int(path.outcome[0])]
        assert rule.update(0) is first  # sticky


def test_decision_carries_reason_and_bound() -> None:
    rule = UnionHoeffdingRule(0.05)
    d = rule.update("A")
    assert d.outcome == "continue" and "not enough evidence" in d.reason
    assert d.threshold_a > 1.0


def _loop_lastrun(x: np.ndarray, delta: float) -> int:
    s, decision = 0, -1
    for n, v in enumerate(x, start=1):
        s += v
        y = s / n
        low = y - math.sqrt(math.log(1 / delta) / (2 * n))
        if low > 0.5 and y > 0.5 and decision < 0:
            decision = n
        if low < 0.5:
            decision = -1
    return max(decision, 0)


def test_lastrun_matches_authors_scan() -> None:
    rng = np.random.default_rng(5)
    x = (rng.random((80, 600)) < 0.57).astype(int)
    dec = LastRunRule(0.01).decide_paths(np.cumsum(x, axis=1))
    assert [int(v) for v in dec.n] == [_loop_lastrun(row, 0.01) for row in x]


def test_lastrun_one_at_a_time_needs_horizon() -> None:
    with pytest.raises(HumevalError, match="horizon"):
        LastRunRule(0.01).update(1)
    rule = LastRunRule(0.05, horizon=50)
    for _ in range(49):
        assert rule.update(1).outcome == "continue"
    assert rule.update(1).outcome == "A"


@pytest.mark.parametrize("bad", [-0.1, 0.0, 1.0, 1.5, float("nan"), "x"])
def test_bad_delta_is_named(bad: object) -> None:
    with pytest.raises(HumevalError, match="delta"):
        get_rule("anytime", bad)  # type: ignore[arg-type]


def test_unknown_rule_suggests() -> None:
    with pytest.raises(HumevalError, match="Did you mean 'anytime'"):
        get_rule("anytme", 0.05)


def test_bad_outcome() -> None:
    with pytest.raises(HumevalError, match="outcome"):
        get_rule("anytime", 0.05).update(2)
