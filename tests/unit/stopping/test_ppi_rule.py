"""The prediction-powered betting rule: vectorised paths equal an item-by-item loop; error <= delta; effort."""

from __future__ import annotations

import math

import numpy as np
import pytest

from humeval.errors import DataError
from humeval.simulate.ppi_stopping import simulate_ppi_stopping
from humeval.stopping.ppi import ppi_betting_paths


def _loop(f, y, xi, pi, delta):
    """The rule written out item by item, from the formulas in the module docstring."""
    labelled: list[tuple[float, float]] = []
    zs: list[float] = []
    squares: list[float] = []  # (z_j - the mean predicted before j)^2, as in Waudby-Smith & Ramdas
    log_p = log_m = 0.0
    for i in range(len(f)):
        lam = 0.0
        if len(labelled) >= 2:
            fs, ys = np.array([a for a, _ in labelled]), np.array([b for _, b in labelled])
            var = fs.var()
            if var > 1e-12:
                lam = float(np.clip(np.mean((fs - fs.mean()) * (ys - ys.mean())) / var, 0, 1))
        z = lam * f[i] + ((y[i] - lam * f[i]) / pi if xi[i] else 0.0)
        mean = (0.5 + sum(zs)) / (1 + i)
        var_z = (0.25 + sum(squares)) / (1 + i)
        edge = mean - 0.5
        raw = abs(edge) / (var_z + edge**2)
        b_plus = min(raw, 0.5 / (0.5 - lam * (1 - 1 / pi))) if edge > 0 else 0.0
        b_minus = min(raw, 0.5 / (1 / pi - 0.5)) if edge < 0 else 0.0
        log_p += math.log1p(b_plus * (z - 0.5))
        log_m += math.log1p(-b_minus * (z - 0.5))
        zs.append(z)
        squares.append((z - mean) ** 2)
        if xi[i]:
            labelled.append((f[i], y[i]))
        if np.logaddexp(log_p, log_m) - math.log(2) >= math.log(1 / delta):
            return i + 1, (1 if log_p > log_m else -1)
    return 0, 0


def test_vectorised_paths_equal_the_loop():
    rng = np.random.default_rng(0)
    y = (rng.random((6, 1500)) < 0.62).astype(float)
    f = np.where(rng.random((6, 1500)) < 0.85, y, 1 - y)
    f[:, ::7] = 0.5  # some judge ties
    xi = rng.random((6, 1500)) < 0.3
    paths, used = ppi_betting_paths(f, y, xi, 0.3, 0.05)
    for i in range(6):
        n, outcome = _loop(f[i], y[i], xi[i], 0.3, 0.05)
        assert (paths.n[i], paths.outcome[i]) == (n, outcome)
        assert used[i] == (xi[i, :n].sum() if n else xi[i].sum())


def test_null_error_at_most_delta_and_the_judge_saves_labels_only_when_it_is_good():
    null = simulate_ppi_stopping(0.5, (0.5, 0.9), runs=400, max_items=5000, seed=3)
    for row in null:
        assert row.ppi_wrong <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / 400)
    good, useless = simulate_ppi_stopping(0.6, (0.9, 0.5), runs=300, max_items=20000, seed=4)
    assert good.ppi_wrong == 0 and good.ppi_undecided == 0
    assert good.ppi_labels_mean < 0.8 * good.human_labels_mean  # an informative judge saves labels
    assert useless.ppi_labels_mean > useless.human_labels_mean  # a coin flip costs labels (IPW noise)


def test_bad_input():
    with pytest.raises(DataError, match="labelling probability"):
        ppi_betting_paths([1, 0], [1, 0], [True, True], 0.0, 0.05)
    with pytest.raises(DataError, match="one shape"):
        ppi_betting_paths([[1, 0]], [[1, 0, 1]], [[True, True]], 0.5, 0.05)
