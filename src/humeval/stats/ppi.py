r"""Prediction-powered inference: human labels on some items, an automatic judge on all of them.

A judge (an automatic metric, an LLM judge) scores every item; humans label ``n`` of them.
The prediction-powered estimate of a mean uses the judge everywhere and corrects its bias
with the human labels, so it stays unbiased whatever the judge's quality, and its interval
is narrower than the human-only one whenever the judge is informative:

.. math::

    \hat\theta_\lambda = \frac{1}{N}\sum_{j=1}^{N} \lambda \hat y^u_j
                       + \frac{1}{n}\sum_{i=1}^{n} (y_i - \lambda \hat y_i),
    \qquad
    \widehat{\mathrm{Var}} = \frac{\lambda^2 \hat\sigma^2(\hat y^u)}{N}
                           + \frac{\hat\sigma^2(y - \lambda \hat y)}{n}

(PPI++; ``lam=1`` is the original PPI, ``lam=0`` the human-only mean). The power-tuned
:math:`\hat\lambda = \widehat{\mathrm{Cov}}(y, \hat y) / ((1 + n/N)\, \widehat{\mathrm{Var}}(\hat y))`,
clipped to [0, 1], minimises the variance; an uninformative judge gets :math:`\hat\lambda \approx 0`
and the interval falls back to the human-only one. Intervals are normal (CLT) intervals.

**Scales.** :math:`\hat\lambda` is clipped to [0, 1], so the judge must be on the human
scale: a judge whose scores spread far less than the human ones (raw BERTScore, 0.85-0.9,
against a 1-5 rating) needs :math:`\lambda \gg 1`, gets 1, and loses most of its gain.
``calibrate=True`` first maps the judge onto the human scale with the least-squares line
fitted on the labelled items, :math:`\tilde y = \bar y + b(\hat y - \bar{\hat y})`,
:math:`b = \widehat{\mathrm{Cov}}(y, \hat y) / \widehat{\mathrm{Var}}(\hat y)` (labelled items,
ddof 0). The intercept cancels in :math:`\hat\theta_\lambda`, so the estimate is PPI++ with
its weight :math:`\lambda b` free of the [0, 1] clip.

**Calibration in the interval.** The line's two parameters are fitted on the labels the
estimate corrects with, and the plug-in PPI++ variance ignores that: at n = 20 labels its
95 % interval covered 0.905-0.919 (``benchmarks/bench_judges.py --labelled 20 --runs 4000``).
Given the judge's scores the calibrated estimate is linear in the labels: it is the fitted
line at :math:`x_0 = (1 - \lambda)\bar{\hat y} + \lambda \bar{\hat y}^u`,
:math:`\hat\theta = \sum_i a_i y_i` with :math:`a_i = 1/n + \lambda (\bar{\hat y}^u -
\bar{\hat y})(\hat y_i - \bar{\hat y}) / S_{xx}` (the weight :math:`\lambda` depends on the
judge's scores only). Its variance is the line's, counted with both parameters, plus the
judge's own sampling of :math:`x_0` (delta method, Var = E Var(.|judge) + Var E(.|judge)):

.. math::

    \widehat{\mathrm{Var}} = \sum_i a_i^2 \frac{r_i^2}{1 - h_i}
        + b^2 s^2_{\hat y}\Big(\frac{(1 - \lambda)^2}{n} + \frac{\lambda^2}{N}\Big)

with :math:`r_i` the line's residuals, :math:`h_i = 1/n + (\hat y_i - \bar{\hat y})^2 / S_{xx}`
its leverages (HC2, MacKinnon & White 1985: unbiased under constant variance, consistent
without it) and :math:`s^2_{\hat y}` the judge's variance over all ``n + N`` judged items (the
tuned :math:`\lambda` follows the labelled spread, so that spread would be biased low). The
interval is Student t with the Bell & McCaffrey (2002) degrees of freedom of the HC2 term,
:math:`\mathrm{tr}(DM)^2 / \mathrm{tr}(DMDM)`, :math:`M = I - H`, :math:`D = \mathrm{diag}(a_i^2
/ (1 - h_i))` (about ``n - 3``; the small-sample advice of Imbens & Kolesár 2016). To first
order this is the PPI++ variance (Angelopoulos, Duchi & Zrnic 2023), so large samples are as
before; the added terms are the O(1/n) parts the plug-in drops. A constant judge keeps slope 0
and the one-sample t interval of the labels. Coverage (same benchmark, 4,000 runs, rho 0.5 /
0.7 / 0.9, Monte Carlo standard error 0.003-0.004): n = 20: 0.958 / 0.957 / 0.949; n = 50:
0.950 / 0.950 / 0.955; n = 200: 0.950 / 0.949 / 0.950. At n = 20 the interval is, if
anything, slightly conservative; the human-only normal interval beside it covers 0.926-0.932.
``calibrate=True`` needs at least 3 labels (2 fit the line exactly and leave no residual).

``extra["scale_ratio"]`` is the judge's spread over the humans' on the labelled items; without
calibration a ratio below 1/3 or above 3 is reported in ``extra["warning"]``.

Assumptions: the labelled items are a uniform random sample of the items (for
:func:`ppi_mean`); with items chosen with known, positive probabilities use
:func:`ppi_active_mean`. The judge's scores must not have been tuned on the human labels
(the linear calibration above is the only fit allowed, and is accounted for).

References: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023), Prediction-powered
inference, Science 382; Angelopoulos, Duchi & Zrnic (2023), PPI++: Efficient
prediction-powered inference, arXiv:2311.01453; Zrnic & Candès (2024), Active statistical
inference, ICML; MacKinnon & White (1985), Some heteroskedasticity-consistent covariance
matrix estimators with improved finite sample properties, J. Econometrics 29; Bell & McCaffrey
(2002), Bias reduction in standard errors for linear regression with multi-stage samples, Survey
Methodology 28; Imbens & Kolesár (2016), Robust standard errors in small samples: some practical
advice, Rev. Econ. Stat. 98.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from humeval.errors import DataError
from humeval.stats._checks import as_float_array, check_confidence_level
from humeval.stats._result import Estimate

__all__ = ["SCALE_WARNING_RATIO", "calibrate_linear", "ppi_active_mean", "ppi_difference", "ppi_labels_needed", "ppi_mean", "ppi_mean_arrays", "ppi_win_rate"]


def _arrays(y: object, yhat: object, yhat_unlabelled: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = as_float_array(y, "y (human labels)", 1, allow_nan=False)
    b = as_float_array(yhat, "yhat (judge on the labelled items)", 1, allow_nan=False)
    c = as_float_array(yhat_unlabelled, "yhat_unlabelled (judge on the other items)", 1, allow_nan=False)
    if a.size != b.size:
        raise DataError(f"y has {a.size} human labels but yhat has {b.size} judge scores; "
                        "they must score the same labelled items, in the same order")
    if a.size < 2 or c.size < 1:
        raise DataError(f"prediction-powered inference needs at least 2 labelled and 1 unlabelled item, "
                        f"got {a.size} and {c.size}")
    return a, b, c


#: a judge spread more than this many times narrower or wider than the humans is "on another scale"
SCALE_WARNING_RATIO = 3.0


def calibrate_linear(y: np.ndarray, yhat: np.ndarray,
                     yhat_u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The judge on the human scale: the least-squares line of ``y`` on ``yhat`` (labelled items), applied to both.

    Returns ``(yhat calibrated, yhat_unlabelled calibrated, intercept, slope)`` along the last
    axis (leading axes: independent problems). A constant judge keeps slope 0.

    Examples:
        >>> import numpy as np
        >>> from humeval.stats.ppi import calibrate_linear
        >>> y = np.array([1.0, 2.0, 3.0])
        >>> yhat = np.array([10.0, 20.0, 30.0])  # the judge on a scale ten times wider
        >>> on_scale, unlabelled, intercept, slope = calibrate_linear(y, yhat, np.array([15.0, 25.0]))
        >>> on_scale.round(4).tolist(), unlabelled.round(4).tolist(), round(float(intercept), 4), round(float(slope), 4)
        ([1.0, 2.0, 3.0], [1.5, 2.5], 0.0, 0.1)
    """
    ym, fm = y.mean(-1, keepdims=True), yhat.mean(-1, keepdims=True)
    var = np.mean((yhat - fm) ** 2, axis=-1, keepdims=True)
    cov = np.mean((y - ym) * (yhat - fm), axis=-1, keepdims=True)
    # a constant judge (spread at rounding level: var of 0.9 repeated is ~1e-32, not 0) carries no information
    flat = var <= (1e-10 * np.max(np.abs(yhat), axis=-1, keepdims=True)) ** 2
    slope = np.divide(cov, var, out=np.zeros_like(cov), where=~flat)
    intercept = ym - slope * fm
    return intercept + slope * yhat, intercept + slope * yhat_u, intercept[..., 0], slope[..., 0]


def _ppi(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray,
         lam: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, variance, lam) along the last axis (leading axes: independent problems)."""
    n, big_n = y.shape[-1], yhat_u.shape[-1]
    if lam is None:
        cov = np.mean((y - y.mean(-1, keepdims=True)) * (yhat - yhat.mean(-1, keepdims=True)), axis=-1)
        var = np.var(np.concatenate([yhat, yhat_u], axis=-1), axis=-1, ddof=1)
        with np.errstate(invalid="ignore", divide="ignore"):  # a constant judge carries no information
            lams = np.where(var > 0, np.clip(cov / ((1 + n / big_n) * np.where(var > 0, var, 1.0)), 0.0, 1.0), 0.0)
    else:
        lams = np.full(y.shape[:-1], float(lam))
    w = lams[..., None]
    estimate = lams * yhat_u.mean(-1) + (y - w * yhat).mean(-1)
    variance = lams**2 * np.var(yhat_u, axis=-1) / big_n + np.var(y - w * yhat, axis=-1) / n
    return estimate, variance, lams


def _calibrated_ppi(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray,
                    lam: float | None) -> tuple[np.ndarray, ...]:
    """(estimate, variance, lam, intercept, slope, degrees of freedom) of PPI++ on the judge calibrated by the line
    fitted on the same labels, the line's two parameters counted in the variance (module docstring, "Calibration in the interval")."""
    n, big_n = y.shape[-1], yhat_u.shape[-1]
    f, f_u, intercept, slope = calibrate_linear(y, yhat, yhat_u)
    estimate, _, lams = _ppi(y, f, f_u, lam)
    xc = yhat - yhat.mean(-1, keepdims=True)
    sxx = np.sum(xc**2, axis=-1)
    flat = slope == 0  # a constant judge (calibrate_linear's test): the line is the mean alone, one parameter
    w = lams[..., None]
    # the estimate is linear in y given the judge's scores: sum_i a_i y_i, the fitted line at x0 = (1 - lam) mean_l + lam mean_u
    d = (yhat_u.mean(-1) - yhat.mean(-1))[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        lever = np.where(flat[..., None], 0.0, xc / np.where(flat, 1.0, sxx)[..., None])
    a = 1 / n + w * d * lever
    h = 1 / n + xc * lever  # the fit's leverages
    residual = y - f
    # HC2 (MacKinnon & White 1985): residual^2 / (1 - h) is unbiased for each label's variance under homoscedasticity
    with np.errstate(invalid="ignore", divide="ignore"):
        part_y = np.sum(a**2 * residual**2 / (1 - h), axis=-1)
    # the judge's own sampling: the line's x0 is a mean of judge scores, (1 - lam) of the labelled and lam of the others;
    # their variance from every judged item (lam is tuned on the labelled spread, so that spread would be biased low)
    var_x = np.var(np.concatenate([yhat, yhat_u], axis=-1), axis=-1, ddof=1)
    part_x = slope**2 * var_x * ((1 - lams) ** 2 / n + lams**2 / big_n)
    # Bell & McCaffrey (2002) degrees of freedom of that HC2 variance (Satterthwaite, normal homoscedastic labels):
    # with M = I - H and D = diag(a^2 / (1 - h)), df = tr(DM)^2 / tr(DMDM), where H = U U', U = [1/sqrt(n), xc/sqrt(sxx)]
    # gives tr(DMDM) = sum d^2 - 2 sum d^2 h + ||U'DU||^2 (U'DU is 2 x 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        dd = a**2 / (1 - h)
        u1, u2 = np.full_like(xc, 1 / math.sqrt(n)), xc / np.sqrt(np.where(flat, 1.0, sxx))[..., None]
        u2 = np.where(flat[..., None], 0.0, u2)
        g11, g12, g22 = (np.sum(dd * p * q, axis=-1) for p, q in ((u1, u1), (u1, u2), (u2, u2)))
        tr_dm = np.sum(dd * (1 - h), axis=-1)
        tr_dmdm = np.sum(dd**2 * (1 - 2 * h), axis=-1) + g11**2 + 2 * g12**2 + g22**2
        df = np.where((tr_dmdm > 0) & (np.where(flat, n - 1, n - 2) > 0), tr_dm**2 / np.where(tr_dmdm > 0, tr_dmdm, 1.0), 0.0)
    variance = np.where(df > 0, part_y + part_x, np.nan)
    return estimate, variance, lams, intercept, slope, df


def ppi_mean_arrays(y: object, yhat: object, yhat_unlabelled: object, *, confidence_level: float = 0.95,
                    lam: float | None = None, calibrate: bool = False) -> dict[str, np.ndarray]:
    """:func:`ppi_mean` for many problems at once, along the last axis of each array.

    ``y`` and ``yhat`` have shape ``(..., n)``, ``yhat_unlabelled`` ``(..., N)`` with the same
    leading axes (e.g. one row per random subset and system). Returns arrays of the leading
    shape: ``estimate``, ``ci_low``, ``ci_high``, ``lam``, and ``human``, ``human_ci_low``,
    ``human_ci_high`` (the human-only mean and its normal interval). Same estimator as
    :func:`ppi_mean` (``calibrate``: the judge first put on the human scale, see the module).

    Checked against: :func:`ppi_mean` problem by problem (1e-12), in tests/unit/stats/test_ppi.py.

    Examples:
        >>> import numpy as np
        >>> from humeval.stats import ppi_mean, ppi_mean_arrays
        >>> y = np.array([[3.0, 4.0, 5.0, 4.0], [1.0, 2.0, 2.0, 1.0]])  # two problems, one per row
        >>> yhat = np.array([[2.5, 4.5, 4.5, 3.5], [1.5, 2.0, 2.5, 1.0]])
        >>> unlabelled = np.array([[4.0, 3.0, 5.0, 4.0], [2.0, 1.0, 1.0, 2.0]])
        >>> out = ppi_mean_arrays(y, yhat, unlabelled, lam=1)
        >>> out["estimate"].round(4).tolist()
        [4.25, 1.25]
        >>> [round(ppi_mean(y[i], yhat[i], unlabelled[i], lam=1).estimate, 4) for i in range(2)]
        [4.25, 1.25]
    """
    confidence_level = check_confidence_level(confidence_level, "ppi_mean_arrays")
    a, b, c = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    if a.shape != b.shape or a.shape[:-1] != c.shape[:-1] or a.shape[-1] < 2 or c.shape[-1] < 1:
        raise DataError(f"ppi_mean_arrays: y and yhat need one shape (..., n >= 2) and yhat_unlabelled (..., N >= 1) "
                        f"with the same leading axes; got {a.shape}, {b.shape}, {c.shape}")
    if lam is not None and not 0 <= lam <= 1:
        raise DataError(f"ppi_mean_arrays: lam must lie in [0, 1], got {lam}")
    z = sps.norm.ppf(0.5 + confidence_level / 2)
    if calibrate:
        if a.shape[-1] < 3:
            raise DataError(f"ppi_mean_arrays: calibrate=True fits a line (two parameters) on the labelled items and "
                            f"needs at least 3 of them, got {a.shape[-1]}")
        estimate, var, lams, _, _, df = _calibrated_ppi(a, b, c, lam)
        half = sps.t.ppf(0.5 + confidence_level / 2, df) * np.sqrt(var)
    else:
        estimate, var, lams = _ppi(a, b, c, lam)
        half = z * np.sqrt(var)
    human = a.mean(-1)
    human_half = z * np.sqrt(np.var(a, axis=-1) / a.shape[-1])
    return {"estimate": estimate, "ci_low": estimate - half, "ci_high": estimate + half, "lam": lams,
            "human": human, "human_ci_low": human - human_half, "human_ci_high": human + human_half}


def _normal(estimate: float, se: float, confidence_level: float,
            df: float | None = None) -> tuple[float, float, float]:
    """(ci_low, ci_high, two-sided p-value of estimate = 0) of a normal interval (Student t with ``df`` degrees of
    freedom when given); NaN when the standard error is 0 (no spread in the scores: a zero-width interval would read
    as certainty, see :func:`_no_spread`)."""
    if not se > 0:
        return float("nan"), float("nan"), float("nan")
    dist = sps.norm if df is None else sps.t(df)
    z = dist.ppf(0.5 + confidence_level / 2)
    p = float(2 * dist.sf(abs(estimate) / se))
    return estimate - z * se, estimate + z * se, p


def _no_spread(lo: float) -> dict[str, str]:
    return {"no_interval": "not enough data: the scores show no spread (standard error 0)"} if math.isnan(lo) else {}


def ppi_mean(y: object, yhat: object, yhat_unlabelled: object, *, confidence_level: float = 0.95,
             lam: float | None = None, calibrate: bool = False) -> Estimate:
    r"""The prediction-powered (PPI++) mean of a score, with its interval.

    ``y``: human scores of the labelled items; ``yhat``: the judge's scores of the same
    items, in the same order; ``yhat_unlabelled``: the judge's scores of the items no human
    labelled. ``lam``: the power-tuning weight (default: tuned, see the module docstring;
    ``1``: plain PPI; ``0``: the human-only mean). The p-value tests mean = 0.

    The judge must be on the human scale (the tuned weight is clipped to [0, 1]): pass
    ``calibrate=True`` to map it there with the line fitted on the labelled items (module
    docstring), or give scores already on that scale; the interval then counts the fitted
    line (HC2 variance, Student t, module docstring "Calibration in the interval"). ``extra``:
    ``calibration_intercept``, ``calibration_slope`` and ``df`` (the t interval's degrees of
    freedom; with ``calibrate``), ``scale_ratio`` (the judge's standard
    deviation over the humans' on the labelled items), ``warning`` (without ``calibrate``,
    when that ratio is below 1/3 or above 3).

    ``extra``: ``lam``; ``n_labelled``, ``n_unlabelled``; ``human_only``, ``human_ci_low``,
    ``human_ci_high`` (the classical mean of ``y`` and its normal interval, for the side-by-side);
    ``effective_n``: how many human labels the human-only mean would need for the same
    variance (:math:`n \cdot \widehat{\mathrm{Var}}_{human} / \widehat{\mathrm{Var}}_{PPI}`).

    Variance estimates are plug-in (ddof 0) as in the reference implementation; the tuned
    :math:`\lambda` uses the labelled covariance (ddof 0) over the pooled judge variance (ddof 1).

    Checked against: ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci`` (ppi-python
    0.2.3; tuned, ``lam=1`` and ``lam=0``; 1e-10), a hand-computed case, and interval coverage
    in simulation (tests/unit/stats/test_ppi.py). ``calibrate``: the slope against
    ``numpy.polyfit``, the estimate against the unclipped PPI++ formula by hand, the interval
    against statsmodels' HC2 standard error of the line at :math:`x_0` with the Bell-McCaffrey
    df from dense matrices (1e-9), coverage at n = 20 and 50 and in ``benchmarks/bench_judges.py``.

    Examples:
        >>> from humeval.stats import ppi_mean
        >>> y = [3.0, 4.0, 5.0, 4.0]          # humans, on the labelled items
        >>> yhat = [2.5, 4.5, 4.5, 3.5]       # the judge, on the same items
        >>> yhat_unlabelled = [4.0, 3.0, 5.0, 4.0, 4.0, 3.0]
        >>> # lam = 0: the human-only mean
        >>> round(ppi_mean(y, yhat, yhat_unlabelled, lam=0).estimate, 4)
        4.0
        >>> # lam = 1, plain PPI: the judge's mean on the unlabelled items plus the mean error on the labelled ones,
        >>> # 23/6 + 1/4 (ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unlabelled, lam=1))
        >>> round(ppi_mean(y, yhat, yhat_unlabelled, lam=1).estimate, 4), round(23 / 6 + 1 / 4, 4)
        (4.0833, 4.0833)
    """
    confidence_level = check_confidence_level(confidence_level, "ppi_mean")
    a, b, c = _arrays(y, yhat, yhat_unlabelled)
    method = "ppi++ mean" if lam is None else f"ppi mean (lam={lam:g})"
    if lam is not None and not 0 <= lam <= 1:
        raise DataError(f"ppi_mean: lam must lie in [0, 1] (0: human only, 1: plain PPI), got {lam}")
    n, big_n = a.size, c.size
    extra_scale = _scale_notes(a, b, calibrate)
    df: float | None = None
    if calibrate:
        if n < 3:
            raise DataError(f"ppi_mean: calibrate=True fits a line (two parameters) on the labelled items and needs "
                            f"at least 3 of them, got {n}")
        est, variance, lams, intercept, slope, dfs = _calibrated_ppi(a, b, c, lam)
        df = float(dfs)
        extra_scale |= {"calibration_intercept": float(intercept), "calibration_slope": float(slope), "df": df}
        method += " (judge calibrated)"
    else:
        est, variance, lams = _ppi(a, b, c, lam)
    estimate, var, lam = float(est), float(variance), float(lams)
    human_var = float(np.var(a)) / n
    lo, hi, p = _normal(estimate, float(np.sqrt(var)), confidence_level, df)
    h_lo, h_hi, _ = _normal(float(a.mean()), float(np.sqrt(human_var)), confidence_level)
    return Estimate(
        estimate, lo, hi, p, n=n, method=method,
        extra={"lam": float(lam), "n_labelled": n, "n_unlabelled": big_n, "human_only": float(a.mean()),
               "human_ci_low": h_lo, "human_ci_high": h_hi,
               "effective_n": float(n * human_var / var) if var > 0 else float("nan"),
               "ci_level": confidence_level, **extra_scale, **_no_spread(lo)},
    )


def _scale_notes(y: np.ndarray, yhat: np.ndarray, calibrated: bool) -> dict[str, object]:
    """``scale_ratio`` (judge sd / human sd on the labelled items) and, uncalibrated and far from 1, a ``warning``."""
    sd_y, sd_j = float(np.std(y)), float(np.std(yhat))
    if sd_y == 0 or sd_j == 0:
        return {"scale_ratio": float("nan")}
    ratio = sd_j / sd_y
    notes: dict[str, object] = {"scale_ratio": ratio}
    if not calibrated and not 1 / SCALE_WARNING_RATIO <= ratio <= SCALE_WARNING_RATIO:
        notes["warning"] = (f"the judge's scores spread {ratio:.3g} times as much as the human ones: they are on "
                            "another scale, so the tuned weight is clipped and the judge's gain is lost; put them on "
                            "the human scale first (calibrate=True)")
    return notes


def ppi_win_rate(wins: object, judge_wins: object, judge_wins_unlabelled: object, *,
                 confidence_level: float = 0.95, lam: float | None = None, calibrate: bool = False) -> Estimate:
    """How often system A is preferred to system B: the prediction-powered mean of pairwise outcomes.

    Each outcome is 1 (A preferred), 0 (B preferred) or 0.5 (a tie), per item, or the share
    of an item's judgements preferring A (ties counting half): ``wins`` by humans on the
    labelled items, ``judge_wins`` by the judge on the same items, ``judge_wins_unlabelled``
    by the judge on the rest. The p-value tests a win rate of 0.5.

    Checked against: :func:`ppi_mean` of the outcomes centred at 0.5 (identical; the same
    estimator, itself checked against ppi-python), in tests/unit/stats/test_ppi.py.

    Examples:
        >>> from humeval.stats import ppi_win_rate
        >>> wins = [1, 0, 1, 1]             # humans: A preferred on 3 of the 4 labelled items
        >>> judge = [1, 0, 1, 0]            # the judge on the same items
        >>> judge_unlabelled = [1, 1, 0, 1, 0, 1]
        >>> # lam = 1: the judge's rate on the unlabelled items (4/6) plus the mean correction (1/4)
        >>> round(ppi_win_rate(wins, judge, judge_unlabelled, lam=1).estimate, 4), round(4 / 6 + 1 / 4, 4)
        (0.9167, 0.9167)
    """
    confidence_level = check_confidence_level(confidence_level, "ppi_win_rate")
    arrays = [as_float_array(v, name, 1, allow_nan=False) for v, name in
              ((wins, "wins"), (judge_wins, "judge_wins"), (judge_wins_unlabelled, "judge_wins_unlabelled"))]
    for arr, name in zip(arrays, ("wins", "judge_wins", "judge_wins_unlabelled"), strict=True):
        bad = arr[(arr < 0) | (arr > 1)]
        if bad.size:
            raise DataError(f"{name}: pairwise outcomes are 1 (A preferred), 0 (B preferred), 0.5 (tie) "
                            f"or a share of judgements in between, got {bad[0]:g}")
    # centre at 0.5: the mean of (outcome - 0.5) is tested against 0
    centred = ppi_mean(*(arr - 0.5 for arr in arrays), confidence_level=confidence_level, lam=lam, calibrate=calibrate)
    extra = dict(centred.extra)
    for key in ("human_only", "human_ci_low", "human_ci_high"):
        extra[key] += 0.5
    return Estimate(centred.estimate + 0.5, centred.ci_low + 0.5, centred.ci_high + 0.5, centred.p_value,
                    n=centred.n, method=centred.method.replace("mean", "win rate"), extra=extra)


def ppi_difference(y_a: object, y_b: object, yhat_a: object, yhat_b: object, yhat_a_unlabelled: object,
                   yhat_b_unlabelled: object, *, confidence_level: float = 0.95,
                   lam: float | None = None, calibrate: bool = False) -> Estimate:
    """The prediction-powered difference of two systems' mean scores on the same items (A - B).

    Paired by item: humans scored both systems' outputs of the labelled items (``y_a``,
    ``y_b``), the judge scored both everywhere. The estimate is :func:`ppi_mean` of the
    per-item differences; the p-value tests no difference.

    Checked against: :func:`ppi_mean` of the per-item differences (identical), in
    tests/unit/stats/test_ppi.py.

    Examples:
        >>> from humeval.stats import ppi_difference, ppi_mean
        >>> y_a, y_b = [4.0, 3.0, 5.0], [3.0, 3.0, 4.0]
        >>> yhat_a, yhat_b = [4.0, 3.5, 4.5], [3.5, 3.0, 4.0]
        >>> ua, ub = [4.0, 5.0, 3.0, 4.0], [3.0, 4.0, 3.0, 4.0]
        >>> r = ppi_difference(y_a, y_b, yhat_a, yhat_b, ua, ub, lam=1)
        >>> # the PPI mean of the per-item differences
        >>> d = ppi_mean([1.0, 0.0, 1.0], [0.5, 0.5, 0.5], [1.0, 1.0, 0.0, 0.0], lam=1)
        >>> round(r.estimate, 4), round(d.estimate, 4)
        (0.6667, 0.6667)
    """
    confidence_level = check_confidence_level(confidence_level, "ppi_difference")
    parts = [as_float_array(v, name, 1, allow_nan=False) for v, name in
             ((y_a, "y_a"), (y_b, "y_b"), (yhat_a, "yhat_a"), (yhat_b, "yhat_b"),
              (yhat_a_unlabelled, "yhat_a_unlabelled"), (yhat_b_unlabelled, "yhat_b_unlabelled"))]
    for (first, second), names in zip(((parts[0], parts[1]), (parts[2], parts[3]), (parts[4], parts[5])),
                                      (("y_a", "y_b"), ("yhat_a", "yhat_b"), ("yhat_a_unlabelled", "yhat_b_unlabelled")),
                                      strict=True):
        if first.size != second.size:
            raise DataError(f"{names[0]} has {first.size} values but {names[1]} has {second.size}; "
                            "a difference pairs the two systems' outputs of the same items")
    result = ppi_mean(parts[0] - parts[1], parts[2] - parts[3], parts[4] - parts[5],
                      confidence_level=confidence_level, lam=lam, calibrate=calibrate)
    return Estimate(result.estimate, result.ci_low, result.ci_high, result.p_value, n=result.n,
                    method=result.method.replace("mean", "difference"), extra=result.extra)


def ppi_active_mean(y: object, yhat: object, labelled: object, probability: object, *,
                    confidence_level: float = 0.95, lam: float | None = None) -> Estimate:
    r"""The mean over all ``N`` items when item ``i`` was sent to humans with probability ``probability[i]``.

    Active inference (Zrnic & Candès 2024): items the judge is unsure about can be labelled
    more often; inverse-probability weights keep the estimate unbiased:

    .. math::

        \hat\theta_\lambda = \frac{1}{N}\sum_{i=1}^{N}\Big(\lambda \hat y_i
            + (y_i - \lambda \hat y_i)\frac{\xi_i}{\pi_i}\Big),

    :math:`\xi_i` = ``labelled[i]``, :math:`\pi_i` = ``probability[i]`` (> 0; the labelling
    must have been drawn with exactly these probabilities, independently per item). ``y``
    holds the human label where ``labelled`` and anything (e.g. nan) elsewhere. The interval
    is the normal interval of the mean of the N terms; the tuned :math:`\lambda` minimises
    their sample variance (:math:`-\widehat{\mathrm{Cov}}(u, v) / \widehat{\mathrm{Var}}(v)`
    with :math:`u = \xi y/\pi`, :math:`v = \hat y (1 - \xi/\pi)`), clipped to [0, 1].

    ``extra``: ``lam``, ``n_labelled``, ``n_items``.

    Checked against: a hand-computed case, :func:`ppi_mean` (which it equals in
    distribution for uniform probabilities), and coverage in simulation (tests/unit/stats/test_ppi.py).

    Examples:
        >>> import numpy as np
        >>> from humeval.stats import ppi_active_mean
        >>> yhat = np.array([0.9, 0.2, 0.6, 0.5])
        >>> # every item labelled (probability 1): the estimate is the humans' mean whatever the weight
        >>> y = np.array([1.0, 0.0, 1.0, 0.0])
        >>> round(ppi_active_mean(y, yhat, [True] * 4, [1.0] * 4, lam=0.5).estimate, 4)
        0.5
        >>> # items 0 and 2 labelled with probability 1/2: lam = 1 gives mean(yhat + (y - yhat) x xi / pi)
        >>> y = np.array([1.0, np.nan, 1.0, np.nan])
        >>> r = ppi_active_mean(y, yhat, [True, False, True, False], [0.5, 0.5, 0.5, 0.5], lam=1)
        >>> round(r.estimate, 4), round((0.9 + 0.2 + 0.6 + 0.5 + (0.1 + 0.4) / 0.5) / 4, 4)
        (0.8, 0.8)
    """
    confidence_level = check_confidence_level(confidence_level, "ppi_active_mean")
    f = as_float_array(yhat, "yhat (judge on every item)", 1, allow_nan=False)
    xi = np.asarray(labelled, dtype=bool)
    pi = as_float_array(probability, "probability", 1, allow_nan=False)
    y_all = as_float_array(y, "y (human labels)", 1, allow_nan=True)
    if not (f.size == xi.size == pi.size == y_all.size):
        raise DataError(f"y, yhat, labelled and probability need one value per item; got lengths "
                        f"{y_all.size}, {f.size}, {xi.size}, {pi.size}")
    if (pi <= 0).any() or (pi > 1).any():
        raise DataError(f"probability: each item's labelling probability must lie in (0, 1], got "
                        f"{pi[(pi <= 0) | (pi > 1)][0]:g}")
    if np.isnan(y_all[xi]).any():
        raise DataError("y: a labelled item has no human label (nan)")
    if xi.sum() < 2:
        raise DataError(f"active inference needs at least 2 labelled items, got {int(xi.sum())}")
    u = np.where(xi, np.nan_to_num(y_all) / pi, 0.0)
    v = f * (1 - xi / pi)
    if lam is None:
        var_v = float(np.var(v))
        lam = 0.0 if var_v == 0 else float(np.clip(-np.mean((u - u.mean()) * (v - v.mean())) / var_v, 0.0, 1.0))
    elif not 0 <= lam <= 1:
        raise DataError(f"ppi_active_mean: lam must lie in [0, 1], got {lam}")
    terms = u + lam * v
    estimate = float(terms.mean())
    lo, hi, p = _normal(estimate, float(np.std(terms) / np.sqrt(terms.size)), confidence_level)
    return Estimate(estimate, lo, hi, p, n=int(xi.sum()), method="active ppi mean",
                    extra={"lam": float(lam), "n_labelled": int(xi.sum()), "n_items": int(terms.size),
                           "ci_level": confidence_level, **_no_spread(lo)})


def ppi_labels_needed(rho: object, n_human: object, n_items: object) -> np.ndarray:
    r"""Human labels PPI++ needs for the precision ``n_human`` human-only labels give, with a judge of correlation ``rho``.

    With the optimal weight, the PPI++ mean of ``n`` labelled items among ``T`` = ``n_items``
    items the judge scored has variance
    :math:`\frac{\sigma^2}{n}\big(1 - \rho^2 \frac{T - n}{T}\big)` (``T - n`` unlabelled items;
    Angelopoulos, Duchi & Zrnic 2023, the optimal-lambda variance), so it matches the human-only
    variance :math:`\sigma^2 / n_h` at

    .. math::  n = n_h \frac{1 - \rho^2}{1 - \rho^2 n_h / T}

    (:math:`n_h (1 - \rho^2)` for an unlimited pool of judged items). Vectorised over its
    arguments. ``n_human`` above ``n_items`` is allowed (the human-only study would need more
    items than there are; the judge's count is then still finite while ``rho^2 n_h < T``,
    else infinite).

    Checked against: the simulated share of labels at equal interval width,
    ``benchmarks/bench_judges.py`` (tests/golden/test_bench_judges.py), and a hand-computed
    case in tests/unit/stats/test_ppi.py.

    Examples:
        >>> from humeval.stats import ppi_labels_needed
        >>> # a judge correlating 0.8 with humans, unlimited judged items: n_h (1 - rho^2) = 100 x 0.36
        >>> ppi_labels_needed(0.8, 100, float("inf")).round(4).tolist()
        36.0
        >>> # 1,000 items: 100 x 0.36 / (1 - 0.64 x 100 / 1000)
        >>> ppi_labels_needed(0.8, 100, 1000).round(4).tolist(), round(36 / (1 - 0.064), 4)
        (38.4615, 38.4615)
    """
    r2 = np.asarray(rho, dtype=float) ** 2
    n_h = np.asarray(n_human, dtype=float)
    big_t = np.asarray(n_items, dtype=float)
    if np.any(r2 > 1) or np.any(n_h <= 0) or np.any(big_t <= 0):
        raise DataError("ppi_labels_needed: rho must lie in [-1, 1] and n_human, n_items be positive")
    denominator = 1 - r2 * n_h / big_t
    with np.errstate(divide="ignore"):
        return np.where(denominator > 0, n_h * (1 - r2) / np.where(denominator > 0, denominator, 1.0), np.inf)
