r"""A binomial proportion's interval that stays in [0, 1]: Wilson's score interval.

.. math::

    \frac{\hat p + \frac{z^2}{2n} \pm z \sqrt{\frac{\hat p (1-\hat p)}{n} + \frac{z^2}{4n^2}}}{1 + \frac{z^2}{n}}

with :math:`\hat p = s/n` and :math:`z` the standard normal quantile at :math:`1 - (1 - \text{level})/2`. Unlike
the Wald interval :math:`\hat p \pm z\sqrt{\hat p(1-\hat p)/n}` it never leaves [0, 1] and keeps close to its
nominal coverage at small n (Brown, Cai & DasGupta 2001). No SciPy: the collection server's admin page uses it.

Reference: Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
JASA 22(158), 209-212. R: ``prop.test(s, n, correct = FALSE)$conf.int``.

Checked against: ``statsmodels.stats.proportion.proportion_confint(method="wilson")``
(``tests/unit/stats/test_proportion.py``).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from humeval.errors import DataError
from humeval.stats._checks import check_confidence_level

__all__ = ["wilson_interval"]


def wilson_interval(successes: int, n: int, *, confidence_level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of ``successes`` out of ``n`` at ``confidence_level``, within [0, 1].

    ``n = 0`` gives ``(0.0, 1.0)``: no outcome says nothing about the proportion.

    Checked against: ``statsmodels.stats.proportion.proportion_confint(method="wilson")`` (1e-12), 0 and n
    successes included.

    Examples:
        >>> from humeval.stats import wilson_interval
        >>> low, high = wilson_interval(7, 10)
        >>> round(low, 4), round(high, 4)  # R: prop.test(7, 10, correct=FALSE)$conf.int
        (0.3968, 0.8922)
    """
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise DataError(f"wilson_interval: n must be a non-negative whole number, got {n!r}")
    if isinstance(successes, bool) or int(successes) != successes or not 0 <= successes <= n:
        raise DataError(f"wilson_interval: successes must be a whole number in [0, n = {n}], got {successes!r}")
    confidence_level = check_confidence_level(confidence_level, "wilson_interval")
    if n == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence_level) / 2.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # at s = 0 and s = n the ends are exactly 0 and 1 (centre - half cancels only up to rounding)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high
