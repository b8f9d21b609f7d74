"""Style control (contextual Bradley-Terry) against statsmodels' Logit, a saturated hand case and plain BT."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from humeval.errors import DataError
from humeval.stats import bradley_terry
from humeval.stats.style import style_control, style_counts, style_covariates


def _planted(n: int = 3000, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """Battles of 4 systems whose winner depends on the strengths and on two covariates (gamma 0.8, -0.3)."""
    rng = np.random.default_rng(seed)
    theta = np.array([0.6, 0.2, -0.1, -0.7])
    gamma = np.array([0.8, -0.3])
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    z = rng.normal(size=(n, 2))
    p = 1 / (1 + np.exp(-(theta[a] - theta[b] + z @ gamma)))
    u = rng.random(n)
    winner = np.where(u < 0.1, "tie", np.where(rng.random(n) < p, "model_a", "model_b"))
    names = np.array(list("ABCD"))
    battles = pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})
    return battles, pd.DataFrame(z, columns=["length", "bold"]), theta, gamma


def test_matches_statsmodels_logit() -> None:
    sm = pytest.importorskip("statsmodels.api")
    battles, z, _, _ = _planted()
    fit = style_control(battles, z, n_boot=0)
    decisive = battles["winner"] != "tie"
    bt, zz = battles[decisive], z[decisive].to_numpy()
    zz = (zz - zz.mean(axis=0)) / zz.std(axis=0)
    x = np.zeros((len(bt), 3))
    for j, s in enumerate("BCD"):  # A is the reference (theta_A = 0)
        x[:, j] = (bt["model_a"] == s).to_numpy(float) - (bt["model_b"] == s).to_numpy(float)
    ref = sm.Logit((bt["winner"] == "model_a").to_numpy(float), np.column_stack([x, zz])).fit(disp=0, tol=1e-12)
    theta_ref = np.concatenate([[0.0], ref.params[:3]])
    theta_ref -= theta_ref.mean()
    got = np.array([fit.ranking.score(s).extra["theta"] for s in "ABCD"])
    np.testing.assert_allclose(got, theta_ref, atol=1e-7)
    np.testing.assert_allclose([fit.coefficients["length"].estimate, fit.coefficients["bold"].estimate],
                               ref.params[3:], atol=1e-7)
    assert fit.n == int(decisive.sum()) and fit.ranking.systems == ("A", "B", "C", "D")


def test_recovers_planted_effects_with_intervals() -> None:
    battles, z, theta, gamma = _planted(n=6000, seed=3)
    fit = style_control(battles, z, standardise=False, n_boot=200, seed=5)
    for name, g in zip(["length", "bold"], gamma, strict=True):
        c = fit.coefficients[name]
        assert c.ci_low < g < c.ci_high
    est = np.array([fit.ranking.score(s).extra["theta"] for s in "ABCD"])
    assert np.abs(est - (theta - theta.mean())).max() < 0.12
    again = style_control(battles, z, standardise=False, n_boot=200, seed=5)
    assert again.ranking == fit.ranking and dict(again.coefficients) == dict(fit.coefficients)
    assert fit.extra["seed"] == 5 and fit.extra["n_boot_valid"] == 200


def test_saturated_hand_case() -> None:
    # logit p = d + g z with z = +-1: d + g = logit(9/12) = ln 3, d - g = logit(4/12) = -ln 2
    battles = pd.DataFrame({"model_a": ["A"] * 24, "model_b": ["B"] * 24,
                            "winner": ["model_a"] * 9 + ["model_b"] * 3 + ["model_a"] * 4 + ["model_b"] * 8})
    z = pd.DataFrame({"length": [1.0] * 12 + [-1.0] * 12})
    fit = style_control(battles, z, standardise=False, n_boot=0)
    d = (math.log(3) - math.log(2)) / 2
    g = (math.log(3) + math.log(2)) / 2
    assert fit.coefficients["length"].estimate == pytest.approx(g, abs=1e-9)
    diff = fit.ranking.score("A").extra["theta"] - fit.ranking.score("B").extra["theta"]
    assert diff == pytest.approx(d, abs=1e-9)


def test_without_style_it_is_bradley_terry_on_decisive_votes() -> None:
    battles, _, _, _ = _planted(n=800, seed=2)
    fit = style_control(battles, pd.DataFrame(index=battles.index), n_boot=0)
    plain = bradley_terry(battles[battles["winner"] != "tie"], n_boot=0)
    for s in "ABCD":
        assert fit.ranking.score(s).estimate == pytest.approx(plain.score(s).estimate, abs=1e-6)


def test_constant_covariate_is_dropped() -> None:
    battles, z, _, _ = _planted(n=500)
    fit = style_control(battles, z.assign(headers=0.0), n_boot=0)
    assert fit.extra["dropped"] == ["headers"] and set(fit.coefficients) == {"length", "bold"}


def test_refusals() -> None:
    battles, z, _, _ = _planted(n=100)
    with pytest.raises(DataError, match="one row per battle"):
        style_control(battles, z.iloc[:5])
    with pytest.raises(DataError, match="not finite"):
        style_control(battles, z.assign(length=np.nan))
    one_sided = pd.DataFrame({"model_a": ["A", "A"], "model_b": ["B", "B"], "winner": ["model_a", "model_a"]})
    with pytest.raises(DataError, match="cannot all be compared"):
        style_control(one_sided, pd.DataFrame({"length": [0.1, 0.2]}))


def test_features_by_hand() -> None:
    text = "## Plan\n\n1. first **step**\n2. second\n- a __note__\nnot # a header\n"
    assert style_counts([text]).tolist() == [[len(text), 1.0, 3.0, 2.0]]
    cov = style_covariates(["abcd", "", "**x**"], ["ab", "", "y"])
    assert cov["length"].round(6).tolist() == [round(2 / 6, 6), 0.0, round(4 / 6, 6)]
    assert cov["bold"].tolist() == [0.0, 0.0, 1.0]
