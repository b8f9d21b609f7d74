"""Tiny and degenerate inputs for every estimator the report shows: an interval is one a statistician would
sign (finite, of positive width, the estimate strictly inside) or it is refused with a reason that starts
"not enough data" (``extra["no_interval"]``), never a zero-width or lopsided interval that reads as certainty.
Hand-computed cases and reference libraries (krippendorff, pingouin, statsmodels, trueskill) give the values."""

from __future__ import annotations

import math
import re
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pingouin  # GPL: test oracle only
import pytest
import trueskill
from statsmodels.stats.proportion import proportion_confint

from humeval.analysis.describe import describe
from humeval.stats import (
    bradley_terry,
    elo,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    mean_ci,
    paired_bootstrap,
    rank_by_scores,
    sign_test,
    spearman,
    trueskill_ranking,
    wilson_interval,
)
from humeval.stats._bootstrap import percentile_ci, signable
from humeval.stats.spans import error_scores
from humeval.stopping import get_rule


def _signed_or_refused(est: float, lo: float, hi: float, extra: dict) -> bool:
    """The invariant: a reported interval holds its estimate strictly inside; a refused one says why."""
    if math.isnan(lo) and math.isnan(hi):
        return str(extra.get("no_interval", "")).startswith(("not enough data", "no interval"))
    return lo < est < hi and "no_interval" not in extra


def _battles(pairs: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(pairs, columns=["model_a", "model_b", "winner"])


# --------------------------------------------------------------------------- the rule


def test_signable_hand_cases() -> None:
    assert signable(0.5, 0.2, 0.8) is None
    assert "central 95%" in signable(1000.0, 1000.0, 1000.0)  # zero width
    assert "is an end" in signable(0.0, -0.2222, 0.0)  # the estimate at its own end
    assert "is an end" in signable(2.0, 0.0, 1.0)  # outside
    # undefined resamples: 50 of 1000 is 5% (allowed at 95%), 51 is more
    assert signable(0.5, 0.2, 0.8, undefined=50, total=1000) is None
    assert "51 of 1000 resamples" in signable(0.5, 0.2, 0.8, undefined=51, total=1000)
    low, high, n, reason = percentile_ci(np.array([1.0, 1.0, 1.0, np.nan]), 0.95, 1.0)
    assert math.isnan(low) and math.isnan(high) and n == 3 and reason.startswith("not enough data")
    # without an estimate the plain percentile interval (for callers that only want quantiles)
    assert percentile_ci(np.arange(101.0), 0.9)[:3] == pytest.approx((5.0, 95.0, 101))


# --------------------------------------------------------------------------- rankings


def test_bradley_terry_one_one_split_has_no_interval() -> None:
    # theta = 0 by symmetry: both 1000. A resample keeps the split with probability 1/2; the others have no
    # finite ratings (one system never lost), so half the resamples have no value: no interval, not [1000, 1000]
    res = bradley_terry(_battles([("A", "B", "model_a"), ("A", "B", "model_b")]), n_boot=400, seed=1)
    for est in res.scores:
        assert est.estimate == pytest.approx(1000.0)
        assert math.isnan(est.ci_low) and math.isnan(est.ci_high)
        assert "resamples have no value" in est.extra["no_interval"]
    assert res.rank_low == (1, 1) and res.rank_high == (2, 2)  # not separable
    assert 0.4 < res.extra["n_boot_valid"] / 400 < 0.6


def test_bradley_terry_three_one_and_a_real_split() -> None:
    # 3-1: ratings 1000 +- (400 / ln 10) * ln(3) / 2; about 0.75^4 + 0.25^4 = 32% of resamples lose a win or loss
    res = bradley_terry(_battles([("A", "B", "model_a")] * 3 + [("A", "B", "model_b")]), n_boot=400, seed=2)
    half = 400 / math.log(10) * math.log(3) / 2
    assert res.score("A").estimate == pytest.approx(1000 + half) and res.score("B").estimate == pytest.approx(1000 - half)
    assert all("no_interval" in e.extra for e in res.scores)
    # 36-24 over 60 battles: every resample has an MLE; the interval is reported and holds the estimate
    res = bradley_terry(_battles([("A", "B", "model_a")] * 36 + [("A", "B", "model_b")] * 24), n_boot=400, seed=3)
    half = 400 / math.log(10) * math.log(36 / 24) / 2
    a = res.score("A")
    assert a.estimate == pytest.approx(1000 + half) and a.ci_low < a.estimate < a.ci_high
    assert "no_interval" not in a.extra


def test_bradley_terry_near_separation_names_its_cause() -> None:
    # 29 wins and 1 tie: finite ratings only through the tie, theta_A - theta_B = ln(29.5 / 0.5) = ln 59; a resample
    # misses the tie with probability (29/30)^30 = 0.362 and has no MLE (A never lost): near-perfect separation
    res = bradley_terry(_battles([("A", "B", "model_a")] * 29 + [("A", "B", "tie")]), n_boot=1000, seed=0)
    assert res.score("A").estimate - res.score("B").estimate == pytest.approx(400 / math.log(10) * math.log(59))
    assert res.extra["near_separation"] is True
    assert abs(1 - res.extra["n_boot_valid"] / 1000 - (29 / 30) ** 30) < 0.05
    for est in res.scores:
        reason = est.extra["no_interval"]
        assert reason.startswith("not enough data") and "near-perfect separation" in reason
        assert "rest on 1 of 30 battle(s) that the lower-rated system won or tied" in reason
    # a B win instead of the tie: the same cause, one upset counted from the other side of the pair
    flipped = _battles([("B", "A", "model_b")] * 29 + [("B", "A", "model_a")])
    assert "rest on 1 of 30 battle(s)" in bradley_terry(flipped, n_boot=400, seed=0).scores[0].extra["no_interval"]
    # 36-24: every resample has an MLE, no separation
    assert bradley_terry(_battles([("A", "B", "model_a")] * 36 + [("A", "B", "model_b")] * 24), n_boot=200,
                         seed=3).extra["near_separation"] is False


def test_trueskill_interval_is_its_posterior_around_mu() -> None:
    # one battle, A beats B: the package's own update gives mu and sigma; the interval is mu +- z sigma
    res = trueskill_ranking(_battles([("A", "B", "model_a")]), n_boot=20, seed=0, draw_probability=0.1)
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.1, backend=None)
    ra, rb = trueskill.rate_1vs1(env.create_rating(), env.create_rating(), env=env)
    z = 1.959963984540054
    for name, ref in (("A", ra), ("B", rb)):
        est = res.score(name)
        assert est.estimate == pytest.approx(ref.mu, abs=1e-12) and est.extra["sigma"] == pytest.approx(ref.sigma)
        assert (est.ci_low, est.ci_high) == pytest.approx((ref.mu - z * ref.sigma, ref.mu + z * ref.sigma))
        assert est.estimate - est.ci_low == pytest.approx(est.ci_high - est.estimate)  # centred, not lopsided


def test_trueskill_interval_is_centred_on_skewed_data() -> None:
    rng = np.random.default_rng(4)
    battles = _battles([("A", "B", "model_a" if rng.random() < 0.8 else "model_b") for _ in range(30)]
                       + [("B", "C", "model_a" if rng.random() < 0.55 else "model_b") for _ in range(30)])
    for est in trueskill_ranking(battles, n_boot=10, seed=1).scores:
        assert est.ci_low < est.estimate < est.ci_high
        assert est.estimate - est.ci_low == pytest.approx(est.ci_high - est.estimate)


def test_elo_after_one_battle_has_no_interval() -> None:
    # hand: E_a = 1/2, A += 4 * (1 - 1/2) = 1002, B = 998; every resample is that battle: zero width
    res = elo(_battles([("A", "B", "model_a")]), n_boot=200, seed=1)
    assert res.score("A").estimate == pytest.approx(1002.0) and res.score("B").estimate == pytest.approx(998.0)
    assert all(math.isnan(e.ci_low) and "central 95%" in e.extra["no_interval"] for e in res.scores)


def test_rank_by_scores_without_spread_has_no_interval() -> None:
    res = rank_by_scores({"A": [4.0, 4.0], "B": [2.0, 3.0]}, n_boot=300, seed=1)
    a, b = res.score("A"), res.score("B")
    assert a.estimate == 4.0 and math.isnan(a.ci_low) and "central 95%" in a.extra["no_interval"]
    assert b.estimate == 2.5 and _signed_or_refused(b.estimate, b.ci_low, b.ci_high, dict(b.extra))


# --------------------------------------------------------------------------- agreement


def test_krippendorff_alpha_at_the_end_of_its_interval_is_refused() -> None:
    data = np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 1.0], [2.0, 2.0, 1.0]])
    est = krippendorff_alpha(data, "nominal", n_boot=1000, seed=0)
    assert est.estimate == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert est.estimate == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(est.ci_low) and "is an end of its bootstrap interval" in est.extra["no_interval"]


def test_krippendorff_alpha_keeps_its_interval_with_enough_items() -> None:
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, size=60).astype(float)
    data = np.vstack([np.clip(truth + rng.integers(-1, 2, size=60), 1, 5) for _ in range(3)])
    est = krippendorff_alpha(data, "interval", n_boot=500, seed=1)
    assert est.estimate == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
    assert est.ci_low < est.estimate < est.ci_high and "no_interval" not in est.extra


def test_fleiss_kappa_tiny_inputs() -> None:
    # 3 items, 2 raters, a table of counts per category: item 1 agrees on 0, items 2 and 3 disagree
    est = fleiss_kappa(np.array([[2, 0], [1, 1], [1, 1]]), n_boot=500, seed=1)
    # hand: P_i = 1, 0, 0 -> P_bar = 1/3; p_j = 4/6, 2/6 -> P_e = 5/9; kappa = (1/3 - 5/9) / (4/9) = -0.5
    assert est.estimate == pytest.approx(-0.5)
    assert _signed_or_refused(est.estimate, est.ci_low, est.ci_high, dict(est.extra))


def test_icc_perfect_consistency_says_why_there_is_no_interval() -> None:
    est = icc(np.array([[1.0, 1.0], [3.0, 3.0], [5.0, 5.0]]), "1,1")
    assert est.estimate == 1.0 and math.isnan(est.ci_low) and est.extra["no_interval"].startswith("no interval")


def test_icc_two_items_matches_pingouin() -> None:
    x = np.array([[1.0, 2.0], [4.0, 4.0], [2.0, 3.0]])
    ours = icc(x, "1,1")
    long = pd.DataFrame([{"item": i, "rater": j, "score": x[i, j]} for i in range(3) for j in range(2)])
    with warnings.catch_warnings():  # the oracle's own pandas deprecation warnings
        warnings.simplefilter("ignore")
        ref = pingouin.intraclass_corr(long, targets="item", raters="rater", ratings="score").set_index("Type")
    row = ref.loc["ICC(1,1)"] if "ICC(1,1)" in ref.index else ref.loc["ICC1"]  # the label changed across versions
    assert ours.estimate == pytest.approx(row["ICC"])
    assert (ours.ci_low, ours.ci_high) == pytest.approx(tuple(row["CI95%"] if "CI95%" in row else row["CI95"]), abs=0.005)  # pingouin rounds
    assert ours.ci_low < ours.estimate < ours.ci_high


# --------------------------------------------------------------------------- means, tests, correlations, spans


def test_means_tiny_and_constant() -> None:
    for values, clusters in (([3.0, 3.0, 3.0], None), ([2.0], None), ([1.0, 5.0], ["i", "i"])):
        est = mean_ci(np.array(values), None if clusters is None else np.array(clusters), n_boot=200)
        assert math.isnan(est.ci_low) and est.extra["no_interval"].startswith("not enough data")
    rng = np.random.default_rng(3)
    for n in range(2, 8):  # tiny samples on a 5-point scale: signed or refused, never lopsided
        for seed in range(20):
            x = rng.integers(1, 6, size=n).astype(float)
            est = mean_ci(x, n_boot=300, seed=seed)
            assert _signed_or_refused(est.estimate, est.ci_low, est.ci_high, dict(est.extra)), (x, est)


def test_describe_t_interval_without_spread() -> None:
    frame = pd.DataFrame({"system": ["A"] * 3 + ["B"] * 3, "item_id": list("abcabc"),
                          "score": [2.0, 2.0, 2.0, 1.0, 2.0, 3.0]})
    a, b = describe(frame, ["A", "B"], 0.05, bounds=None)
    assert a["ci_low"] != a["ci_low"] and "all 3 scores are 2" in a["no_interval"]  # NaN, with the reason
    # hand: mean 2, s = 1, t(0.975, 2) = 4.302653 -> 2 +- 4.302653 / sqrt(3)
    assert (b["ci_low"], b["ci_high"]) == pytest.approx((2 - 4.302653 / math.sqrt(3), 2 + 4.302653 / math.sqrt(3)))


def test_paired_bootstrap_of_equal_systems_has_no_interval() -> None:
    est = paired_bootstrap([3.0, 4.0, 5.0], [3.0, 4.0, 5.0], n_boot=200, seed=1)
    assert est.estimate == 0.0 and est.p_value == 1.0 and math.isnan(est.ci_low)
    assert "central 95%" in est.extra["no_interval"]


def test_bootstrap_correlation_of_a_perfect_order_has_no_interval() -> None:
    est = spearman([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 4.0, 6.0, 8.0, 10.0], ci="bootstrap", n_boot=200, seed=1)
    assert est.estimate == pytest.approx(1.0) and math.isnan(est.ci_low) and "no_interval" in est.extra


def test_error_scores_without_errors_have_no_interval() -> None:
    frame = pd.DataFrame({"participant_id": ["p1", "p2"], "item_id": ["i1", "i2"], "system": ["A", "A"],
                          "value": [90.0, 80.0], "spans": ["[]", "[]"]})
    [row] = error_scores(frame, ["A"], seed=1, n_boot=200)
    assert row["weighted"].estimate == 0.0 and math.isnan(row["weighted"].ci_low)
    assert row["weighted"].extra["no_interval"].startswith("not enough data")


# --------------------------------------------------------------------------- proportions


@pytest.mark.parametrize(("s", "n"), [(0, 1), (1, 1), (1, 2), (0, 10), (10, 10), (7, 10), (3, 47)])
def test_wilson_matches_statsmodels_and_stays_in_0_1(s: int, n: int) -> None:
    lo, hi = wilson_interval(s, n)
    ref = proportion_confint(s, n, alpha=0.05, method="wilson")
    assert (lo, hi) == pytest.approx(ref, abs=1e-12)
    assert 0.0 <= lo <= s / n <= hi <= 1.0


def test_sign_test_one_judgement_is_clopper_pearson() -> None:
    est = sign_test(1, 0)
    assert (est.ci_low, est.ci_high) == pytest.approx(proportion_confint(1, 1, alpha=0.05, method="beta"))


def test_live_rule_reason_has_no_bound_outside_0_1() -> None:
    rule = get_rule("anytime", delta=0.05)
    rule.update(1)
    reason = rule.update(0).reason  # 1/2: the old reason printed "within (-0.500, 1.500)"
    assert reason.startswith("1/2 = 0.500 for A (95% Wilson interval 0.095 to 0.905)")
    assert all(0.0 <= float(v) <= 1.0 for v in re.findall(r"\d+\.\d+", reason))


def test_ppi_without_spread_has_no_interval() -> None:
    from humeval.stats import ppi_mean

    est = ppi_mean([3.0, 3.0, 3.0], [3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0])
    assert est.estimate == pytest.approx(3.0) and math.isnan(est.ci_low) and math.isnan(est.ci_high)
    assert est.extra["no_interval"].startswith("not enough data")


def test_trueskill_does_not_rank_two_systems_apart_after_one_battle() -> None:
    # every resample of one battle is that battle: the resampled ranks never move, the posteriors overlap widely
    res = trueskill_ranking(_battles([("A", "B", "model_a")]), n_boot=20, seed=0)
    assert res.rank_low == (1, 1) and res.rank_high == (2, 2) and res.label() == "1.-2. A + B"
    # 60 one-sided battles: posteriors apart, resampled ranks fixed: separated
    res = trueskill_ranking(_battles([("A", "B", "model_a")] * 60), n_boot=20, seed=0)
    assert res.label() == "1. A; 2. B"
