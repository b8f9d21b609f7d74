"""The exact split test of a stopped sequence (humeval.stats.drift), against Fisher and against enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import fisher_exact

from humeval.errors import DataError
from humeval.stats.drift import stopped_split_pvalues
from humeval.stopping import get_rule


def _enumerated(a: np.ndarray, n: int, s_n: int, m: int, s_m: int) -> float | None:
    """Two-sided p-value by listing every one of the 2^n paths: those inside the boundary before n and ending at
    S_n are equally likely under exchangeable outcomes; count them by their S_m."""
    paths = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1
    s = paths.cumsum(axis=1)
    t = np.arange(1, n + 1)
    inside = (t - a[:n] < s) & (s < a[:n])
    ok = inside[:, : n - 1].all(axis=1) & (s[:, -1] == s_n)
    counts = np.bincount(s[ok, m - 1], minlength=m + 1).astype(float)
    if counts.sum() == 0:
        return None  # no admissible path ends there
    prob = counts / counts.sum()
    return float(prob[prob <= prob[s_m] * (1 + 1e-7)].sum())


@pytest.mark.parametrize(("n", "s_n", "m", "s_m"), [(10, 5, 5, 4), (20, 12, 10, 8), (30, 9, 15, 1), (31, 16, 15, 3),
                                                    (7, 7, 3, 3)])
def test_without_a_boundary_it_is_fishers_exact_test(n, s_n, m, s_m):
    never = np.arange(2, 40)  # a_t = t + 1: no split of t outcomes decides
    expected = fisher_exact([[s_m, m - s_m], [s_n - s_m, n - m - s_n + s_m]])[1]
    assert stopped_split_pvalues(never, n, s_n, m, s_m)[0] == pytest.approx(expected, rel=1e-9)


def test_with_a_boundary_it_matches_enumeration_of_every_path():
    t = np.arange(1, 15)
    a = t // 2 + 3  # decides A at S_t >= t/2 + 3, B at S_t <= t/2 - 3: stops often within 14 outcomes
    cases = []
    for n in (9, 12, 14):
        for s_n in range(n + 1):
            for m in (n // 2, n // 3, n - 1):
                for s_m in range(min(m, s_n) + 1):
                    if s_n - s_m > n - m:
                        continue
                    expected = _enumerated(a, n, s_n, m, s_m)
                    if expected is not None:
                        cases.append((n, s_n, m, s_m, expected))
    n, s_n, m, s_m, expected = (np.array(c) for c in zip(*cases, strict=True))
    got = stopped_split_pvalues(a, n, s_n, m, s_m)
    assert len(cases) > 150
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    # and the boundary matters: Fisher's test on the same halves gives other p-values for some of them
    fisher = np.array([fisher_exact([[x, y - x], [z - x, w - y - z + x]])[1] for w, z, y, x in zip(n, s_n, m, s_m,
                                                                                                 strict=True)])
    assert np.abs(fisher - expected).max() > 0.1


def test_the_anytime_rules_boundary_matches_enumeration():
    a = get_rule("anytime", 0.3).boundary(16)  # a loose delta, so that it can stop within 16 outcomes
    assert (a <= np.arange(1, 17)).any()
    for n, s_n, m, s_m in [(16, 12, 8, 4), (16, 12, 8, 7), (15, 3, 7, 3), (16, 8, 8, 1)]:
        expected = _enumerated(a, n, s_n, m, s_m)
        assert stopped_split_pvalues(a, n, s_n, m, s_m)[0] == pytest.approx(expected, rel=1e-9)


def test_false_flags_under_no_drift_stay_below_the_level():
    """Constant p, stopped by the anytime rule: among decided runs the test flags at most alpha (exact test)."""
    rule = get_rule("anytime", 0.05)
    rng = np.random.default_rng(5)
    x = (rng.random((1500, 300)) < 0.62).astype(np.int64)
    s = x.cumsum(axis=1)
    d = rule.decide_paths(s)
    n = np.where(d.decided, d.n, 300)
    m = n // 2
    p = stopped_split_pvalues(rule.boundary(300), n, s[np.arange(1500), n - 1], m, s[np.arange(1500), m - 1])
    assert d.decided.sum() > 500
    flagged = (p <= 0.05).mean()
    assert flagged <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 1500)


def test_a_split_that_is_not_one_is_refused():
    never = np.arange(2, 12)
    with pytest.raises(DataError, match="not a split"):
        stopped_split_pvalues(never, 10, 5, 10, 4)
    with pytest.raises(DataError, match="boundary has 10 entries"):
        stopped_split_pvalues(never, 11, 5, 5, 2)
    with pytest.raises(DataError, match="cannot come from this rule"):
        stopped_split_pvalues(np.arange(1, 15) // 2 + 3, 12, 12, 6, 6)  # would have stopped at t = 6
