r"""Prediction-powered Bradley-Terry scores: PPI++ for the pairwise logistic M-estimator.

Votes compare two systems: vote v shows ``left[v]`` and ``right[v]``; the human label :math:`y_v \in \{0, \tfrac12,
1\}` (1: left preferred, a tie as one half) is known on a labelled subset, an automatic judge's verdict
:math:`f_v` on every vote. Bradley-Terry with ties as halves is the logistic M-estimator

.. math::

    \theta^* = \arg\min_\theta \sum_v \ell(\theta; x_v, y_v),\qquad
    \ell(\theta; x, y) = \log(1 + e^{x^\top\theta}) - y\, x^\top\theta,\qquad x_v = e_{\mathrm{left}} - e_{\mathrm{right}},

with one system's score fixed at 0 (``reference``; contrasts :math:`\theta_i - \theta_j` do not depend on it). The
prediction-powered estimate (Angelopoulos, Duchi & Zrnic 2023, "PPI++") minimises the rectified loss

.. math::

    \frac{\lambda}{N}\sum_{u \in U} \ell(\theta; x_u, f_u)
    + \frac1n \sum_{v \in L} \bigl[\ell(\theta; x_v, y_v) - \lambda\, \ell(\theta; x_v, f_v)\bigr]

over the labelled votes L (n) and the unlabelled U (N, here every vote not labelled). Its covariance is the
sandwich :math:`H^{-1}\,(\tfrac nN \mathrm{Cov}(\lambda \nabla\ell_f^U) + \mathrm{Cov}(\nabla\ell_y - \lambda
\nabla\ell_f))\,H^{-1} / n`, and the power-tuned :math:`\hat\lambda` minimises its trace (clipped to [0, 1]; 0 is the
human-only fit, 1 the original PPI). Every number is computed as ``ppi_py.ppi_logistic_ci`` does (the tuned
:math:`\lambda` re-estimated once at the first tuned fit), so the package is the oracle of the tests.

**Finite population.** A replay labels a random subset of one fixed set of V votes and compares with the fit to all
of them (the leaderboard's answer): that estimand is a finite-population one, and the i.i.d. sandwich above
overstates its variance by the human term :math:`\mathrm{Cov}(\nabla\ell_y) / V` (simple random sampling without
replacement: the gradient mean's variance is :math:`(1 - n/V)\, S^2(\nabla\ell_y - \lambda' \nabla\ell_f)/n` with
:math:`\lambda' = \lambda V/N`, which expands to the sandwich's middle term minus :math:`\tfrac{n}{V}
\mathrm{Cov}(\nabla\ell_y)`). ``finite_population=True`` subtracts it (at :math:`\lambda = 0`: the textbook
finite-population correction :math:`1 - n/V`); the tuned :math:`\lambda` is the same either way (the derivative in
:math:`\lambda` of both variances is the same). Without it the intervals cover more than their level at large
labelled shares.

Everything is vectorised over ``S`` label sets at once (a leading axis): per-pair sufficient statistics of the
votes (sparse products), then Newton's method on the pairs' graph Laplacian.

Assumptions: the labelled votes are a simple random sample of the votes (or of a stream: exchangeable), the judge's
verdicts do not depend on which votes are labelled; the intervals are normal (CLT) intervals. The judge may be
biased in any way: the correction is unbiased, a useless judge gets :math:`\hat\lambda \approx 0`.

References: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023), Science 382; Angelopoulos, Duchi & Zrnic (2023),
arXiv:2311.01453 (PPI++); Bradley & Terry (1952); Cochran (1977), Sampling Techniques, ch. 2 (the correction).
Checked against: ``ppi_py.ppi_logistic_pointestimate`` / ``ppi_logistic_ci`` at fixed and tuned lambda, a
hand-computed two-system case (closed form), and scipy's minimiser of the rectified loss written out
(tests/unit/stats/test_ppi_bt.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from humeval.errors import DataError

__all__ = ["PPIBradleyTerry", "VotePairs", "bt_fit", "ppi_bradley_terry", "vote_pairs"]


@dataclass(frozen=True)
class VotePairs:
    """Votes mapped onto unordered pairs: ``pairs[p] = (i, j)``, i < j; vote v is pair ``pair[v]`` and shows i on
    the left when ``sign[v]`` is +1 (labels are oriented towards i: y -> 1 - y when i was on the right)."""

    k: int
    pairs: np.ndarray
    pair: np.ndarray
    sign: np.ndarray

    def orient(self, y: np.ndarray) -> np.ndarray:
        """A label for the left system as a label for the pair's first system i."""
        y = np.asarray(y, dtype=float)
        return np.where(self.sign > 0, y, 1.0 - y)

    def onehot(self) -> Any:
        """The sparse V x P indicator of each vote's pair (scipy CSR)."""
        from scipy import sparse

        v = len(self.pair)
        return sparse.csr_matrix((np.ones(v), (np.arange(v), self.pair)), shape=(v, len(self.pairs)))


def vote_pairs(left: np.ndarray, right: np.ndarray, k: int | None = None) -> VotePairs:
    """Map votes of (``left[v]``, ``right[v]``) system indices onto unordered pairs; DataError on a bad vote."""
    a = np.asarray(left, dtype=np.int64).reshape(-1)
    b = np.asarray(right, dtype=np.int64).reshape(-1)
    if a.shape != b.shape or len(a) == 0:
        raise DataError(f"Bradley-Terry votes: left and right must be two non-empty arrays of one length, got "
                        f"{a.shape} and {b.shape}")
    kk = int(max(a.max(), b.max()) + 1) if k is None else int(k)
    if a.min() < 0 or b.min() < 0 or max(a.max(), b.max()) >= kk:
        raise DataError(f"Bradley-Terry votes: system indices must lie in 0..{kk - 1}")
    same = np.flatnonzero(a == b)
    if len(same):
        raise DataError(f"Bradley-Terry votes: vote {int(same[0])} compares system {int(a[same[0]])} with itself")
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pairs, pair = np.unique(np.stack([lo, hi], axis=1), axis=0, return_inverse=True)
    return VotePairs(kk, pairs.reshape(-1, 2), pair.reshape(-1), np.where(a == lo, 1, -1))


def _lap(pairs: np.ndarray, k: int, q: np.ndarray, ref: int) -> np.ndarray:
    """sum_p q[..., p] x_p x_p^T in the coordinates without ``ref`` (x_p = e_i - e_j): a weighted graph Laplacian."""
    i, j = pairs[:, 0], pairs[:, 1]
    out = np.zeros((*q.shape[:-1], k, k))
    out[..., i, j] = -q
    out[..., j, i] = -q
    out[..., np.arange(k), np.arange(k)] = -out.sum(axis=-1)
    keep = np.arange(k) != ref
    red: np.ndarray = out[..., keep, :][..., :, keep]
    return red


def _vec(pairs: np.ndarray, k: int, u: np.ndarray, ref: int) -> np.ndarray:
    """sum_p u[..., p] x_p in the coordinates without ``ref``."""
    out = np.zeros((*u.shape[:-1], k))
    np.add.at(np.moveaxis(out, -1, 0), pairs[:, 0], np.moveaxis(u, -1, 0))
    np.add.at(np.moveaxis(out, -1, 0), pairs[:, 1], -np.moveaxis(u, -1, 0))
    red: np.ndarray = out[..., np.arange(k) != ref]
    return red


def _diff(pairs: np.ndarray, theta: np.ndarray) -> np.ndarray:
    d: np.ndarray = theta[..., pairs[:, 0]] - theta[..., pairs[:, 1]]
    return d


def _full(k: int, red: np.ndarray, ref: int) -> np.ndarray:
    out = np.zeros((*red.shape[:-1], k))
    out[..., np.arange(k) != ref] = red
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return out


def _newton(pairs: np.ndarray, k: int, w: np.ndarray, t: np.ndarray, ref: int, *, max_iter: int = 100,
            tol: float = 1e-11) -> np.ndarray:
    """Minimise sum_p w_p log(1 + e^(d_p)) - t_p d_p, d_p = theta_i - theta_j, theta_ref = 0, for each row of
    ``w``, ``t`` ([S, P]); returns theta [S, K]. DataError when some row has no finite minimum."""
    s = w.shape[0]
    red = np.zeros((s, k - 1))
    for it in range(max_iter):
        th = _full(k, red, ref)
        sig = _sigmoid(_diff(pairs, th))
        g = _vec(pairs, k, w * sig - t, ref)
        h = _lap(pairs, k, w * sig * (1 - sig), ref)
        try:
            step = np.linalg.solve(h, g[..., None])[..., 0]
        except np.linalg.LinAlgError:
            if it == 0:
                raise DataError("Bradley-Terry fit: the votes do not connect every system (a singular Hessian); "
                                "every system needs votes linking it to the others") from None
            raise DataError("Bradley-Terry fit: no finite fit (a system that never won or never lost among the "
                            "votes used); label more votes") from None
        big = np.abs(step).max(axis=-1, keepdims=True)
        step = np.where(big > 5.0, step * 5.0 / np.maximum(big, 1e-300), step)  # damped far from the optimum
        red = red - step
        if float(np.abs(step).max()) < tol:
            break
    theta = _full(k, red, ref)
    if not np.isfinite(theta).all() or float(np.abs(theta).max()) > 30:
        raise DataError("Bradley-Terry fit: no finite fit (a system that never won or never lost among the votes "
                        "used); label more votes")
    return theta


def bt_fit(votes: VotePairs, y: np.ndarray, *, reference: int = 0) -> np.ndarray:
    """Bradley-Terry scores (ties as halves, ``theta[reference] = 0``) fitted to every vote's label ``y``."""
    yo = votes.orient(y)
    m = votes.onehot()
    n = np.asarray(m.sum(axis=0)).reshape(1, -1)
    t = np.asarray(m.T @ yo).reshape(1, -1)
    theta: np.ndarray = _newton(votes.pairs, votes.k, n / len(yo), t / len(yo), reference)[0]
    return theta


@dataclass(frozen=True)
class PPIBradleyTerry:
    """PPI++ Bradley-Terry fits, one per label set (leading axis S).

    ``theta[s, i]``: score with ``theta[s, reference] = 0``; ``cov[s]``: its covariance (row and column of the
    reference zero), so the variance of a contrast c is c^T cov c; ``lam[s]``: the power-tuning weight;
    ``labelled[s]``: human labels used; ``votes[s]``: votes used (labelled and judged only). ``interval(level)`` gives normal intervals of the
    scores against the reference, ``contrast_se(i, j)`` the standard error of theta_i - theta_j.
    """

    theta: np.ndarray
    cov: np.ndarray
    lam: np.ndarray
    labelled: np.ndarray
    votes: np.ndarray
    reference: int
    finite_population: bool

    @property
    def se(self) -> np.ndarray:
        se: np.ndarray = np.sqrt(np.clip(np.diagonal(self.cov, axis1=-2, axis2=-1), 0.0, None))
        return se

    def contrast_se(self, i: np.ndarray | int, j: np.ndarray | int) -> np.ndarray:
        """Standard errors of theta_i - theta_j ([S, ...] for index arrays i, j of one shape)."""
        ii, jj = np.asarray(i), np.asarray(j)
        c = self.cov
        var = c[..., ii, ii] + c[..., jj, jj] - c[..., ii, jj] - c[..., jj, ii]
        se: np.ndarray = np.sqrt(np.clip(var, 0.0, None))
        return se

    def interval(self, confidence_level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        from scipy.stats import norm

        z = float(norm.ppf(0.5 + confidence_level / 2))
        return self.theta - z * self.se, self.theta + z * self.se


def _check_inputs(votes: VotePairs, y: np.ndarray, judge: np.ndarray, labelled: np.ndarray,
                  unlabelled: np.ndarray | None, lam: float | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    v = len(votes.pair)
    yy = np.asarray(y, dtype=float).reshape(-1)
    ff = np.asarray(judge, dtype=float).reshape(-1)
    lab = np.atleast_2d(np.asarray(labelled, dtype=bool))
    unl = ~lab if unlabelled is None else np.broadcast_to(np.atleast_2d(np.asarray(unlabelled, dtype=bool)),
                                                           lab.shape)
    if yy.shape != (v,) or ff.shape != (v,) or lab.shape[-1] != v:
        raise DataError(f"PPI Bradley-Terry: human labels, judge verdicts and the labelled mask need one entry per "
                        f"vote ({v}); got {yy.shape}, {ff.shape}, {lab.shape}")
    if (lab & unl).any():
        raise DataError("PPI Bradley-Terry: a vote is both labelled and unlabelled")
    for name, arr in (("human labels", yy), ("judge verdicts", ff)):
        if not np.isfinite(arr).all() or arr.min() < 0 or arr.max() > 1:
            raise DataError(f"PPI Bradley-Terry: {name} must lie in [0, 1] (1: left preferred, 0.5: tie)")
    n, big_n = lab.sum(axis=-1), unl.sum(axis=-1)
    if (n < 2).any():
        raise DataError(f"PPI Bradley-Terry: each label set needs at least 2 labelled votes, got {int(n.min())}")
    if (lam is None or lam > 0) and (big_n < 2).any():
        raise DataError(f"PPI Bradley-Terry: the judge term needs at least 2 unlabelled votes per label set, got "
                        f"{int(big_n.min())} (lam = 0 needs none)")
    return votes.orient(yy), votes.orient(ff), lab, np.asarray(unl)


def ppi_bradley_terry(votes: VotePairs, y: np.ndarray, judge: np.ndarray, labelled: np.ndarray, *,
                      unlabelled: np.ndarray | None = None, lam: float | None = None, reference: int = 0,
                      finite_population: bool = False) -> PPIBradleyTerry:
    """PPI++ Bradley-Terry scores from human labels ``y`` where ``labelled[s, v]`` and judge verdicts on every vote.

    ``y``, ``judge``: per vote, the label for the *left* system (1 win, 0 loss, 0.5 tie; ``y`` is read only where
    labelled); ``labelled``: [S, V] (or [V]) bool, one label set per row; ``unlabelled``: the votes only the judge
    saw (default: the rest; a stream's prefix passes its own). With ``lam=0`` there may be none.
    ``lam``: None tunes it (PPI++), 0 is the human-only fit with its classical sandwich, 1 plain PPI.
    ``finite_population``: the variance for the fit to these V votes (see the module docstring).
    """
    from scipy import sparse

    yo, fo, lab, unl = _check_inputs(votes, y, judge, labelled, unlabelled, lam)
    pairs, k, v = votes.pairs, votes.k, len(votes.pair)
    if not 0 <= reference < k:
        raise DataError(f"PPI Bradley-Terry: reference must be a system index in 0..{k - 1}, got {reference}")
    if lam is not None and not 0.0 <= lam <= 1.0:
        raise DataError(f"PPI Bradley-Terry: lam must lie in [0, 1] or be None (tuned), got {lam!r}")
    m = votes.onehot()
    L = sparse.csr_matrix(lab.astype(float))
    U = sparse.csr_matrix(unl.astype(float))

    def agg(mask, x: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
        return np.asarray((mask.multiply(x.reshape(1, -1)) @ m).todense())

    nl, sy, sf = agg(L, np.ones(v)), agg(L, yo), agg(L, fo)
    syy, sff, syf = agg(L, yo * yo), agg(L, fo * fo), agg(L, yo * fo)
    nu, uf, uff = agg(U, np.ones(v)), agg(U, fo), agg(U, fo * fo)
    n = lab.sum(axis=-1).astype(float)[:, None]
    big_n = np.maximum(unl.sum(axis=-1).astype(float)[:, None], 1.0)  # 1 where none (lam = 0: no judge term)
    has_u = np.asarray(unl.any(axis=-1), dtype=bool)

    def fit(lmb: np.ndarray) -> np.ndarray:
        lb = lmb[:, None]
        w = lb * nu / big_n + (1 - lb) * nl / n
        t = lb * uf / big_n + (sy - lb * sf) / n
        return _newton(pairs, k, w, t, reference)

    def stats(theta: np.ndarray, use_unlabelled: np.ndarray):  # type: ignore[no-untyped-def]
        sig = _sigmoid(_diff(pairs, theta))
        curv = sig * (1 - sig)
        h_all = _lap(pairs, k, (nl + nu) * curv / (nl + nu).sum(axis=-1, keepdims=True), reference)
        h_lab = _lap(pairs, k, nl * curv / n, reference)
        h = np.where(use_unlabelled[:, None, None], h_all, h_lab)
        return sig, np.linalg.inv(h)

    def cov_of(sum_sq: np.ndarray, sum_1: np.ndarray, count: np.ndarray) -> np.ndarray:
        """np.cov (ddof 1) of per-vote gradients x_p r_v from per-pair sums of r^2 and r over ``count`` votes."""
        mean = _vec(pairs, k, sum_1, reference) / count
        c = count[..., None]
        out: np.ndarray = (_lap(pairs, k, sum_sq, reference) - c * mean[..., :, None] * mean[..., None, :]) / (c - 1)
        return out

    def tune(theta: np.ndarray) -> np.ndarray:
        sig, hi = stats(theta, np.ones(len(n), dtype=bool))
        # cross term: (1/n) (Gc^T Ghc + Ghc^T Gc), gradients (sig - y) x and (sig - f) x on the labelled votes
        s_y1, s_f1 = sig * nl - sy, sig * nl - sf
        s_yf = sig * sig * nl - sig * (sy + sf) + syf
        mg, mf = _vec(pairs, k, s_y1, reference) / n, _vec(pairs, k, s_f1, reference) / n
        cross = _lap(pairs, k, s_yf, reference) - n[..., None] * mg[..., :, None] * mf[..., None, :]
        cross = (cross + np.swapaxes(cross, -1, -2)) / n[..., None]
        na = nl + nu
        s_ff_all = sig * sig * na - 2 * sig * (sf + uf) + (sff + uff)
        var_f = cov_of(s_ff_all, sig * na - (sf + uf), na.sum(axis=-1, keepdims=True))
        num = np.trace(hi @ cross @ hi, axis1=-2, axis2=-1)
        den = 2 * (1 + n[:, 0] / big_n[:, 0]) * np.trace(hi @ var_f @ hi, axis1=-2, axis2=-1)
        out: np.ndarray = np.clip(num / den, 0.0, 1.0)
        return out

    if lam is None:
        # lambda's statistics at the human-only fit (consistent; ppi_py starts from lam = 1, whose rectified loss
        # can have no finite minimum on sparse pairs when a judge is one-sided), re-estimated once at the tuned fit
        # as ppi_py does before its interval
        lmb = tune(fit(np.zeros(len(n))))
        lmb = tune(fit(lmb))
    else:
        lmb = np.full(len(n), float(lam))
    theta = fit(lmb)
    sig, hi = stats(theta, lmb != 0)
    lb = lmb[:, None]
    # labelled: r_v = (sig - y) - lam (sig - f) = (1 - lam) sig - y + lam f
    r1 = (1 - lb) * sig * nl - sy + lb * sf
    r2 = ((1 - lb) * sig) ** 2 * nl - 2 * (1 - lb) * sig * (sy - lb * sf) + (syy - 2 * lb * syf + lb * lb * sff)
    var = cov_of(r2, r1, n)
    uu = sig * sig * nu - 2 * sig * uf + uff
    var_u = np.where(has_u[:, None, None] & (lb > 0)[..., None],
                     (lb * lb)[..., None] * cov_of(uu, sig * nu - uf, np.maximum(big_n, 2.0)), 0.0)
    middle = (n / big_n)[..., None] * var_u + var
    if finite_population:
        var_y = cov_of(sig * sig * nl - 2 * sig * sy + syy, sig * nl - sy, n)
        middle = middle - (n / (n + unl.sum(axis=-1)[:, None]))[..., None] * var_y
    sigma = hi @ middle @ hi / n[..., None]
    keep = np.arange(k) != reference
    cov = np.zeros((len(n), k, k))
    cov[:, np.ix_(keep, keep)[0], np.ix_(keep, keep)[1]] = sigma
    return PPIBradleyTerry(theta, cov, lmb, n[:, 0].astype(int), unl.sum(axis=-1) + n[:, 0].astype(int),
                           int(reference), bool(finite_population))
