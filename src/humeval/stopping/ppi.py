r"""An anytime-valid prediction-powered rule for one pairwise comparison (``ppi-betting``).

Items arrive one at a time. An automatic judge gives a verdict :math:`f_i \in \{0, \tfrac12, 1\}`
on every item (1: A preferred); a human labels the item with a known probability
:math:`\pi` (:math:`\xi_i = 1`), giving :math:`y_i`. The prediction-powered term

.. math::

    z_i = \lambda_i f_i + (y_i - \lambda_i f_i)\,\xi_i / \pi

has conditional mean :math:`p = E[y]`, the human win rate of A, for any weight
:math:`\lambda_i` fixed before item :math:`i` (here: the slope of the human on the judge
outcomes among the items labelled so far, clipped to [0, 1]), because :math:`\xi_i` is
independent of :math:`(f_i, y_i)`. The terms lie in :math:`[\lambda_i(1 - 1/\pi), 1/\pi]`.

Two betting processes test :math:`p \le 1/2` and :math:`p \ge 1/2`:
:math:`K^\pm_n = \prod_i (1 \pm b^\pm_i (z_i - 1/2))` with predictable bets
:math:`b^\pm_i \ge 0` (the predictable plug-in of Waudby-Smith & Ramdas 2023, capped at half
the largest bet that keeps every factor positive). Each is a nonnegative supermartingale
under its null, so :math:`M_n = (K^+_n + K^-_n)/2` is one under :math:`p = 1/2`; the rule
decides A when :math:`M_n \ge 1/\delta` and :math:`K^+_n > K^-_n` (B symmetrically). As for
the beta-mixture rule (:mod:`humeval.stopping.mixture`), Ville's inequality bounds the
chance of ever deciding wrongly by :math:`\delta` for every :math:`p`, under continuous
monitoring and with no horizon.

Assumptions: items are exchangeable draws, the labelling coin :math:`\xi_i` is drawn
independently with the declared :math:`\pi`, and the judge's verdicts do not depend on the
human labels. A useless judge is not free: with :math:`\lambda \approx 0` the terms are
inverse-probability-weighted human labels, noisier than the labels themselves, so the rule
then needs more human labels than the human-only rule (measured by
:func:`humeval.simulate.ppi_stopping.simulate_ppi_stopping`).

References: Angelopoulos et al. (2023), Science 382; Zrnic & Candès (2024), ICML (active
inference); Waudby-Smith & Ramdas (2023), JRSS-B 86(1) (betting confidence sequences);
Kilian, Cortinovis & Caron (2025) (anytime-valid prediction-powered inference);
Ville (1939).
Checked against: a direct item-by-item loop (tests/unit/stopping/test_ppi_rule.py) and the
measured wrong-decision rate under the null.
"""

from __future__ import annotations

import numpy as np

from humeval.errors import DataError
from humeval.stopping._validate import check_delta
from humeval.stopping.decision import PathDecisions

__all__ = ["ppi_betting_paths"]

_CAP = 0.5  # bets at most half the largest bet that keeps the factor positive
_M0 = 0.5


def _shifted_cumsum(x: np.ndarray) -> np.ndarray:
    """Sums over the items before each item (0 for the first)."""
    out = np.zeros_like(x)
    np.cumsum(x[..., :-1], axis=-1, out=out[..., 1:])
    return out


def ppi_betting_paths(judge: np.ndarray, human: np.ndarray, labelled: np.ndarray, probability: float,
                      delta: float) -> tuple[PathDecisions, np.ndarray]:
    """Run the rule on every path (row) at once; returns the decisions and the human labels used.

    ``judge``, ``human``: outcomes for A (1, 0, 0.5 for a tie) per path and item (``human``
    is read only where ``labelled``); ``labelled``: bool, drawn with ``probability``.
    ``PathDecisions.n`` counts items seen until the decision (0: none within the paths'
    length); the second array is the number of human labels among them (all labels seen
    when undecided).
    """
    delta = check_delta(delta)
    if not 0 < probability <= 1:
        raise DataError(f"ppi-betting: the labelling probability must lie in (0, 1], got {probability}")
    f = np.atleast_2d(np.asarray(judge, dtype=float))
    xi = np.atleast_2d(np.asarray(labelled, dtype=bool))
    h = np.atleast_2d(np.asarray(human, dtype=float))
    if not (f.shape == h.shape == xi.shape):
        raise DataError(f"ppi-betting: judge, human and labelled need one shape, got {f.shape}, {h.shape}, {xi.shape}")
    y = np.where(xi, h, 0.0)
    # predictable lambda: slope of y on f among the items labelled before each item
    w = xi.astype(float)
    n_l = _shifted_cumsum(w)
    s_f, s_y = _shifted_cumsum(w * f), _shifted_cumsum(w * y)
    s_fy, s_ff = _shifted_cumsum(w * f * y), _shifted_cumsum(w * f * f)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = s_fy / n_l - s_f * s_y / n_l**2
        var = s_ff / n_l - (s_f / n_l) ** 2
        lam = np.where((n_l >= 2) & (var > 1e-12), np.clip(cov / np.where(var > 1e-12, var, 1.0), 0.0, 1.0), 0.0)
    z = lam * f + (y - lam * f) * w / probability
    # predictable plug-in bets from the terms before each item (prior: mean 1/2, variance 1/4, weight 1)
    t = np.arange(z.shape[-1], dtype=float)
    mean = (_M0 + _shifted_cumsum(z)) / (1 + t)
    var_z = (0.25 + _shifted_cumsum((z - mean) ** 2)) / (1 + t)
    edge = mean - _M0
    raw = np.abs(edge) / (var_z + edge**2)
    low, high = lam * (1 - 1 / probability), np.full_like(lam, 1 / probability)
    b_plus = np.where(edge > 0, np.minimum(raw, _CAP / (_M0 - low)), 0.0)
    b_minus = np.where(edge < 0, np.minimum(raw, _CAP / (high - _M0)), 0.0)
    log_plus = np.cumsum(np.log1p(b_plus * (z - _M0)), axis=-1)
    log_minus = np.cumsum(np.log1p(-b_minus * (z - _M0)), axis=-1)
    log_m = np.logaddexp(log_plus, log_minus) - np.log(2.0)
    hit = log_m >= np.log(1 / delta)
    any_hit = hit.any(axis=-1)
    first = hit.argmax(axis=-1)
    rows = np.arange(f.shape[0])
    outcome = np.where(any_hit, np.where(log_plus[rows, first] > log_minus[rows, first], 1, -1), 0)
    n = np.where(any_hit, first + 1, 0)
    labels = np.cumsum(w, axis=-1)
    used = np.where(any_hit, labels[rows, first], labels[:, -1]).astype(int)
    return PathDecisions(n=n.astype(int), outcome=outcome.astype(int)), used
