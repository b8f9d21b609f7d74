"""simulate(): parity inputs, determinism across processes, errors, JSON shape."""

from __future__ import annotations

import numpy as np
import pytest

from humeval.errors import HumevalError
from humeval.simulate import SimulationConfig, legacy_parity_inputs, simulate, simulate_many


def test_legacy_parity_inputs() -> None:
    cap, d = legacy_parity_inputs(21, 0.25, 0.1, 100, 0.8, 1.0)
    rs = np.random.RandomState(21)
    assert np.array_equal(cap, rs.uniform(0.8, 1.0, 100))
    z = rs.standard_normal(30000)
    assert np.allclose(d, np.clip(0.25 + np.sqrt(0.1) * z, -1, 1))


def test_same_numbers_for_any_number_of_processes() -> None:
    cfg = SimulationConfig(mu=0.2, n_requests=1500, iterations=300)
    a = simulate(cfg, ["one", "majority3"], ["anytime", "hoeffding"], seed=9, processes=1)
    b = simulate(cfg, ["majority3", "one"], ["anytime", "hoeffding"], seed=9, processes=2)
    for r in a.results:
        assert r == b.result(r.strategy, r.rule)
    c = simulate(cfg, ["one"], ["anytime"], seed=10)
    assert c.result("one", "anytime").mean_effort != a.result("one", "anytime").mean_effort


def test_sweep_cells() -> None:
    cfgs = [SimulationConfig(mu=m, n_requests=1000, iterations=100, delta=0.01) for m in (0.3, 0.6)]
    reps = simulate_many(cfgs, ["one"], ["anytime"], seed=1)
    assert reps[0].result("one", "anytime").mean_effort > reps[1].result("one", "anytime").mean_effort


def test_json_shape_and_ci() -> None:
    rep = simulate(SimulationConfig(mu=0.3, n_requests=800, iterations=100), ["one", "max3"], ["anytime"], seed=2)
    js = rep.to_json()
    assert set(js) >= {"results", "signature"}
    for row in js["results"]:
        assert {"strategy", "rule", "mean_effort", "ci_low", "ci_high", "decided_share", "wrong_share", "iterations"} <= set(row)
        assert row["ci_low"] <= row["mean_effort"] <= row["ci_high"]
    assert "seed:2" in js["signature"] and "mu:0.3" in js["signature"]


def test_spammers_and_adversaries_cost_more() -> None:
    base = SimulationConfig(mu=0.3, n_requests=3000, iterations=200, delta=0.01)
    clean = simulate(base, ["one"], ["anytime"], seed=4).result("one", "anytime").mean_effort
    spam = simulate(SimulationConfig(mu=0.3, n_requests=3000, iterations=200, delta=0.01, spammer_share=0.4),
                    ["one"], ["anytime"], seed=4).result("one", "anytime").mean_effort
    adv = simulate(SimulationConfig(mu=0.3, n_requests=3000, iterations=200, delta=0.01, adversarial_share=0.3),
                   ["one"], ["anytime"], seed=4).result("one", "anytime").mean_effort
    assert spam > 1.5 * clean and adv > 2 * clean


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"delta": -0.01}, "delta"),
    ({"capability": (0.5, 1.2)}, r"\[0, 1\].*1.2"),
    ({"capability": (-0.1, 0.5)}, r"-0.1"),
    ({"capability": (0.9, 0.8)}, "LOW"),
    ({"workers": 0}, "workers"),
    ({"spammer_share": 0.7, "adversarial_share": 0.5}, "exceed"),
    ({"parity": True, "n_requests": 40000}, "30000"),
])
def test_config_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(HumevalError, match=match):
        SimulationConfig(**kwargs)
