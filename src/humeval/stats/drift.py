r"""Did the preference change between the early and the late part of a stopped sequence? An exact test.

A stopping rule of boundary form (:mod:`humeval.stopping.base`) saw outcomes :math:`X_1, \dots, X_n` in
{0, 1} and stopped at n (or is still going at n): the path :math:`S_t = X_1 + \dots + X_t` stayed inside
the continuation region :math:`t - a_t < S_t < a_t` for every :math:`t < n`. Split the sequence after
the first m outcomes: the early part has :math:`S_m` successes of m, the late part :math:`S_n - S_m` of
:math:`n - m`.

*Null hypothesis* (no drift): the outcomes are exchangeable, e.g. i.i.d. Bernoulli(p) with any p. Then
every path from (0, 0) to :math:`(n, S_n)` has the same probability :math:`p^{S_n}(1-p)^{n-S_n}`, so
given the stop at n with :math:`S_n` successes every *admissible* path (inside the region before n) is
equally likely, whatever p is, and

.. math::

    P(S_m = s \mid n, S_n, \text{admissible}) = \frac{F_m(s)\, B_m(s)}{\sum_{s'} F_m(s')\, B_m(s')}

with :math:`F_m(s)` the number of admissible paths from (0, 0) to (m, s) and :math:`B_m(s)` the number
from (m, s) to :math:`(n, S_n)` (both by dynamic programming over t, one array operation per step on the
states inside the boundary, all sequences at once: n x the band's width; 0.56 s for one sequence of
n = 20,000 under ``anytime``). The two-sided p-value sums the probabilities of the values of :math:`S_m`
that are no more likely than the one observed (Fisher's rule). The test is exact (its
false-flag rate under the null is at most the level at every n, conditional on the stop) and conservative
because :math:`S_m` is discrete.

Why not Fisher's exact test on the two halves: it assumes every arrangement of the :math:`S_n` successes
is equally likely, but a sequence that stopped at n did not cross the boundary earlier, so (for a
decision for A) its early part had too few A outcomes to cross and its late part climbed to the boundary:
the halves differ under the null. The admissible-path count corrects exactly for that. With a boundary
that never stops (:math:`a_t > t`) every path is admissible and the test *is* Fisher's exact test.

Reference: the conditional (sufficient-statistic) argument is Lehmann & Romano, *Testing Statistical
Hypotheses*, 3rd ed., section 4.4 (UMPU tests via conditioning on a sufficient statistic); Fisher (1935)
for the 2x2 case; path counting under a stopping boundary as in Armitage, McPherson & Rowe (1969).
R (no boundary): ``fisher.test(matrix(c(s_m, m - s_m, S - s_m, n - m - S + s_m), 2))$p.value``.

Checked against: ``scipy.stats.fisher_exact`` without a boundary, and enumeration of all :math:`2^n`
paths with a boundary (``tests/unit/stats/test_drift.py``).

*A confirmation wave* (:func:`confirmation_pvalues`, :func:`confirmation_power`, :func:`confirmation_wave_size`,
:func:`curtailed_wave`). The split test sees only the judgements the decision used; a change that comes after
them is invisible to it (docs/stopping.md, 'Whose preference'). A wave of w outcomes collected later (e.g. when
the fixed design's collection would have ended) is independent of the stop, so the exact one-sided binomial test
of "the wave prefers the other side than the decision" (wins for the decided side :math:`k`,
:math:`p = P(\mathrm{Bin}(w, 1/2) \le k)`) has level alpha whenever the wave's crowd does not prefer the other
side, whatever the decision's path was. Its power against a late preference q for the decided side is
:math:`P(\mathrm{Bin}(w, q) \le c)`, c the largest k with :math:`P(\mathrm{Bin}(w, 1/2) \le k) \le \alpha`.
Curtailment (stop the wave once the flag is certain or impossible) gives the same flag with fewer outcomes.
R: ``pbinom(k, w, 0.5)``, ``binom.test(k, w, 0.5, alternative = "less")$p.value``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from humeval.errors import DataError

__all__ = ["confirmation_power", "confirmation_pvalues", "confirmation_threshold", "confirmation_wave_size",
           "curtailed_wave", "stopped_split_pvalues"]

#: relative tolerance when comparing probabilities (Fisher's two-sided rule, as scipy and R use)
_TOL = 1 + 1e-7


def _inside(a: np.ndarray, t: np.ndarray, states: np.ndarray) -> np.ndarray:
    """Whether (t, s) is inside the continuation region t - a_t < s < a_t; ``t`` per row, ``states`` per column."""
    at = a[np.maximum(t, 1) - 1][:, None]
    inside: np.ndarray = (t[:, None] - at < states[None, :]) & (states[None, :] < at)
    return inside


def _band(a: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest count inside the continuation region at each t (0..t while the rule cannot stop)."""
    at = a[t - 1]
    return np.maximum(0, t - at + 1), np.minimum(t, at - 1)


def stopped_split_pvalues(boundary: np.ndarray, n: np.ndarray | int, successes: np.ndarray | int,
                          split: np.ndarray | int, early_successes: np.ndarray | int, *, p0: float = 0.5) -> np.ndarray:
    """Two-sided exact p-values that the early part (the first ``split`` of ``n`` outcomes) and the late part
    share one success probability, given that the sequence stayed inside ``boundary`` before ``n``.

    ``boundary[t - 1]`` is :math:`a_t` for t = 1..H (:meth:`humeval.stopping.base.BoundaryRule.boundary`);
    ``n``, ``successes`` (:math:`S_n`), ``split`` (m, 1 <= m < n) and ``early_successes`` (:math:`S_m`)
    are arrays with one entry per sequence (or scalars). ``p0`` weights the steps of the dynamic
    programme (the result does not depend on it; a value near :math:`S_n/n` keeps the extreme states
    away from underflow for long sequences).

    Checked against: ``scipy.stats.fisher_exact`` (no boundary) and enumeration of every path (with one).

    Examples:
        >>> import numpy as np
        >>> never = np.arange(2, 12)  # a_t = t + 1: no stop, so this is Fisher's exact test
        >>> float(stopped_split_pvalues(never, 10, 5, 5, 4)[0]).__round__(4)  # R: fisher.test(matrix(c(4,1,1,4),2))
        0.2063
    """
    a = np.asarray(boundary, dtype=np.int64)
    n, s_n, m, s_m = (np.atleast_1d(np.asarray(x, dtype=np.int64)) for x in (n, successes, split, early_successes))
    if not (n.shape == s_n.shape == m.shape == s_m.shape) or n.ndim != 1:
        raise DataError(f"stopped_split_pvalues: n, successes, split and early_successes need one entry per "
                        f"sequence each, got shapes {n.shape}, {s_n.shape}, {m.shape}, {s_m.shape}")
    if n.size == 0:
        return np.zeros(0)
    bad = (m < 1) | (m >= n) | (s_n < 0) | (s_n > n) | (s_m < 0) | (s_m > m) | (s_n - s_m > n - m) | (s_m > s_n)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"stopped_split_pvalues: sequence {i}: split m = {m[i]} of n = {n[i]} with S_m = {s_m[i]}, "
                        f"S_n = {s_n[i]} is not a split (need 1 <= m < n, 0 <= S_m <= m, S_m <= S_n, "
                        f"S_n - S_m <= n - m)")
    if int(n.max()) > a.size:
        raise DataError(f"stopped_split_pvalues: the boundary has {a.size} entries (a_1..a_H), the longest "
                        f"sequence has n = {int(n.max())}: pass the boundary up to that n")
    if not 0 < p0 < 1:
        raise DataError(f"stopped_split_pvalues: p0 must be in (0, 1), got {p0!r}")
    rows = n.size
    width = int(n.max()) + 2  # states 0..max n, and one padding column for the shifts
    states = np.arange(width)
    w1, w0 = p0, 1.0 - p0

    # forward, all sequences at once: admissible paths from (0, 0) to (t, s); kept at each sequence's m. Each step
    # works on the columns that can be non-zero (the previous support and the band inside the boundary at t), so a
    # long sequence costs n x the band's width, not n^2.
    forward = np.zeros((rows, width))
    forward[:, 0] = 1.0
    at_split = np.zeros((rows, width))
    c0, c1 = 0, 1  # the support of `forward`: columns [c0, c1)
    for t in range(1, int(m.max()) + 1):
        lo, hi = _band(a, np.array([t]))
        u0, u1 = min(c0, int(lo[0])), max(c1, int(hi[0]) + 1)
        old = forward[:, u0:u1]  # column u0 - 1 is outside the support: zero
        step = (w0 * old + w1 * np.concatenate((np.zeros((rows, 1)), old[:, :-1]), axis=1)) \
            * _inside(a, np.full(rows, t), states[u0:u1])
        forward[:, u0:u1] = step / np.maximum(step.max(axis=1, keepdims=True), np.finfo(float).tiny)  # scale cancels
        c0, c1 = int(lo[0]), int(hi[0]) + 1
        at_split[m == t] = forward[m == t]

    # backward, all sequences at once: admissible paths from (t, s) to (n, S_n), from t = n - 1 down to each m
    backward = np.zeros((rows, width))
    backward[np.arange(rows), s_n] = 1.0
    c0, c1 = int(s_n.min()), int(s_n.max()) + 1  # the union of the sequences' supports
    for k in range(1, int((n - m).max()) + 1):
        ts = n - k  # each sequence's t
        live = ts >= m
        lo, hi = _band(a, ts[live])
        u0, u1 = min(c0, int(lo.min())), max(c1, int(hi.max()) + 1)
        old = backward[:, u0:u1]  # column u1 is outside the support: zero
        step = (w0 * old + w1 * np.concatenate((old[:, 1:], np.zeros((rows, 1))), axis=1)) \
            * _inside(a, ts, states[u0:u1])
        step /= np.maximum(step.max(axis=1, keepdims=True), np.finfo(float).tiny)
        backward[:, u0:u1] = np.where(live[:, None], step, old)
        c0, c1 = u0, u1

    prob = at_split * backward
    total = prob.sum(axis=1, keepdims=True)
    if (total <= 0).any():
        i = int(np.flatnonzero(total[:, 0] <= 0)[0])
        raise DataError(f"stopped_split_pvalues: sequence {i}: no path stays inside the boundary before n = {n[i]} "
                        f"and ends at S_n = {s_n[i]}; these outcomes cannot come from this rule")
    prob /= total
    observed = prob[np.arange(rows), s_m]
    pvalues: np.ndarray = np.minimum(1.0, np.where(prob <= observed[:, None] * _TOL, prob, 0.0).sum(axis=1))
    return pvalues


def _check_level(name: str, alpha: float) -> None:
    if not 0 < alpha < 1:
        raise DataError(f"{name}: alpha must be in (0, 1), got {alpha!r}")


def _wave_sizes(name: str, wave: np.ndarray | int) -> np.ndarray:
    w = np.atleast_1d(np.asarray(wave, dtype=np.int64))
    if (w < 1).any():
        raise DataError(f"{name}: a wave needs at least 1 outcome, got {int(w[w < 1][0])}")
    return w


def confirmation_threshold(wave: np.ndarray | int, alpha: float) -> np.ndarray:
    """The largest count c of wins for the decided side in a wave of ``wave`` outcomes that flags at ``alpha``
    (:math:`P(\\mathrm{Bin}(w, 1/2) \\le c) \\le \\alpha`); -1 when even 0 wins does not (a wave too small to
    ever flag: :math:`2^{-w} > \\alpha`).

    Checked against: exact integer sums of binomial coefficients (``tests/unit/stats/test_drift.py``).

    Examples:
        >>> int(confirmation_threshold(100, 0.05)[0])  # R: pbinom(41, 100, 0.5) = 0.044, pbinom(42, 100, 0.5) = 0.067
        41
        >>> int(confirmation_threshold(4, 0.05)[0])  # 0.5^4 = 0.0625 > 0.05: no wave of 4 flags
        -1
    """
    _check_level("confirmation_threshold", alpha)
    w = _wave_sizes("confirmation_threshold", wave)
    c = binom.ppf(alpha, w, 0.5).astype(np.int64)  # the smallest k with cdf(k) >= alpha
    c = np.where(binom.cdf(c, w, 0.5) <= alpha * (1 + 1e-12), c, c - 1)
    out: np.ndarray = np.maximum(c, -1)
    return out


def confirmation_pvalues(wins_for_side: np.ndarray | int, wave: np.ndarray | int) -> np.ndarray:
    """Exact one-sided p-values that a wave of ``wave`` outcomes, ``wins_for_side`` of them for the side the
    decision chose, prefers the other side: :math:`P(\\mathrm{Bin}(w, 1/2) \\le k)`.

    Valid (level alpha) whenever the wave's outcomes are independent of the decision's and its crowd does not
    prefer the other side; a flag (p <= alpha) says the later crowd prefers the other side.

    Checked against: ``scipy.stats.binomtest(k, w, 0.5, alternative="less").pvalue`` (``tests/unit/stats/test_drift.py``).

    Examples:
        >>> round(float(confirmation_pvalues(40, 100)[0]), 4)  # R: pbinom(40, 100, 0.5)
        0.0284
    """
    w = _wave_sizes("confirmation_pvalues", wave)
    k = np.atleast_1d(np.asarray(wins_for_side, dtype=np.int64))
    if k.shape != w.shape and w.size != 1 and k.size != 1:
        raise DataError(f"confirmation_pvalues: wins_for_side and wave need one entry per wave each (or one of "
                        f"them a scalar), got shapes {k.shape} and {w.shape}")
    if ((k < 0) | (k > w)).any():
        raise DataError(f"confirmation_pvalues: wins for the decided side must be within 0..wave, got "
                        f"{k.tolist()[:5]} of {w.tolist()[:5]}")
    pvalues: np.ndarray = binom.cdf(k, w, 0.5)
    return pvalues


def confirmation_power(wave: np.ndarray | int, late_share: np.ndarray | float, alpha: float) -> np.ndarray:
    """The probability that a wave of ``wave`` outcomes flags at ``alpha`` when the later crowd gives the decided
    side each outcome with probability ``late_share`` (i.i.d.): :math:`P(\\mathrm{Bin}(w, q) \\le c)`.

    At ``late_share`` 1/2 this is the flag's size (at most alpha; less by discreteness).

    Checked against: the binomial sum written out with ``math.comb`` (``tests/unit/stats/test_drift.py``).

    Examples:
        >>> round(float(confirmation_power(100, 0.35, 0.05)[0]), 3)  # R: pbinom(41, 100, 0.35)
        0.912
    """
    w = _wave_sizes("confirmation_power", wave)
    q = np.asarray(late_share, dtype=float)
    if ((q < 0) | (q > 1)).any():
        raise DataError(f"confirmation_power: late_share must be in [0, 1], got {np.atleast_1d(q).tolist()[:5]}")
    c = confirmation_threshold(w, alpha)
    power: np.ndarray = np.where(c >= 0, binom.cdf(c, w, q), 0.0)
    return power


def confirmation_wave_size(late_share: float, alpha: float, power: float, *, largest: int = 100_000) -> int:
    """The smallest wave whose flag has at least ``power`` against a later crowd giving the decided side
    ``late_share`` (< 1/2) of its outcomes, at ``alpha``.

    Checked against: the power of every smaller wave (``tests/unit/stats/test_drift.py``).

    Examples:
        >>> confirmation_wave_size(0.35, 0.05, 0.8)  # the normal approximation says 67; discreteness: 67 has 0.784
        69
    """
    if not 0 <= late_share < 0.5:
        raise DataError(f"confirmation_wave_size: late_share must be in [0, 0.5) (a later crowd that prefers the "
                        f"other side), got {late_share!r}")
    if not 0 < power < 1:
        raise DataError(f"confirmation_wave_size: power must be in (0, 1), got {power!r}")
    sizes = np.arange(1, largest + 1)
    ok = np.flatnonzero(confirmation_power(sizes, late_share, alpha) >= power)
    if ok.size == 0:
        raise DataError(f"confirmation_wave_size: no wave of at most {largest} outcomes has power {power:g} at "
                        f"late_share {late_share:g}, alpha {alpha:g}")
    return int(sizes[ok[0]])


def curtailed_wave(for_side: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The wave's flag and the outcomes it needs when it stops as soon as the flag is certain or impossible.

    ``for_side``: one row per wave, its outcomes in arrival order (1: for the decided side). Returns ``flagged``
    (the same as the full wave's test at ``alpha``) and ``needed`` (outcomes collected: the first t where the wins
    for the side exceed the threshold c, or the losses reach w - c, else w).

    Checked against: the full wave's test and a loop over each wave's outcomes by hand
    (``tests/unit/stats/test_drift.py``).

    Examples:
        >>> import numpy as np
        >>> flagged, needed = curtailed_wave(np.array([[1, 1, 1, 1, 1, 0, 0, 0, 0, 0]]), 0.05)  # c = 1 for w = 10
        >>> bool(flagged[0]), int(needed[0])
        (False, 2)
    """
    x = np.asarray(for_side, dtype=np.int64)
    if x.ndim != 2 or x.shape[1] < 1 or ((x != 0) & (x != 1)).any():
        raise DataError(f"curtailed_wave: for_side must be a 2-D array of 0/1 (one row per wave), got shape "
                        f"{x.shape}")
    w = x.shape[1]
    c = int(confirmation_threshold(w, alpha)[0])
    wins = x.cumsum(axis=1)
    losses = np.arange(1, w + 1)[None, :] - wins
    done = (wins > c) | (losses >= w - c)
    needed = np.where(done.any(axis=1), done.argmax(axis=1) + 1, w)
    flagged: np.ndarray = wins[:, -1] <= c
    return flagged, needed
