"""Davidson's Bradley-Terry model with ties against scipy's optimiser and the two-system closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from humeval.errors import DataError
from humeval.stats.davidson import davidson_fit


def _neg_loglik(params: np.ndarray, wins: np.ndarray, ties: np.ndarray) -> float:
    """-log L written from the model's probabilities (not from the fit's reduced form)."""
    k = wins.shape[0]
    theta = np.concatenate([[0.0], params[:-1]])
    nu = math.exp(params[-1])
    total = 0.0
    for i in range(k):
        for j in range(i + 1, k):
            pi, pj = math.exp(theta[i]), math.exp(theta[j])
            d = pi + pj + nu * math.sqrt(pi * pj)
            total += wins[i, j] * math.log(pi / d) + wins[j, i] * math.log(pj / d)
            total += ties[i, j] * math.log(nu * math.sqrt(pi * pj) / d)
    return -total


def test_matches_scipy_on_random_counts() -> None:
    rng = np.random.default_rng(4)
    k = 5
    wins = rng.integers(1, 40, (k, k)).astype(float)
    np.fill_diagonal(wins, 0)
    ties = np.triu(rng.integers(0, 20, (k, k)), 1).astype(float)
    ties = ties + ties.T
    ref = minimize(_neg_loglik, np.zeros(k), args=(wins, ties), method="BFGS", options={"gtol": 1e-10})
    theta = np.concatenate([[0.0], ref.x[:-1]])
    fit = davidson_fit(wins, ties)
    assert bool(fit.converged)
    np.testing.assert_allclose(fit.theta, theta - theta.mean(), atol=1e-5)
    assert fit.nu == pytest.approx(math.exp(ref.x[-1]), rel=1e-5)


def test_two_systems_closed_form_and_batching() -> None:
    # A beats B 30 times, B beats A 10 times, 20 ties: theta_A - theta_B = ln 3, nu = 20 / sqrt(300)
    wins = np.array([[0, 30], [10, 0]])
    ties = np.array([[0, 20], [20, 0]])
    fit = davidson_fit(np.stack([wins, 2 * wins]), np.stack([ties, 2 * ties]))
    np.testing.assert_allclose(fit.theta[:, 0] - fit.theta[:, 1], [math.log(3)] * 2, atol=1e-9)
    np.testing.assert_allclose(fit.nu, [20 / math.sqrt(300)] * 2, rtol=1e-9)


def test_without_ties_is_bradley_terry_and_prior_keeps_it_finite() -> None:
    fit = davidson_fit(np.array([[0, 3], [1, 0]]), np.zeros((2, 2)))
    assert fit.nu == 0.0 and fit.theta[0] - fit.theta[1] == pytest.approx(math.log(3))
    one_sided = davidson_fit(np.array([[0, 5], [0, 0]]), np.zeros((2, 2)), prior=1.0)
    assert one_sided.theta[0] - one_sided.theta[1] == pytest.approx(math.log(6))


def test_bad_input_is_a_data_error() -> None:
    with pytest.raises(DataError, match="of one shape"):
        davidson_fit(np.zeros((3, 3)), np.zeros((2, 2)))
    with pytest.raises(DataError, match="non-negative"):
        davidson_fit(-np.ones((2, 2)), np.zeros((2, 2)))
