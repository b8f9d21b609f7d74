"""`humeval reproduce ppi --fast`: prediction-powered means on the shared sets, beside human-only on the same subsets.

What is pinned: intervals hold their coverage where the labelled sample is not tiny, power
tuning never makes an interval wider than the human-only one, the judge changes the ranking
agreement by little either way (it is the sets' own metrics, which correlate weakly with the
human scores within a system), and the run is identical for the same seed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from humeval.data.casf import load_casf
from humeval.reproduce.ppi import judge_matrix, ppi, subset_estimates
from humeval.sampling.prepare import prepare_table
from humeval.stats import ppi_mean


@pytest.fixture(scope="module")
def result(shared_data: Path):
    return ppi(fast=True)


def test_every_set_and_budget_is_reported(result):
    sets = result.settings["results"]
    assert list(sets) == ["newsroom", "newstest2021_zhen", "usr_personachat", "thumb_mscoco"]
    assert len(result.rows) == 4 * 2 * 5
    for by_budget in sets.values():
        for r in by_budget.values():
            assert r["width_ratio"] <= 1.01  # power tuning: never much wider than human-only
            assert abs(r["tau_ppi"] - r["tau_human"]) <= 0.03


def test_coverage_holds_with_enough_labelled_items(result):
    mscoco = result.settings["results"]["thumb_mscoco"]  # 50 and 125 labelled items
    for r in mscoco.values():
        assert 0.93 <= r["coverage_human"] <= 0.975 and 0.93 <= r["coverage_ppi"] <= 0.975


def test_subset_estimates_match_ppi_mean_on_one_subset(shared_data: Path):
    table = prepare_table(load_casf("thumb_mscoco", shared_data), "auto", progress=False)
    human = np.asarray(table.human["human.human_score"], dtype=float)
    judge = judge_matrix(table)
    one = subset_estimates(human, judge, 0.1, 1, seed=4)
    rng = np.random.default_rng(4)
    order = np.argsort(rng.random((1, human.shape[0])), axis=1)[0]
    lab, unl = order[:50], order[50:]
    estimates = [ppi_mean(human[lab, k], judge[lab, k], judge[unl, k]) for k in range(human.shape[1])]
    truth = human.mean(axis=0)
    covered = np.mean([e.ci_low <= t <= e.ci_high for e, t in zip(estimates, truth, strict=True)])
    assert one["coverage_ppi"] == pytest.approx(covered)
    assert one["lam"] == pytest.approx(np.mean([e.extra["lam"] for e in estimates]))


def test_same_seed_same_numbers(result):
    assert ppi(fast=True, iterations=50).to_json() == ppi(fast=True, iterations=50).to_json()
