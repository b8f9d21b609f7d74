"""Agreement of system rankings, vectorised over many subsets: Kendall tau-b and top-1 accuracy."""

from __future__ import annotations

import numpy as np

__all__ = ["kendall_tau_b", "permutation_tau", "top1_accuracy"]


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between each row of ``x`` (``(..., m)``) and ``y`` (``(m,)``).

    ``tau_b = (C - D) / sqrt((P - T_x) (P - T_y))`` over the ``P = m (m - 1) / 2`` pairs, where
    ``T_x``, ``T_y`` count pairs tied in ``x`` and ``y`` (Kendall 1945). Undefined (NaN)
    when either side is constant, like ``scipy.stats.kendalltau``.
    Checked against: ``scipy.stats.kendalltau(x, y, variant="b")``.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    i, j = np.triu_indices(y.shape[-1], k=1)
    sx = np.sign(x[..., i] - x[..., j])
    sy = np.sign(y[i] - y[j])
    concord = (sx * sy).sum(axis=-1)
    untied_x = (sx != 0).sum(axis=-1)
    untied_y = (sy != 0).sum()
    denom = np.sqrt(untied_x * float(untied_y))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, concord / np.where(denom > 0, denom, 1.0), np.nan)


def top1_accuracy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Whether the best system of each row of ``x`` is a best system of ``y``.

    With ties for the top of ``x`` the value is the share of the tied systems that are
    best in ``y`` (the expected accuracy when the tie is broken at random).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    best_x = np.isclose(x, x.max(axis=-1, keepdims=True), rtol=0, atol=1e-12)
    best_y = np.isclose(y, y.max(), rtol=0, atol=1e-12)
    return (best_x & best_y).sum(axis=-1) / best_x.sum(axis=-1)


def permutation_tau(subset: np.ndarray, full: np.ndarray) -> float:
    """The CASF authors' "Kendall tau": Kendall tau between the two *argsort permutations*.

    ``kendalltau(argsort(full), argsort(subset))`` over the systems' mean scores (``CASF.py``,
    EnablerRx/CASF e6bd7b9): which system sits at rank 1, 2, ... rather than each system's rank,
    ties broken by system order (a stable argsort; NumPy's default sort is stable below 16
    elements, so it agrees with the authors' code there). Used only to recompute the paper's
    Table 1; :func:`kendall_tau_b` is the measure humeval reports.
    Checked against: the authors' code run beside on the shipped data (docs/reproduction.md).
    """
    a = np.argsort(np.asarray(full, dtype=float), kind="stable").astype(float)
    b = np.argsort(np.asarray(subset, dtype=float), kind="stable").astype(float)
    return float(kendall_tau_b(b, a))
