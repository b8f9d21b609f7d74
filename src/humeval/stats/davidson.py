"""Bradley-Terry scores with ties modelled (Davidson 1970), fitted to pair counts, batched.

Model. System i has log-strength theta_i (sum 0) and ties have one parameter nu = e^eta:

    P(i beats j) = pi_i / D,  P(tie) = nu sqrt(pi_i pi_j) / D,  D = pi_i + pi_j + nu sqrt(pi_i pi_j),

with pi_i = e^theta_i. Given that a vote is decisive, P(i beats j | decisive) = sigma(theta_i - theta_j):
the Bradley-Terry probability, which is what :mod:`humeval.stopping.pooled` tests. With x = theta_i - theta_j the
log-likelihood of a pair's counts (w_ij, w_ji, t_ij; n_ij their sum) is

    l_ij = (w_ij - w_ji) x / 2 + t_ij eta - n_ij ln(2 cosh(x / 2) + e^eta),

maximised by Newton-Raphson over (theta_1 .. theta_{K-1}, eta) with theta_0 = 0, then centred; batched over
leading axes (replays). Without any tie, nu = 0 (plain Bradley-Terry on the decisive votes). ``prior`` adds that
many wins each way to every pair (a ridge towards equal strengths, for estimates that always exist; 0 for the MLE).

Reference: Davidson, R. R. (1970), "On extending the Bradley-Terry model to accommodate ties in paired comparison
experiments", JASA 65(329), 317-328.
Checked against: scipy.optimize.minimize of the log-likelihood written from the probabilities above, and the
closed form of two systems (theta_A - theta_B = ln(w_AB / w_BA), nu = t / sqrt(w_AB w_BA)) in
tests/unit/stats/test_davidson.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from humeval.errors import DataError

__all__ = ["DavidsonFit", "davidson_fit"]


@dataclass(frozen=True)
class DavidsonFit:
    """Davidson fit(s): ``theta[..., i]`` centred log-strengths, ``nu[...]`` the tie parameter, ``converged[...]``."""

    theta: np.ndarray
    nu: np.ndarray
    converged: np.ndarray

    def order(self) -> np.ndarray:
        """Systems from strongest to weakest (``argsort(-theta)``, stable)."""
        return np.argsort(-self.theta, axis=-1, kind="stable")


def _check(wins: np.ndarray, ties: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(wins, dtype=float)
    t = np.asarray(ties, dtype=float)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2] or t.shape != w.shape:
        raise DataError(f"davidson_fit: wins and ties must be (..., K, K) arrays of one shape, got {w.shape} and {t.shape}")
    if (w < 0).any() or (t < 0).any() or not np.isfinite(w).all() or not np.isfinite(t).all():
        raise DataError("davidson_fit: counts must be finite and non-negative")
    return w, t


def davidson_fit(wins: np.ndarray, ties: np.ndarray, *, prior: float = 0.0, max_iter: int = 100,
                 tol: float = 1e-9) -> DavidsonFit:
    """Fit Davidson's model to ``wins[..., i, j]`` (votes preferring i to j) and symmetric ``ties[..., i, j]``.

    Fits whose MLE does not exist (a system that never won or never lost against the rest) come back with
    ``converged`` False and the Newton iterate where it stopped; pass ``prior > 0`` to always get a finite fit.
    A point fit: it carries no interval (the arena's statements are the anytime tests of
    :mod:`humeval.stopping.pooled`).

    Checked against: scipy's BFGS on Davidson's log-likelihood written out (random counts), the two-system
    closed form, and plain Bradley-Terry when there are no ties (tests/unit/stats/test_davidson.py).
    """
    w, t = _check(wins, ties)
    k = w.shape[-1]
    lead = w.shape[:-2]
    w = w.reshape((-1, k, k)) + prior * (1.0 - np.eye(k))
    t = 0.5 * (t + np.swapaxes(t, -1, -2)).reshape((-1, k, k))
    b = w.shape[0]
    n = w + np.swapaxes(w, -1, -2) + t
    with_ties = t.sum(axis=(-1, -2)) > 0
    t_total = t.sum(axis=(-1, -2)) / 2
    n_total = n.sum(axis=(-1, -2)) / 2
    # at equal strengths P(tie) = nu / (2 + nu): the start
    share = np.clip(t_total / np.maximum(n_total, 1.0), 1e-6, 1 - 1e-6)
    eta = np.where(with_ties, np.log(2 * share / (1 - share)), 0.0)
    theta = np.zeros((b, k))
    diffw = (w - np.swapaxes(w, -1, -2)) / 2
    converged = np.zeros(b, dtype=bool)
    eye = np.eye(k, dtype=bool)
    for _ in range(max_iter):
        x = theta[:, :, None] - theta[:, None, :]
        nu = np.where(with_ties, np.exp(eta), 0.0)[:, None, None]
        ch, sh = np.cosh(x / 2), np.sinh(x / 2)
        g = 2 * ch + nu
        grad_t = (diffw - n * sh / g).sum(axis=-1)
        grad_e = np.where(with_ties, t_total - 0.5 * (n * nu / g).sum(axis=(-1, -2)), 0.0)
        h = -n * (ch * g / 2 - sh * sh) / (g * g)  # d2 l / dx2 of each pair (symmetric)
        h = np.where(eye, 0.0, h)
        hess_tt = -h + eye * h.sum(axis=-1)[:, :, None]  # d2 l / dtheta_k dtheta_l
        cross = (n * sh * nu / (g * g)).sum(axis=-1)  # d2 l / dtheta_k deta
        hess_ee = np.where(with_ties, -0.5 * (n * nu * (g - nu) / (g * g)).sum(axis=(-1, -2)), -1.0)
        hess = np.zeros((b, k, k))
        hess[:, : k - 1, : k - 1] = hess_tt[:, 1:, 1:]
        hess[:, : k - 1, k - 1] = hess[:, k - 1, : k - 1] = np.where(with_ties[:, None], cross[:, 1:], 0.0)
        hess[:, k - 1, k - 1] = hess_ee
        grad = np.concatenate([grad_t[:, 1:], grad_e[:, None]], axis=1)
        with np.errstate(all="ignore"):
            try:
                step = np.linalg.solve(-hess, grad[:, :, None])[..., 0]
            except np.linalg.LinAlgError:
                step = np.stack([np.linalg.lstsq(-hh, gg, rcond=None)[0] for hh, gg in zip(hess, grad, strict=True)])
        step = np.clip(np.nan_to_num(step), -2.0, 2.0)
        theta[:, 1:] += step[:, : k - 1]
        eta = eta + np.where(with_ties, step[:, k - 1], 0.0)
        converged = np.abs(step).max(axis=1) < tol
        if converged.all():
            break
    theta -= theta.mean(axis=1, keepdims=True)
    nu_out = np.where(with_ties, np.exp(eta), 0.0)
    return DavidsonFit(theta.reshape((*lead, k)), nu_out.reshape(lead), converged.reshape(lead))
