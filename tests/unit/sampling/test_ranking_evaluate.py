from __future__ import annotations

import numpy as np
import pytest
from sampling_frames import make_frame
from scipy.stats import kendalltau

from humeval.rng import as_generator
from humeval.sampling import ItemTable, get_sampler
from humeval.sampling.allocation import allocate
from humeval.sampling.evaluate import evaluate, random_runs
from humeval.sampling.ranking import kendall_tau_b, top1_accuracy


def test_tau_b_matches_scipy_with_ties():
    rng = np.random.default_rng(0)
    for _ in range(300):
        m = int(rng.integers(2, 9))
        x, y = rng.integers(0, 4, m).astype(float), rng.integers(0, 4, m).astype(float)
        ours, ref = kendall_tau_b(x, y), kendalltau(x, y, variant="b").statistic
        assert (np.isnan(ours) and np.isnan(ref)) or ours == pytest.approx(ref, abs=1e-12)


def test_top1_with_ties_is_the_expected_accuracy():
    assert top1_accuracy(np.array([[3.0, 1, 2], [3, 3, 1], [1, 2, 3]]), np.array([5.0, 1, 2])).tolist() == [1, 0.5, 0]


def test_vectorised_random_runs_equal_a_loop():
    scores = as_generator(4).normal(size=(30, 5, 2))
    tau, top = random_runs(scores, 12, 40, seed=9)
    rng = as_generator(9)
    keys = rng.random((40, 30))
    for r in range(40):
        rows = np.argsort(keys[r])[:12]
        sub, full = scores[rows].mean(axis=0), scores.mean(axis=0)
        for k in range(2):
            expected = kendalltau(sub[:, k], full[:, k], variant="b").statistic
            assert tau[r, k] == pytest.approx(0.0 if np.isnan(expected) else expected, abs=1e-12)
            assert top[r, k] == float(np.argmax(sub[:, k]) == np.argmax(full[:, k]))


def test_evaluate_all_items_is_perfect_and_random_is_a_distribution():
    table = ItemTable.from_long(make_frame(n_items=30))
    ev = evaluate({"toy": table}, {"random": get_sampler("random"), "all": get_sampler("all"),
                                   "casf": get_sampler("casf", phases=2)}, (1.0, 0.3), random_seeds=50, method_seeds=2)
    rows = {(r.method, r.rate, r.aspect): r for r in ev.rows}
    assert rows[("all", 1.0, "a0")].tau_b == 1.0 and rows[("all", 1.0, "a0")].top1 == 1.0
    rand = rows[("random", 0.3, "a0")]
    assert rand.runs == 50 and rand.quantiles["q05"] <= rand.quantiles["q50"] <= rand.quantiles["q95"]
    assert 0 <= rows[("casf", 0.3, "a1")].percentile <= 1
    assert {s["method"] for s in ev.summary} == {"random", "all", "casf"}
    assert set(ev.to_json()["rows"][0]) >= {"dataset", "aspect", "method", "tau_b", "top1"}


def test_allocation_caps_and_sums():
    assert allocate(np.array([10, 2, 30]), 12).tolist() == [5, 2, 5]
    assert allocate(np.array([10, 10, 20]), 8, np.array([10, 10, 20])).tolist() == [2, 2, 4]
    assert allocate(np.array([1, 1, 1]), 3).sum() == 3


def test_percentile_interval_is_wilsons():
    from statsmodels.stats.proportion import proportion_confint

    from humeval.sampling.evaluate import percentile_interval

    for share, runs in [(0.53, 1000), (0.96, 200), (0.0, 200), (1.0, 1000), (0.206, 1000)]:
        low, high = proportion_confint(share * runs, runs, alpha=0.05, method="wilson")
        assert percentile_interval(share, runs) == pytest.approx((low, high), abs=1e-9)


def test_with_system_order_permutes_every_array():
    import pandas as pd

    from humeval.sampling import ItemTable

    frame = pd.DataFrame({"item_id": ["1", "1", "2", "2"], "system": ["b", "a", "b", "a"], "output": ["x", "y", "z", "w"],
                          "auto.m": [1.0, 2.0, 3.0, 4.0], "human.h": [5.0, 6.0, 7.0, 8.0]})
    table = ItemTable.from_long(frame).with_system_order(["b", "a"])
    assert table.systems == ["b", "a"]
    assert table.outputs.tolist() == [["x", "y"], ["z", "w"]]
    assert table.metric("auto.m").tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert table.human["human.h"].tolist() == [[5.0, 6.0], [7.0, 8.0]]
