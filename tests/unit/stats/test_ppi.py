"""Prediction-powered inference: against ppi-python, hand-computed cases, and coverage in simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import t as sps_t

from humeval.errors import DataError
from humeval.stats import ppi_active_mean, ppi_difference, ppi_mean, ppi_mean_arrays, ppi_win_rate


def _data(rng: np.random.Generator, n: int, big_n: int, noise: float, bias: float = 0.4):
    """Human scores and a judge that sees them with noise and a constant bias."""
    truth = rng.normal(3.0, 1.0, n + big_n)
    judge = truth + bias + rng.normal(0, noise, n + big_n)
    return truth[:n], judge[:n], judge[n:], truth


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.3])
def test_matches_ppi_python(lam):
    ppi_py = pytest.importorskip("ppi_py")
    y, yhat, yhat_u, _ = _data(np.random.default_rng(1), 80, 900, noise=0.5)
    ours = ppi_mean(y, yhat, yhat_u, confidence_level=0.9, lam=lam)
    assert ours.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)[0]), abs=1e-10)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, lam=lam)
    assert (ours.ci_low, ours.ci_high) == (pytest.approx(float(lo[0]), abs=1e-10), pytest.approx(float(hi[0]), abs=1e-10))


def test_hand_computed_case():
    # y = [1, 2, 3], yhat = [2, 2, 4], yhat_u = [3, 5]; lam = 1:
    # estimate = mean(yhat_u) + mean(y - yhat) = 4 + (-1 + 0 - 1)/3 = 10/3
    # var = var0(yhat_u)/2 + var0(y - yhat)/3 = 1/2 + (2/9)/3 = 0.5 + 2/27
    r = ppi_mean([1, 2, 3], [2, 2, 4], [3, 5], lam=1.0)
    assert r.estimate == pytest.approx(10 / 3)
    half = 1.959963984540054 * np.sqrt(0.5 + 2 / 27)
    assert (r.ci_low, r.ci_high) == (pytest.approx(10 / 3 - half), pytest.approx(10 / 3 + half))
    # lam = 0 is the human-only mean with its normal interval
    h = ppi_mean([1, 2, 3], [2, 2, 4], [3, 5], lam=0.0)
    assert h.estimate == 2.0 and h.ci_low == pytest.approx(h.extra["human_ci_low"])
    # tuned lam: cov0(y, yhat) = 2/3; var1 of the pooled judge scores [2, 2, 4, 3, 5] = 1.7; 1 + n/N = 2.5
    assert ppi_mean([1, 2, 3], [2, 2, 4], [3, 5]).extra["lam"] == pytest.approx((2 / 3) / (2.5 * 1.7))


def test_an_informative_judge_narrows_the_interval_and_a_useless_one_costs_nothing():
    rng = np.random.default_rng(2)
    y, yhat, yhat_u, _ = _data(rng, 60, 2000, noise=0.3)
    good = ppi_mean(y, yhat, yhat_u)
    width_h = good.extra["human_ci_high"] - good.extra["human_ci_low"]
    assert good.ci_high - good.ci_low < 0.5 * width_h and good.extra["effective_n"] > 3 * 60
    useless = ppi_mean(y, rng.normal(0, 1, 60), rng.normal(0, 1, 2000))
    assert useless.extra["lam"] < 0.2
    assert useless.ci_high - useless.ci_low < 1.05 * width_h


@pytest.mark.parametrize("noise", [0.3, 3.0])
def test_coverage_of_the_95_percent_interval(noise):
    """1,000 studies of 50 labelled and 500 unlabelled items: the interval covers the true mean 93-97 %."""
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(1000):
        y, yhat, yhat_u, _ = _data(rng, 50, 500, noise=noise, bias=0.8)
        r = ppi_mean(y, yhat, yhat_u)
        hits += r.ci_low <= 3.0 <= r.ci_high  # the population mean of the human score
    assert 0.93 <= hits / 1000 <= 0.97


def test_win_rate_and_difference():
    rng = np.random.default_rng(4)
    human = rng.choice([0.0, 0.5, 1.0], p=[0.3, 0.1, 0.6], size=100)
    judge = np.where(rng.random(100) < 0.8, human, 1 - human)
    judge_u = rng.choice([0.0, 0.5, 1.0], p=[0.3, 0.1, 0.6], size=1000)
    w = ppi_win_rate(human, judge, judge_u, lam=1.0)
    assert w.estimate == pytest.approx(judge_u.mean() + (human - judge).mean())
    assert w.extra["human_only"] == pytest.approx(human.mean()) and w.method == "ppi win rate (lam=1)"
    centred = ppi_mean(human - 0.5, judge - 0.5, judge_u - 0.5, lam=1.0)
    assert w.p_value == pytest.approx(centred.p_value)
    with pytest.raises(DataError, match="0.5 \\(tie\\) or a share"):
        ppi_win_rate([1, 2], [1, 0], [1])
    a, b = rng.normal(3, 1, 40), rng.normal(2.5, 1, 40)
    fa, fb = rng.normal(3, 1, 400), rng.normal(2.5, 1, 400)
    d = ppi_difference(a, b, a + 0.1, b, fa, fb)
    assert d.estimate == pytest.approx(ppi_mean(a - b, a + 0.1 - b, fa - fb).estimate)
    with pytest.raises(DataError, match="same items"):
        ppi_difference(a, b[:3], a, b, fa, fb)


def test_active_mean_hand_computed_and_unbiased():
    # three items, the first two labelled with probability 0.5 and 1, the third not (probability 0.25)
    # lam = 1: terms = yhat + (y - yhat) * xi / pi = [1 + (2 - 1)/0.5, 3 + (2 - 3)/1, 4] = [3, 2, 4]
    r = ppi_active_mean([2, 2, np.nan], [1, 3, 4], [True, True, False], [0.5, 1.0, 0.25], lam=1.0)
    assert r.estimate == pytest.approx(3.0)
    assert r.ci_high - r.ci_low == pytest.approx(2 * 1.959963984540054 * np.std([3, 2, 4]) / np.sqrt(3))
    # unlabelled items need no label; probabilities must be positive
    with pytest.raises(DataError, match="probability"):
        ppi_active_mean([1, 2, 3], [1, 2, 3], [True, True, False], [0.5, 0.5, 0.0])
    # coverage with probabilities that favour items the judge finds hard
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(1000):
        truth = rng.normal(3.0, 1.0, 400)
        hard = rng.random(400) < 0.3
        judge = truth + 0.5 + rng.normal(0, np.where(hard, 2.0, 0.2))
        pi = np.where(hard, 0.5, 0.05)
        xi = rng.random(400) < pi
        r = ppi_active_mean(np.where(xi, truth, np.nan), judge, xi, pi)
        hits += r.ci_low <= 3.0 <= r.ci_high
    assert 0.93 <= hits / 1000 <= 0.97


def test_bad_input_is_named():
    with pytest.raises(DataError, match="same labelled items"):
        ppi_mean([1, 2, 3], [1, 2], [1])
    with pytest.raises(DataError, match="lam must lie"):
        ppi_mean([1, 2, 3], [1, 2, 3], [1], lam=2)
    with pytest.raises(DataError, match="at least 2 labelled"):
        ppi_mean([1], [1], [1])


@pytest.mark.parametrize("lam", [None, 0.5])
def test_arrays_solve_many_problems_as_ppi_mean_solves_one(lam):
    rng = np.random.default_rng(6)
    y, yhat, yhat_u = rng.normal(size=(4, 3, 30)), rng.normal(size=(4, 3, 30)), rng.normal(size=(4, 3, 200))
    yhat += y  # an informative judge
    many = ppi_mean_arrays(y, yhat, yhat_u, confidence_level=0.9, lam=lam)
    for i in range(4):
        for k in range(3):
            one = ppi_mean(y[i, k], yhat[i, k], yhat_u[i, k], confidence_level=0.9, lam=lam)
            assert many["estimate"][i, k] == pytest.approx(one.estimate, abs=1e-12)
            assert many["ci_low"][i, k] == pytest.approx(one.ci_low, abs=1e-12)
            assert many["lam"][i, k] == pytest.approx(one.extra["lam"], abs=1e-12)
            assert many["human_ci_high"][i, k] == pytest.approx(one.extra["human_ci_high"], abs=1e-12)
    with pytest.raises(DataError, match="same leading axes"):
        ppi_mean_arrays(y, yhat, yhat_u[:2])


def _bertscore_case(seed: int = 3):
    """Human 1-5 ratings and a judge on a raw-metric scale (0.85-0.9, as raw BERTScore), 200 of 2,000 items labelled."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, 1, 2000)
    human = np.clip(np.round(3 + 0.9 * quality + rng.normal(0, 0.6, 2000)), 1, 5)
    metric = 0.875 + 0.008 * quality + rng.normal(0, 0.005, 2000)
    return human[:200], metric[:200], metric[200:]


def test_a_judge_on_another_scale_loses_its_gain_unless_calibrated():
    y, f, fu = _bertscore_case()
    n, big_n = y.size, fu.size
    # the unclipped PPI++ weight and interval, by hand from the module formulas (an independent path)
    lam = np.mean((y - y.mean()) * (f - f.mean())) / ((1 + n / big_n) * np.var(np.r_[f, fu], ddof=1))
    assert lam > 20  # the weight the raw scale asks for
    var = lam**2 * np.var(fu) / big_n + np.var(y - lam * f) / n
    est = lam * fu.mean() + np.mean(y - lam * f)
    human_width = 2 * 1.959963984540054 * np.std(y) / np.sqrt(n)
    raw = ppi_mean(y, f, fu)
    assert raw.extra["lam"] == 1.0  # clipped
    assert (raw.ci_high - raw.ci_low) / human_width > 0.99  # the gain is gone
    assert "another scale" in raw.extra["warning"] and raw.extra["scale_ratio"] < 0.05
    cal = ppi_mean(y, f, fu, calibrate=True)
    assert "warning" not in cal.extra
    assert cal.extra["lam"] < 1  # nothing clipped: lam * slope is the unclipped weight
    assert cal.extra["lam"] * cal.extra["calibration_slope"] == pytest.approx(lam, rel=1e-9)
    assert cal.estimate == pytest.approx(est, rel=1e-12)
    # the interval counts the line's two parameters (test below), so it is a little wider than the plug-in PPI++ one
    plug_in = 2 * 1.959963984540054 * np.sqrt(var)
    assert plug_in < cal.ci_high - cal.ci_low < 1.05 * plug_in
    assert (cal.ci_high - cal.ci_low) / human_width < 0.85


def _hc2_reference(y, f, fu, lam):
    """The calibrated interval by an independent path: statsmodels' HC2 standard error of the fitted line at
    x0 = (1 - lam) mean(f) + lam mean(fu), the judge's sampling term, and the Bell-McCaffrey degrees of freedom from
    the dense n x n matrices."""
    sm = pytest.importorskip("statsmodels.api")
    n, big_n = y.size, fu.size
    x = sm.add_constant(f)
    fit = sm.OLS(y, x).fit(cov_type="HC2")
    x0 = (1 - lam) * f.mean() + lam * fu.mean()
    se_line = float(fit.get_prediction(np.array([[1.0, x0]])).se_mean[0])
    slope = fit.params[1]
    judge_var = slope**2 * np.var(np.r_[f, fu], ddof=1) * ((1 - lam) ** 2 / n + lam**2 / big_n)
    hat = x @ np.linalg.inv(x.T @ x) @ x.T
    m = np.eye(n) - hat
    a = np.linalg.solve(x.T @ x, np.array([1.0, x0])) @ x.T  # the line at x0 as weights on y
    d = np.diag(a**2 / (1 - np.diag(hat)))
    df = np.trace(d @ m) ** 2 / np.trace(d @ m @ d @ m)
    return fit.params[0] + slope * x0, np.sqrt(se_line**2 + judge_var), df


@pytest.mark.parametrize("n", [5, 20, 200])
def test_calibrated_interval_counts_the_fitted_line(n):
    rng = np.random.default_rng(n)
    q = rng.standard_normal(n + 400)
    y = np.clip(np.round(3 + q), 1, 5)  # heteroscedastic around the line: HC2, not the pooled residual variance
    f = 0.87 + 0.02 * (0.7 * q + 0.7 * rng.standard_normal(q.size))
    r = ppi_mean(y[:n], f[:n], f[n:], calibrate=True, confidence_level=0.9)
    est, se, df = _hc2_reference(y[:n], f[:n], f[n:], r.extra["lam"])
    assert r.estimate == pytest.approx(est, rel=1e-10)
    assert r.extra["df"] == pytest.approx(df, rel=1e-9)
    half = float(sps_t.ppf(0.95, df)) * se
    assert (r.ci_low, r.ci_high) == (pytest.approx(est - half, rel=1e-9), pytest.approx(est + half, rel=1e-9))
    # the arrays path gives the same interval
    out = ppi_mean_arrays(y[None, :n], f[None, :n], f[None, n:], calibrate=True, confidence_level=0.9)
    assert out["ci_low"][0] == pytest.approx(r.ci_low, rel=1e-12)


def test_calibrated_constant_judge_gives_the_t_interval_of_the_mean():
    y = np.array([2.0, 4.0, 3.0, 5.0, 1.0])
    r = ppi_mean(y, np.full(5, 0.9), np.array([0.9, 0.9, 0.9]), calibrate=True)
    half = float(sps_t.ppf(0.975, 4)) * np.std(y, ddof=1) / np.sqrt(5)  # the one-sample t interval, the line's one parameter
    assert r.estimate == 3.0 and r.extra["df"] == pytest.approx(4.0)
    assert (r.ci_low, r.ci_high) == (pytest.approx(3 - half), pytest.approx(3 + half))


def test_calibration_needs_three_labels():
    with pytest.raises(DataError, match="at least 3"):
        ppi_mean([1.0, 2.0], [0.5, 0.7], [0.6, 0.8], calibrate=True)
    with pytest.raises(DataError, match="at least 3"):
        ppi_mean_arrays(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 3)), calibrate=True)


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_calibrated_coverage_at_twenty_labels(rho):
    # the reported case: n = 20 labelled of 2,000 judged items, the slope fitted on the labels it corrects with;
    # counting the fit (HC2, Bell-McCaffrey df, the judge's variance over every item) gives 95 %, not 0.905-0.919
    from scipy import stats as sps

    rng = np.random.default_rng([43, round(rho * 10)])
    runs, n, items = 2000, 20, 2000
    q = rng.standard_normal((runs, items))
    judge = 0.87 + 0.02 * (rho * q + np.sqrt(1 - rho**2) * rng.standard_normal(q.shape))
    out = ppi_mean_arrays(3 + q[:, :n], judge[:, :n], judge[:, n:], calibrate=True)
    hits = int(np.sum((out["ci_low"] <= 3) & (3 <= out["ci_high"])))
    low, high = sps.binom.ppf([0.0005, 0.9995], runs, 0.95)  # a two-sided 99.9 % binomial band around 0.95
    assert low <= hits <= high, hits / runs


def test_calibration_is_the_least_squares_line():
    y, f, fu = _bertscore_case(5)
    slope, intercept = np.polyfit(f, y, 1)
    r = ppi_mean(y, f, fu, calibrate=True)
    assert r.extra["calibration_slope"] == pytest.approx(slope, rel=1e-8)
    assert r.extra["calibration_intercept"] == pytest.approx(intercept, rel=1e-8)
    # a constant judge: slope 0, lam 0, the human-only mean
    flat = ppi_mean(y, np.full(y.size, 0.9), fu, calibrate=True)
    assert flat.estimate == pytest.approx(y.mean()) and flat.extra["calibration_slope"] == 0.0


def test_calibrated_arrays_match_ppi_mean_problem_by_problem():
    rng = np.random.default_rng(8)
    y = rng.normal(3, 1, (4, 30))
    f = 0.8 + 0.01 * y + rng.normal(0, 0.01, y.shape)
    fu = 0.8 + 0.01 * rng.normal(3, 1, (4, 90))
    out = ppi_mean_arrays(y, f, fu, calibrate=True)
    for i in range(4):
        one = ppi_mean(y[i], f[i], fu[i], calibrate=True)
        assert out["estimate"][i] == pytest.approx(one.estimate, abs=1e-12)
        assert out["ci_low"][i] == pytest.approx(one.ci_low, abs=1e-12)
        assert out["lam"][i] == pytest.approx(one.extra["lam"], abs=1e-12)


def test_calibrated_coverage_with_few_labels():
    # the slope is fitted on the labels it corrects with: coverage at n = 50 must still hold (400 runs)
    from scipy import stats as sps

    rng = np.random.default_rng(21)
    runs, n, big_n = 400, 50, 500
    q = rng.standard_normal((runs, n + big_n))
    judge = 0.87 + 0.02 * (0.7 * q + np.sqrt(1 - 0.49) * rng.standard_normal(q.shape))
    out = ppi_mean_arrays(3 + q[:, :n], judge[:, :n], judge[:, n:], calibrate=True)
    hits = int(np.sum((out["ci_low"] <= 3) & (3 <= out["ci_high"])))
    low, high = sps.binom.ppf([0.0005, 0.9995], runs, 0.95)  # a two-sided 99.9% binomial band around 0.95
    assert low <= hits <= high, hits / runs


def test_labels_needed_hand_computed_and_simulated():
    from humeval.stats import ppi_labels_needed

    # rho = 0.8, n_h = 100, T = 1000: 100 * 0.36 / (1 - 0.64 * 0.1) = 36 / 0.936
    assert float(ppi_labels_needed(0.8, 100, 1000)) == pytest.approx(36 / 0.936)
    assert float(ppi_labels_needed(0.0, 100, 1000)) == 100.0  # a useless judge saves nothing
    assert float(ppi_labels_needed(0.7, 100, 1e12)) == pytest.approx(100 * 0.51)  # unlimited judged items
    assert np.isinf(ppi_labels_needed(1.0, 2000, 1000))
    # simulated: n labelled of T, the calibrated PPI++ variance against the human-only one at n_h labels
    rng = np.random.default_rng(4)
    rho, big_t, n_h = 0.8, 2000, 300  # n = 119 labels: the tuning's O(1/n) excess variance stays small
    n = round(float(ppi_labels_needed(rho, n_h, big_t)))
    q = rng.standard_normal((1500, big_t))
    judge = 5 + 2 * (rho * q + np.sqrt(1 - rho**2) * rng.standard_normal(q.shape))
    out = ppi_mean_arrays(q[:, :n], judge[:, :n], judge[:, n:], calibrate=True)
    assert np.var(out["estimate"]) == pytest.approx(1 / n_h, rel=0.1)


def test_a_weak_judge_on_another_scale_the_reported_case():
    # raw BERTScore-like scores (0.83-0.92) of a judge with rho ~ 0.38 against 1-5 ratings, 200 of 2,000 labelled:
    # the tuned weight (~25) is clipped to 1 and the width ratio stays ~0.996; calibrated it is ~0.94
    rng = np.random.default_rng(0)
    q = rng.normal(0, 1, 2000)
    human = np.clip(np.round(3 + q), 1, 5)
    metric = 0.875 + 0.0125 * (0.4 * q + np.sqrt(1 - 0.16) * rng.normal(0, 1, 2000))
    raw = ppi_mean(human[:200], metric[:200], metric[200:])
    cal = ppi_mean(human[:200], metric[:200], metric[200:], calibrate=True)
    human_width = raw.extra["human_ci_high"] - raw.extra["human_ci_low"]
    assert raw.extra["lam"] == 1.0 and cal.extra["lam"] * cal.extra["calibration_slope"] > 20
    assert (raw.ci_high - raw.ci_low) / human_width > 0.99
    assert 0.92 < (cal.ci_high - cal.ci_low) / human_width < 0.96
