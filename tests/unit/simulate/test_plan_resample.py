"""Pilot fitting recovers the model; resampling matches a per-request loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from humeval.errors import DataError, HumevalError
from humeval.simulate import fit_pilot, resample_collected


def _pilot(mu: float, var: float, requests: int, per: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = np.clip(rng.normal(mu, np.sqrt(var), requests), -1, 1)
    c = rng.uniform(0.8, 1.0, (requests, per))
    choice = rng.random((requests, per)) < (c * d[:, None] + 1) / 2
    return pd.DataFrame({"request": np.repeat(np.arange(requests), per), "choice": choice.ravel().astype(int)})


def test_fit_recovers_mu_and_var() -> None:
    fit = fit_pilot(_pilot(0.2, 0.1, 3000, 6, 1))
    assert fit.mu_ci[0] <= 0.2 <= fit.mu_ci[1]
    assert fit.difficulty_var == pytest.approx(0.1, abs=0.02)


def test_fit_errors() -> None:
    with pytest.raises(DataError, match="choice"):
        fit_pilot(pd.DataFrame({"request": [1], "x": [1]}))
    with pytest.raises(DataError, match="variance"):
        fit_pilot(pd.DataFrame({"request": [1, 2], "choice": ["A", "B"]}))
    with pytest.raises(DataError, match="'C'"):
        fit_pilot(pd.DataFrame({"request": [1, 1], "choice": ["A", "C"]}))


def test_resample_one_worker_matches_loop() -> None:
    rng = np.random.default_rng(2)
    votes = (rng.random((300, 10)) < 0.7).astype(int)
    res = resample_collected(votes, ["one", "max3"], ["hoeffding"], 0.05, iterations=400, seed=1)
    one = next(r for r in res if r.strategy == "one")
    # the label of One Worker is Bernoulli(row share): compare the decided share with a loop
    share = votes.mean(axis=1)
    loop_rng = np.random.default_rng(5)
    stops = []
    for _ in range(400):
        x = loop_rng.random(300) < share
        s = np.cumsum(x)
        n = np.arange(1, 301)
        t = np.sqrt(np.log(20) / (2 * n))
        hit = np.flatnonzero((s / n - t > 0.5) | (s / n + t < 0.5))
        stops.append(hit[0] + 1 if hit.size else 300)
    assert one.mean_effort == pytest.approx(np.mean(stops), rel=0.12)
    m3 = next(r for r in res if r.strategy == "max3")
    assert m3.mean_effort > one.mean_effort
    with pytest.raises(HumevalError, match="max3_cost"):
        resample_collected(votes, ["max3"], ["anytime"], 0.05, max3_cost="wrong")  # type: ignore[arg-type]
    with pytest.raises(HumevalError, match="fixed"):
        resample_collected(votes, ["fixed"], ["anytime"], 0.05)
