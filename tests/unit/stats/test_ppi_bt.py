"""PPI++ Bradley-Terry scores against ppi_py, a hand-computed two-system case and scipy's minimiser."""

from __future__ import annotations

import numpy as np
import pytest

from humeval.errors import DataError
from humeval.stats.ppi_bt import bt_fit, ppi_bradley_terry, vote_pairs


def _votes(seed: int = 1, k: int = 5, v: int = 600, ties: bool = False):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    th = np.linspace(1, -1, k)
    a = rng.integers(0, k, v)
    b = (a + rng.integers(1, k, v)) % k
    p = 1 / (1 + np.exp(-(th[a] - th[b])))
    y = (rng.random(v) < p).astype(float)
    if ties:
        y = np.where(rng.random(v) < 0.3, 0.5, y)
    f = np.where(rng.random(v) < 0.7, y, rng.choice([0.0, 0.5, 1.0], v))
    lab = np.zeros(v, dtype=bool)
    lab[rng.choice(v, 200, replace=False)] = True
    x = np.zeros((v, k))
    x[np.arange(v), a] = 1
    x[np.arange(v), b] -= 1
    return a, b, y, f, lab, x[:, 1:]


# ppi_py initialises its fit with scikit-learn's LogisticRegression(penalty=None), deprecated in scikit-learn 1.8
_SKLEARN = pytest.mark.filterwarnings("ignore:'penalty' was deprecated:FutureWarning")


@_SKLEARN
@pytest.mark.parametrize("lam", [0.0, 0.4, 1.0])
def test_matches_ppi_python_at_fixed_lambda(lam: float) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    a, b, y, f, lab, x = _votes()
    ours = ppi_bradley_terry(vote_pairs(a, b, 5), y, f, lab, lam=lam)
    est = ppi_py.ppi_logistic_pointestimate(x[lab], y[lab], f[lab], x[~lab], f[~lab], lam=lam)
    lo, hi = ppi_py.ppi_logistic_ci(x[lab], y[lab], f[lab], x[~lab], f[~lab], alpha=0.05, lam=lam)
    mlo, mhi = ours.interval(0.95)
    assert ours.theta[0, 0] == 0.0
    np.testing.assert_allclose(ours.theta[0, 1:], est, atol=1e-6)
    np.testing.assert_allclose(mlo[0, 1:], lo, atol=1e-6)
    np.testing.assert_allclose(mhi[0, 1:], hi, atol=1e-6)


@_SKLEARN
def test_tuned_lambda_is_ppi_pythons_at_that_lambda_and_minimises_the_trace() -> None:
    ppi_py = pytest.importorskip("ppi_py")
    a, b, y, f, lab, x = _votes(seed=3)
    vp = vote_pairs(a, b, 5)
    tuned = ppi_bradley_terry(vp, y, f, lab)
    lam = float(tuned.lam[0])
    assert 0.0 < lam < 1.0
    lo, hi = ppi_py.ppi_logistic_ci(x[lab], y[lab], f[lab], x[~lab], f[~lab], alpha=0.05, lam=lam)
    mlo, mhi = tuned.interval(0.95)
    np.testing.assert_allclose(mlo[0, 1:], lo, atol=1e-6)
    np.testing.assert_allclose(mhi[0, 1:], hi, atol=1e-6)
    trace = float(np.trace(tuned.cov[0]))
    for other in (max(lam - 0.15, 0.0), min(lam + 0.15, 1.0), 0.0, 1.0):
        assert trace <= float(np.trace(ppi_bradley_terry(vp, y, f, lab, lam=other).cov[0])) * 1.001


def test_two_systems_by_hand() -> None:
    # every vote shows system 0 left of system 1: the fit is a logit of the (rectified) mean
    y = np.array([1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0], dtype=float)
    f = np.array([1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1], dtype=float)
    lab = np.zeros(12, dtype=bool)
    lab[:8] = True
    vp = vote_pairs(np.zeros(12, dtype=int), np.ones(12, dtype=int), 2)
    human = ppi_bradley_terry(vp, y, f, lab, lam=0.0)
    p = y[:8].mean()  # 5/8
    assert human.theta[0, 1] == pytest.approx(-np.log(p / (1 - p)))
    # sandwich: Var(y) (ddof 1) / (n (p (1 - p))^2)
    assert human.se[0, 1] == pytest.approx(np.sqrt(y[:8].var(ddof=1) / (8 * (p * (1 - p)) ** 2)))
    lam = 0.3
    ppi = ppi_bradley_terry(vp, y, f, lab, lam=lam)
    rect = lam * f[8:].mean() + y[:8].mean() - lam * f[:8].mean()
    assert ppi.theta[0, 1] == pytest.approx(-np.log(rect / (1 - rect)))
    # finite population at lam = 0: the classical correction 1 - n / V
    fp = ppi_bradley_terry(vp, y, f, lab, lam=0.0, finite_population=True)
    assert fp.se[0, 1] ** 2 == pytest.approx(human.se[0, 1] ** 2 * (1 - 8 / 12))


def test_soft_labels_match_scipy_minimiser_of_the_rectified_loss() -> None:
    from scipy.optimize import minimize

    a, b, y, f, lab, x = _votes(seed=5, ties=True)
    lam = 0.6
    ours = ppi_bradley_terry(vote_pairs(a, b, 5), y, f, lab, lam=lam)

    def loss(t: np.ndarray) -> float:
        z = x @ t
        sp = np.logaddexp(0, z)
        n, big_n = lab.sum(), (~lab).sum()
        return float(lam / big_n * (sp - f * z)[~lab].sum() + ((sp - y * z) - lam * (sp - f * z))[lab].sum() / n)

    ref = minimize(loss, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(ours.theta[0, 1:], ref, atol=1e-5)
    # every vote labelled by a human: the plain fit
    all_lab = bt_fit(vote_pairs(a, b, 5), y)
    one = ppi_bradley_terry(vote_pairs(a, b, 5), y, f, np.ones(len(y), dtype=bool),
                            unlabelled=np.zeros(len(y), dtype=bool), lam=0.0)
    np.testing.assert_allclose(one.theta[0], all_lab, atol=1e-8)
    # a contrast does not depend on the reference system
    other = ppi_bradley_terry(vote_pairs(a, b, 5), y, f, lab, lam=lam, reference=3)
    np.testing.assert_allclose(other.theta[0, 1] - other.theta[0, 2], ours.theta[0, 1] - ours.theta[0, 2], atol=1e-8)
    np.testing.assert_allclose(other.contrast_se(1, 2), ours.contrast_se(1, 2), rtol=1e-6)


def test_user_errors() -> None:
    a, b, y, f, lab, _ = _votes()
    vp = vote_pairs(a, b, 5)
    with pytest.raises(DataError, match="compares system 2 with itself"):
        vote_pairs(np.array([0, 2]), np.array([1, 2]))
    with pytest.raises(DataError, match="one entry per vote"):
        ppi_bradley_terry(vp, y[:-1], f, lab)
    with pytest.raises(DataError, match="must lie in \\[0, 1\\]"):
        ppi_bradley_terry(vp, y * 2, f, lab)
    with pytest.raises(DataError, match="lam must lie in"):
        ppi_bradley_terry(vp, y, f, lab, lam=1.5)
    with pytest.raises(DataError, match="no finite fit"):
        ppi_bradley_terry(vote_pairs(np.zeros(6, dtype=int), np.ones(6, dtype=int), 2), np.ones(6), np.ones(6),
                          np.array([1, 1, 1, 0, 0, 0], dtype=bool), lam=0.0)
