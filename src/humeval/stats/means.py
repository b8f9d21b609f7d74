r"""The mean of scores with a bootstrap interval over items, which stays on a bounded scale.

:func:`mean_ci` resamples **clusters** (the items: all judgements of an item stay together,
so judgements of one item are not counted as independent evidence) and computes the mean of
the resampled judgements, :math:`\bar x^*_b = \sum_i w_{bi} S_i / \sum_i w_{bi} C_i` with
:math:`S_i, C_i` the item's score sum and judgement count and :math:`w_{bi}` the bootstrap
counts. The interval is the bias-corrected and accelerated (BCa) one of Efron (1987):
quantiles :math:`\Phi(z_0 + (z_0 + z_\alpha)/(1 - a (z_0 + z_\alpha)))` of the bootstrap
means, with :math:`z_0 = \Phi^{-1}(\text{share of } \bar x^* \text{ below } \bar x`, ties
counted half) and the acceleration :math:`a` from the leave-one-item-out means. Its ends
are bootstrap means, and a mean of answers on the scale is on the scale, so the interval
never leaves the scale (a t interval does for scores piled up at an end: Likert -0.5,
slider 103.1). When every bootstrap mean lies on one side of the estimate, :math:`z_0` is
infinite and the percentile interval is returned instead (``method`` says so).

Checked against :func:`scipy.stats.bootstrap` (``method="BCa"``) on one judgement per item,
where the two agree up to Monte Carlo error (``tests/unit/stats/test_means.py``).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from humeval.errors import DataError
from humeval.rng import Seed, as_generator
from humeval.stats._bootstrap import no_interval, percentile_ci, resample_weights, signable
from humeval.stats._checks import as_float_array, check_confidence_level, check_n_boot
from humeval.stats._result import Estimate

__all__ = ["mean_ci"]

_NORMAL = NormalDist()


def mean_ci(values: np.ndarray, clusters: np.ndarray | None = None, *, confidence_level: float = 0.95,
            n_boot: int = 2000, seed: Seed = 0) -> Estimate:
    """Mean of ``values`` with a BCa bootstrap interval resampling ``clusters`` (default: each value alone).

    ``clusters``: a label per value (e.g. the item id); values with the same label are resampled
    together. Fewer than two clusters, or fewer than two values, give a NaN interval.

    Checked against ``scipy.stats.bootstrap(method="BCa")`` (one value per cluster, up to Monte
    Carlo error) and hand cases; interval coverage by simulation near the end of a Likert scale.

    Examples:
        >>> import numpy as np
        >>> from humeval.stats import mean_ci
        >>> r = mean_ci(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
        >>> r.estimate, r.ci_low < 3 < r.ci_high
        (3.0, True)
        >>> # values of the same item are resampled together
        >>> r = mean_ci(np.array([1.0, 2.0, 4.0, 5.0]), clusters=np.array(["a", "a", "b", "b"]))
        >>> r.estimate, r.n
        (3.0, 4)
    """
    x = as_float_array(values, "values", 1, allow_nan=False)
    confidence_level = check_confidence_level(confidence_level, "mean_ci")
    if check_n_boot(n_boot) < 1:
        raise DataError(f"mean_ci: n_boot must be at least 1 (the interval is a bootstrap), got {n_boot}")
    if clusters is None:
        sums, counts = x, np.ones_like(x)
    else:
        labels = np.asarray(clusters)
        if labels.shape != x.shape:
            raise DataError(f"mean_ci: clusters must give one label per value ({x.size}), got shape {labels.shape}")
        _, idx = np.unique(labels, return_inverse=True)
        sums, counts = np.bincount(idx, weights=x), np.bincount(idx).astype(float)
    est = float(x.mean()) if x.size else float("nan")
    extra = {"n_boot": n_boot, "clusters": int(sums.size), "confidence_level": confidence_level}
    method = "mean, BCa bootstrap over items"
    if x.size < 2 or sums.size < 2:
        what = f"{x.size} answer(s)" if x.size < 2 else "1 item"
        return Estimate(est, n=x.size, method=method,
                        extra=extra | no_interval(f"not enough data: {what}; a bootstrap interval needs two or more"))
    if np.ptp(x) == 0:  # every answer the same: every resample has the same mean
        return Estimate(est, n=x.size, method=method, extra=extra | no_interval(
            f"not enough data: all {x.size} answers are {est:g}, so resampling shows no spread"))
    boots = np.concatenate([(w @ sums) / (w @ counts)
                            for w in resample_weights(as_generator(seed), sums.size, n_boot)])
    below = (np.count_nonzero(boots < est) + 0.5 * np.count_nonzero(boots == est)) / boots.size
    if not 0.0 < below < 1.0:
        low, high, _, reason = percentile_ci(boots, confidence_level, est)
        return Estimate(est, low, high, n=x.size, method="mean, percentile bootstrap over items",
                        extra=extra | no_interval(reason))
    z0 = _NORMAL.inv_cdf(below)
    jack = (sums.sum() - sums) / np.maximum(counts.sum() - counts, 1e-300)
    d = jack.mean() - jack
    denom = 6.0 * float(np.sum(d ** 2)) ** 1.5
    accel = float(np.sum(d ** 3)) / denom if denom > 0 else 0.0
    tail = (1.0 - confidence_level) / 2.0
    levels = []
    for q in (tail, 1.0 - tail):
        z = z0 + _NORMAL.inv_cdf(q)
        levels.append(_NORMAL.cdf(z0 + z / (1.0 - accel * z)))
    low, high = (float(v) for v in np.quantile(boots, levels))
    reason = signable(est, low, high, confidence_level=confidence_level)
    if reason is not None:
        low = high = float("nan")
    return Estimate(est, low, high, n=x.size, method=method,
                    extra=extra | {"z0": z0, "acceleration": accel} | no_interval(reason))
