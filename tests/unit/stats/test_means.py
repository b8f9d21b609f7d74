"""mean_ci: a BCa bootstrap over items, checked against scipy.stats.bootstrap and by coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from humeval.stats.means import mean_ci


def test_matches_scipy_bca_on_one_judgement_per_item() -> None:
    rng = np.random.default_rng(0)
    for probs in ([0.05, 0.1, 0.2, 0.3, 0.35], [0.0, 0.02, 0.05, 0.2, 0.73]):
        x = rng.choice(np.arange(1, 6), size=60, p=probs).astype(float)
        ours = mean_ci(x, n_boot=40_000, seed=1)
        ref = sps.bootstrap((x,), np.mean, method="BCa", n_resamples=40_000, random_state=2).confidence_interval
        assert ours.estimate == pytest.approx(x.mean())
        # Monte Carlo error of a 2.5 % quantile of 40,000 resamples, plus the 1/60 grid of possible means
        assert ours.ci_low == pytest.approx(ref.low, abs=0.035) and ours.ci_high == pytest.approx(ref.high, abs=0.035)
        assert ours.method == "mean, BCa bootstrap over items"


def test_hand_cases() -> None:
    same = mean_ci(np.array([3.0, 3.0, 3.0]))  # no spread: no interval, not a zero-width one
    assert same.estimate == 3.0 and math.isnan(same.ci_low) and math.isnan(same.ci_high)
    assert same.extra["no_interval"].startswith("not enough data: all 3 answers are 3")
    one = mean_ci(np.array([2.0]))
    assert one.estimate == 2.0 and math.isnan(one.ci_low)
    one_item = mean_ci(np.array([1.0, 5.0]), np.array(["i", "i"]))  # one cluster: nothing to resample
    assert one_item.estimate == 3.0 and math.isnan(one_item.ci_high)
    # seeded: the same seed gives the same interval
    x = np.array([1.0, 2.0, 2.0, 5.0, 4.0, 3.0])
    assert mean_ci(x, seed=7) == mean_ci(x, seed=7)


def test_coverage_near_the_top_of_a_likert_scale() -> None:
    # 5-point answers piled at 5 (true mean 4.64), 20 items: the t interval leaves the scale in most studies and
    # covers about 84 %; the BCa interval stays on the scale and covers close to 95 %
    rng = np.random.default_rng(11)
    p = np.array([0.0, 0.02, 0.05, 0.2, 0.73])
    mu = float((np.arange(1, 6) * p).sum())
    runs, hit, inside, t_hit, t_out = 300, 0, 0, 0, 0
    for r in range(runs):
        x = rng.choice(np.arange(1, 6), size=20, p=p).astype(float)
        e = mean_ci(x, n_boot=1000, seed=r)
        hit += e.ci_low <= mu <= e.ci_high
        # a study whose 20 answers are all 5 gets no interval (not a zero-width one): it cannot leave the scale
        inside += math.isnan(e.ci_low) or (1.0 <= e.ci_low and e.ci_high <= 5.0)
        half = sps.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
        t_hit += x.mean() - half <= mu <= x.mean() + half
        t_out += x.mean() + half > 5.0
    print(f"\n300 studies, n = 20, true mean {mu:.2f}: BCa covers {hit / runs:.3f} (all on the scale); "
          f"t covers {t_hit / runs:.3f} and leaves the scale in {t_out / runs:.3f}")
    assert inside == runs
    assert hit / runs >= 0.89  # 95 % nominal; 300 runs give a standard error of 1.3 points
    assert t_hit < hit
