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


# the confirmation wave: an exact one-sided binomial test on outcomes collected after the decision


def _threshold_by_hand(w: int, alpha: float) -> int:
    """The largest c with sum_{k <= c} C(w, k) / 2^w <= alpha, by exact integer arithmetic (-1: none)."""
    from math import comb
    total, c = 0, -1
    for k in range(w + 1):
        total += comb(w, k)
        if total * 1.0 / 2 ** w > alpha:
            break
        c = k
    return c


@pytest.mark.parametrize("w", [1, 4, 5, 10, 37, 100, 201])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
def test_the_wave_threshold_matches_exact_integer_sums(w, alpha):
    from humeval.stats.drift import confirmation_threshold
    assert int(confirmation_threshold(w, alpha)[0]) == _threshold_by_hand(w, alpha)


def test_the_wave_pvalue_is_scipys_one_sided_binomial_test():
    from scipy.stats import binomtest

    from humeval.stats.drift import confirmation_pvalues
    k = np.array([0, 3, 40, 41, 50, 99, 100])
    got = confirmation_pvalues(k, 100)
    want = [binomtest(int(x), 100, 0.5, alternative="less").pvalue for x in k]
    assert got == pytest.approx(want, rel=1e-10)


def test_the_wave_power_is_the_binomial_sum_and_its_size_at_most_alpha():
    from math import comb

    from humeval.stats.drift import confirmation_power, confirmation_wave_size
    for w, q in [(100, 0.35), (69, 0.35), (30, 0.2), (4, 0.1)]:
        c = _threshold_by_hand(w, 0.05)
        want = sum(comb(w, k) * q ** k * (1 - q) ** (w - k) for k in range(c + 1))
        assert confirmation_power(w, q, 0.05)[0] == pytest.approx(want, rel=1e-9, abs=1e-15)
    sizes = np.arange(1, 400)
    assert (confirmation_power(sizes, 0.5, 0.05) <= 0.05).all()
    n = confirmation_wave_size(0.35, 0.05, 0.8)
    assert confirmation_power(n, 0.35, 0.05)[0] >= 0.8 > confirmation_power(np.arange(1, n), 0.35, 0.05).max()


def test_a_curtailed_wave_flags_as_the_full_wave_and_stops_when_the_flag_is_settled():
    from humeval.stats.drift import confirmation_pvalues, curtailed_wave
    rng = np.random.default_rng(3)
    x = (rng.random((500, 60)) < rng.uniform(0.2, 0.8, (500, 1))).astype(np.int64)
    flagged, needed = curtailed_wave(x, 0.05)
    assert (flagged == (confirmation_pvalues(x.sum(axis=1), 60) <= 0.05)).all()
    c = _threshold_by_hand(60, 0.05)
    for row, got in zip(x[:50], needed[:50], strict=True):  # by hand: the first t at which the rest cannot matter
        wins = 0
        for t, v in enumerate(row, start=1):
            wins += int(v)
            if wins > c or t - wins >= 60 - c:
                break
        assert got == t


def test_the_wave_functions_refuse_what_is_not_a_wave():
    from humeval.stats.drift import confirmation_pvalues, confirmation_wave_size, curtailed_wave
    with pytest.raises(DataError, match="within 0..wave"):
        confirmation_pvalues(11, 10)
    with pytest.raises(DataError, match="late_share must be in"):
        confirmation_wave_size(0.6, 0.05, 0.8)
    with pytest.raises(DataError, match="2-D array of 0/1"):
        curtailed_wave(np.array([1, 0, 2]), 0.05)
