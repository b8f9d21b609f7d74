"""Correlations between criteria: Pearson, Spearman, Kendall tau-b, with confidence intervals."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from humeval.errors import DataError
from humeval.rng import Seed, as_generator
from humeval.stats._bootstrap import no_interval, percentile_ci
from humeval.stats._checks import (
    as_float_array,
    check_choice,
    check_confidence_level,
    check_n_boot,
)
from humeval.stats._result import Estimate

__all__ = ["CI_METHODS", "kendall", "pearson", "spearman"]

CI_METHODS = ("fisher", "bootstrap")


def _pair(x: object, y: object, name: str) -> tuple[np.ndarray, np.ndarray]:
    a = as_float_array(x, "x", 1, allow_nan=False)
    b = as_float_array(y, "y", 1, allow_nan=False)
    if a.size != b.size:
        raise DataError(
            f"{name}: x has {a.size} values but y has {b.size}; correlations need pairs"
        )
    if a.size < 4:
        raise DataError(f"{name}: {a.size} pairs; need at least 4 (Fisher z uses n - 3)")
    for label, v in (("x", a), ("y", b)):
        if np.ptp(v) == 0:
            raise DataError(
                f"{name}: {label} is constant ({v[0]:g} for all {v.size} values); correlation is undefined"
            )
    return a, b


def _pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise Pearson r of two (m, n) arrays."""
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r: np.ndarray = (a * b).sum(axis=-1) / np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    clipped: np.ndarray = np.clip(r, -1.0, 1.0)
    return clipped


def _fisher_ci(r: float, se: float, confidence_level: float) -> tuple[float, float]:
    z = np.arctanh(np.clip(r, -0.9999999999, 0.9999999999))
    q = sps.norm.ppf(1 - (1 - confidence_level) / 2)
    return float(np.tanh(z - q * se)), float(np.tanh(z + q * se))


def _bootstrap_ci(
    a: np.ndarray, b: np.ndarray, stat: str, n_boot: int, seed: Seed, confidence_level: float, estimate: float
) -> tuple[float, float, int, str | None]:
    rng = as_generator(seed)
    n = a.size
    block = max(1, 2_000_000 // n)
    out = []
    for start in range(0, n_boot, block):
        idx = rng.integers(0, n, size=(min(block, n_boot - start), n))
        xa, xb = a[idx], b[idx]
        if stat == "spearman":
            xa, xb = sps.rankdata(xa, axis=1), sps.rankdata(xb, axis=1)
        if stat == "kendall":
            out.append(
                np.array([sps.kendalltau(ra, rb).statistic for ra, rb in zip(xa, xb, strict=True)])
            )
        else:
            out.append(_pearson_rows(xa, xb))
    return percentile_ci(np.concatenate(out), confidence_level, estimate)


def _finish(
    name: str,
    r: float,
    p: float,
    n: int,
    se: float,
    ci: str,
    n_boot: int,
    seed: Seed,
    confidence_level: float,
    a: np.ndarray,
    b: np.ndarray,
) -> Estimate:
    ci = check_choice(ci, CI_METHODS, f"{name}: ci")
    extra: dict[str, object] = {"ci_method": ci, "ci_level": confidence_level}
    if ci == "fisher":
        lo, hi = _fisher_ci(r, se, confidence_level)
        extra["se_z"] = se
    else:
        n_boot = check_n_boot(n_boot)
        if n_boot < 1:
            raise DataError(f"{name}: ci='bootstrap' needs n_boot >= 1, got {n_boot}")
        lo, hi, valid, reason = _bootstrap_ci(a, b, name, n_boot, seed, confidence_level, r)
        extra.update(
            n_boot=n_boot, n_boot_valid=valid, seed=seed if isinstance(seed, int) else "generator",
            **no_interval(reason),
        )
    return Estimate(r, lo, hi, p, n, name, extra)


def pearson(
    x: object,
    y: object,
    *,
    ci: str = "fisher",
    confidence_level: float = 0.95,
    n_boot: int = 1000,
    seed: Seed = 0,
) -> Estimate:
    r"""Pearson's r with a Fisher-z (or percentile bootstrap) CI.

    :math:`r = \frac{\sum (x-\bar x)(y-\bar y)}{\sqrt{\sum (x-\bar x)^2 \sum (y-\bar y)^2}}`;
    p from :math:`t = r\sqrt{(n-2)/(1-r^2)}` with n-2 df; CI
    :math:`\tanh(\operatorname{atanh} r \pm z_{1-\alpha/2}/\sqrt{n-3})` with
    :math:`1 - \alpha` = ``confidence_level`` (0.95: the 95% interval). ``ci`` is the
    interval's method (``fisher`` or ``bootstrap``, a percentile bootstrap over pairs with
    ``n_boot`` samples and ``seed``), not its level.

    Reference: Fisher, R. A. (1921). Metron 1, 3-32. R: ``cor.test(method="pearson")``.

    Checked against: ``scipy.stats.pearsonr`` (r, p, and ``confidence_interval()``; 1e-10)
    and ``pingouin.corr``.

    Examples:
        >>> from humeval.stats import pearson
        >>> # by hand: deviations (-2, -1, 0, 1, 2) and (-2, -1, 1, 0, 2): r = 9 / sqrt(10 x 10) = 0.9
        >>> r = pearson([1, 2, 3, 4, 5], [1, 2, 4, 3, 5])
        >>> # scipy.stats.pearsonr(x, y); R: cor.test(x, y)
        >>> round(r.estimate, 4), round(r.p_value, 4)
        (0.9, 0.0374)
        >>> round(r.ci_low, 4), round(r.ci_high, 4)  # Fisher z interval, as R cor.test
        (0.0861, 0.9934)
    """
    confidence_level = check_confidence_level(confidence_level, "pearson")
    a, b = _pair(x, y, "pearson")
    r = float(_pearson_rows(a, b))
    n = a.size
    p = _t_pvalue(r, n)
    return _finish(
        "pearson", r, p, n, 1.0 / np.sqrt(n - 3), ci, n_boot, seed, confidence_level, a, b
    )


def _t_pvalue(r: float, n: int) -> float:
    if abs(r) >= 1.0:
        return 0.0
    t = r * np.sqrt((n - 2) / (1.0 - r * r))
    return float(2 * sps.t.sf(abs(t), n - 2))


def spearman(
    x: object,
    y: object,
    *,
    ci: str = "fisher",
    confidence_level: float = 0.95,
    n_boot: int = 1000,
    seed: Seed = 0,
) -> Estimate:
    r"""Spearman's rho (Pearson r of mid-ranks) with a Fisher-z or bootstrap CI.

    p-value from the t approximation :math:`t = \rho\sqrt{(n-2)/(1-\rho^2)}` (as
    ``scipy.stats.spearmanr`` and R ``cor.test(method="spearman", exact=FALSE)``). The
    Fisher-z CI uses the Bonett & Wright (2000) standard error
    :math:`\sqrt{(1 + \rho^2/2)/(n-3)}`.

    Reference: Spearman, C. (1904). American Journal of Psychology 15, 72-101;
    Bonett, D. G. & Wright, T. A. (2000). Psychometrika 65, 23-28.

    Checked against: ``scipy.stats.spearmanr`` (rho and p; 1e-10); CI against the
    Bonett-Wright formula computed by hand in the test.

    Examples:
        >>> from humeval.stats import spearman
        >>> # ranks (1..5) and (1, 2, 4, 3, 5): rho = 1 - 6 x 2 / (5 x 24) = 0.9
        >>> # scipy.stats.spearmanr; R: cor(x, y, method="spearman")
        >>> round(spearman([10, 20, 30, 40, 50], [1, 2, 9, 3, 10]).estimate, 4)
        0.9
    """
    confidence_level = check_confidence_level(confidence_level, "spearman")
    a, b = _pair(x, y, "spearman")
    r = float(_pearson_rows(sps.rankdata(a), sps.rankdata(b)))
    n = a.size
    return _finish(
        "spearman",
        r,
        _t_pvalue(r, n),
        n,
        float(np.sqrt((1 + r * r / 2) / (n - 3))),
        ci,
        n_boot,
        seed,
        confidence_level,
        a,
        b,
    )


def kendall(
    x: object,
    y: object,
    *,
    ci: str = "fisher",
    confidence_level: float = 0.95,
    n_boot: int = 1000,
    seed: Seed = 0,
) -> Estimate:
    r"""Kendall's tau-b with a Fisher-z or bootstrap CI.

    :math:`\tau_b = (n_c - n_d)/\sqrt{(n_0 - n_1)(n_0 - n_2)}` (ties in x, y corrected),
    computed with ``scipy.stats.kendalltau`` (O(n log n)); p-value as scipy (exact without
    ties for small n, otherwise the tie-corrected normal approximation, as R
    ``cor.test(method="kendall")``). The Fisher-z CI uses the Fieller, Hartley & Pearson
    (1957) standard error :math:`\sqrt{0.437/(n-4)}`; a bootstrap CI re-runs tau per sample.

    Reference: Kendall, M. G. (1945). Biometrika 33(3), 239-251.

    Checked against: ``scipy.stats.kendalltau`` and ``pingouin.corr(method="kendall")``
    (1e-12), and a vectorised O(n^2) tau-b over all pairs in the test.

    Examples:
        >>> from humeval.stats import kendall
        >>> # 10 pairs, 9 concordant and 1 discordant: tau = (9 - 1) / 10
        >>> # scipy.stats.kendalltau; R: cor(x, y, method="kendall")
        >>> round(kendall([1, 2, 3, 4, 5], [1, 3, 2, 4, 5]).estimate, 4)
        0.8
    """
    confidence_level = check_confidence_level(confidence_level, "kendall")
    a, b = _pair(x, y, "kendall")
    if a.size < 5:
        raise DataError(f"kendall: {a.size} pairs; need at least 5 (Fieller's SE uses n - 4)")
    res = sps.kendalltau(a, b)
    return _finish(
        "kendall",
        float(res.statistic),
        float(res.pvalue),
        a.size,
        float(np.sqrt(0.437 / (a.size - 4))),
        ci,
        n_boot,
        seed,
        confidence_level,
        a,
        b,
    )
