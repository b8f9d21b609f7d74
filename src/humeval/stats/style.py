"""Style control: a contextual Bradley-Terry model with answer length and Markdown features as covariates.

Model (Chatbot Arena's style control, Li et al. 2024). On the *decisive* votes of any pairwise criterion (ties and
both-bad votes carry no direction and are left out), with y = 1 when the first output (model_a) won,

    logit P(y = 1) = theta_a - theta_b + gamma . z,

theta the systems' strengths (centred; theta_0 = 0 while fitting) and z the covariates of the battle: for each style
feature f (see :data:`STYLE_FEATURES`) the normalised difference (f_a - f_b) / (f_a + f_b) of the two outputs
(0 when both are 0), then standardised over the votes fitted (minus its mean, divided by its standard deviation),
as FastChat's ``construct_style_matrices``. gamma_f is then the change in log-odds of winning per standard
deviation of that difference, and theta is the strength "with the style held equal". Length is counted in
**characters** (no tokenizer is needed; a token count is about proportional), headers are Markdown header lines
(``#`` to ``######``), list items are lines starting with ``-``, ``*``, ``+`` or ``1.``, bold spans are ``**x**``
or ``__x__``.

Fit: maximum likelihood by Newton-Raphson, batched over bootstrap replicates (each a multinomial reweighting of the
votes, ``seed``); intervals are percentile intervals at ``confidence_level`` and rank ranges come from
non-overlapping intervals, as :func:`humeval.stats.bradley_terry`. Scores are on the same Elo scale
(``init + scale * theta / ln(base)``). A covariate constant over the votes (no output has Markdown at all) is not
identified: it is dropped and named in ``extra["dropped"]``. With no covariates left the fit is plain
Bradley-Terry on the decisive votes.

Assumptions: Bradley-Terry on the decisive votes; votes independent given their outputs; style enters additively on
the log-odds scale with one coefficient per feature for every system (a system cannot "use" length better than
another). The covariates are standardised on the data, so coefficients of two studies are on different scales.

Reference: Li, T., Chiang, W.-L. et al. (2024), "Does style matter? Disentangling style and substance in Chatbot
Arena" (LMSYS blog, 2024-08-29); FastChat ``fastchat/serve/monitor/elo_analysis.py`` (``fit_mle_elo`` with style).
Checked against: statsmodels' ``Logit`` on the same design (random battles with planted style effects) and a
saturated hand case of two systems and one covariate (tests/unit/stats/test_style.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from humeval.errors import DataError
from humeval.rng import Seed, as_generator
from humeval.stats._bootstrap import resample_weights
from humeval.stats._checks import check_confidence_level, check_n_boot
from humeval.stats._result import Estimate
from humeval.stats.rankings import Ranking, _check_battles, _connected, _ranges_from_wins, _ranking, _signable_rows

__all__ = ["STYLE_FEATURES", "StyleControl", "style_control", "style_counts", "style_covariates"]

#: the style features, in the order of :func:`style_counts`' columns
STYLE_FEATURES = ("length", "headers", "lists", "bold")

_HEADER = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_LIST = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\S", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")


def style_counts(texts: Sequence[str]) -> np.ndarray:
    """``(n, 4)`` counts of :data:`STYLE_FEATURES` per text: characters, header lines, list items, bold spans.

    Examples:
        >>> from humeval.stats.style import style_counts
        >>> style_counts(["# Title\\n- one\\n- **two**", "plain"]).tolist()
        [[23.0, 1.0, 2.0, 1.0], [5.0, 0.0, 0.0, 0.0]]
    """
    out = np.zeros((len(texts), len(STYLE_FEATURES)))
    for i, text in enumerate(texts):  # regex counting is per text; the fit itself is vectorised
        text = "" if text is None else str(text)
        out[i] = (len(text), len(_HEADER.findall(text)), len(_LIST.findall(text)), len(_BOLD.findall(text)))
    return out


def style_covariates(text_a: Sequence[str], text_b: Sequence[str]) -> pd.DataFrame:
    """Per battle, the normalised difference (f_a - f_b) / (f_a + f_b) of each style feature (0 when both are 0).

    Checked against: features counted by hand on written-out answers (``tests/unit/stats/test_style.py``).

    Examples:
        >>> from humeval.stats.style import style_covariates
        >>> style_covariates(["aaa"], ["a"]).round(2).to_dict("records")
        [{'length': 0.5, 'headers': 0.0, 'lists': 0.0, 'bold': 0.0}]
    """
    if len(text_a) != len(text_b):
        raise DataError(f"style_covariates: {len(text_a)} first texts but {len(text_b)} second texts; one pair each")
    fa, fb = style_counts(text_a), style_counts(text_b)
    total = fa + fb
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(total > 0, (fa - fb) / np.where(total > 0, total, 1.0), 0.0)
    return pd.DataFrame(diff, columns=list(STYLE_FEATURES))


@dataclass(frozen=True)
class StyleControl:
    """A style-controlled Bradley-Terry fit: the ranking with the style held equal and the style coefficients.

    ``ranking``: systems best first, Elo-scale scores with bootstrap intervals and rank ranges (method
    ``style_control``); ``coefficients``: one :class:`Estimate` per covariate kept (log-odds per standard deviation
    of the normalised difference, with its bootstrap interval); ``n`` decisive votes fitted; ``extra``: seed,
    resamples, dropped covariates, the standardisation (mean and sd of each covariate).
    """

    ranking: Ranking
    coefficients: Mapping[str, Estimate]
    n: int
    method: str = "style_control"
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "coefficients", MappingProxyType(dict(self.coefficients)))
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))


def _logit_fit(x: np.ndarray, y: np.ndarray, weights: np.ndarray, start: np.ndarray | None = None,
               max_iter: int = 60, tol: float = 1e-9) -> np.ndarray:
    """Newton-Raphson for weighted logistic regressions without intercept, batched over rows of ``weights``.

    ``x`` (n, d), ``y`` (n,), ``weights`` (B, n). Returns (B, d); a replicate that did not converge (its MLE does
    not exist: separation) is NaN.
    """
    n_b, d = weights.shape[0], x.shape[1]
    beta = np.zeros((n_b, d)) if start is None else np.broadcast_to(start, (n_b, d)).copy()
    done = np.zeros(n_b, dtype=bool)
    for _ in range(max_iter):
        eta = beta @ x.T
        p = 1.0 / (1.0 + np.exp(-eta))
        grad = (weights * (y - p)) @ x
        s = weights * p * (1.0 - p)
        hess = x.T @ (s[:, :, None] * x[None]) + 1e-12 * np.eye(d)  # (B, d, d), one BLAS product per replicate
        with np.errstate(all="ignore"):
            step = np.linalg.solve(hess, grad[:, :, None])[..., 0]
        step = np.clip(np.nan_to_num(step), -5.0, 5.0)
        beta += np.where(done[:, None], 0.0, step)
        done |= np.abs(step).max(axis=1) < tol
        if done.all():
            break
    beta[~done | (np.abs(beta).max(axis=1) > 30)] = np.nan
    return beta


def style_control(
    battles: pd.DataFrame,
    covariates: pd.DataFrame,
    *,
    standardise: bool = True,
    n_boot: int = 1000,
    seed: Seed = 0,
    confidence_level: float = 0.95,
    scale: float = 400.0,
    base: float = 10.0,
    init: float = 1000.0,
) -> StyleControl:
    """Fit the style-controlled Bradley-Terry model (module docstring) to ``battles`` with per-battle ``covariates``.

    ``battles``: ``model_a``, ``model_b``, ``winner`` (FastChat's battle table); ``covariates``: one row per battle
    (same order and length), one numeric column per covariate, e.g. :func:`style_covariates` of the two outputs.
    Ties and both-bad votes are left out. ``standardise``: centre and scale each covariate over the decisive votes
    (False: take them as given).

    Checked against: statsmodels' ``Logit`` on the same design, a saturated hand case and plain Bradley-Terry
    without covariates (``tests/unit/stats/test_style.py``).

    Examples:
        >>> import pandas as pd
        >>> from humeval.stats.style import style_control
        >>> # A wins 3 of 4 when its answer is longer (z = +1), 1 of 4 when shorter (z = -1): all of it is style
        >>> battles = pd.DataFrame({"model_a": ["A"] * 8, "model_b": ["B"] * 8,
        ...                         "winner": ["model_a"] * 3 + ["model_b"] + ["model_a"] + ["model_b"] * 3})
        >>> z = pd.DataFrame({"length": [1.0] * 4 + [-1.0] * 4})
        >>> fit = style_control(battles, z, standardise=False, n_boot=0)
        >>> round(fit.coefficients["length"].estimate, 4), [round(s.estimate, 1) for s in fit.ranking.scores]
        (1.0986, [1000.0, 1000.0])
    """
    battles = _check_battles(battles, "style_control")
    if not isinstance(covariates, pd.DataFrame) or len(covariates) != len(battles):
        got = len(covariates) if hasattr(covariates, "__len__") else type(covariates).__name__
        raise DataError(f"style_control: covariates must be a DataFrame with one row per battle ({len(battles)}), "
                        f"got {got}")
    n_boot = check_n_boot(n_boot)
    confidence_level = check_confidence_level(confidence_level, "style_control")
    z_all = covariates.to_numpy(dtype=float)
    if not np.isfinite(z_all).all():
        bad = int(np.argmax(~np.isfinite(z_all).all(axis=1)))
        raise DataError(f"style_control: covariates of battle {bad} are not finite: {covariates.iloc[bad].to_dict()}")
    decisive = battles["winner"].isin(("model_a", "model_b")).to_numpy()
    kept = battles[decisive]
    z = z_all[decisive]
    names = sorted(set(kept["model_a"].astype(str)) | set(kept["model_b"].astype(str)))
    k = len(names)
    if k < 2:
        raise DataError(f"style_control: need decisive votes between at least 2 systems, got {names}")
    index = {s: i for i, s in enumerate(names)}
    a = kept["model_a"].astype(str).map(index).to_numpy()
    b = kept["model_b"].astype(str).map(index).to_numpy()
    y = (kept["winner"] == "model_a").to_numpy(dtype=float)
    n = len(y)
    wins = np.zeros((k, k))
    np.add.at(wins, (np.where(y == 1, a, b), np.where(y == 1, b, a)), 1.0)
    if not _connected(wins):
        raise DataError("style_control: the strengths are infinite because the systems cannot all be compared "
                        f"through decisive wins ({n} decisive votes of {names}); collect more votes")
    columns = [str(c) for c in covariates.columns]
    mean = z.mean(axis=0) if standardise else np.zeros(z.shape[1])
    sd = z.std(axis=0) if standardise else np.ones(z.shape[1])
    keep = sd > 1e-12 if standardise else np.ones(z.shape[1], dtype=bool)
    dropped = [c for c, ok in zip(columns, keep, strict=True) if not ok]
    zs = (z[:, keep] - mean[keep]) / sd[keep]
    used = [c for c, ok in zip(columns, keep, strict=True) if ok]
    sys_cols = np.zeros((n, k))
    sys_cols[np.arange(n), a] += 1.0
    sys_cols[np.arange(n), b] -= 1.0
    x = np.concatenate([sys_cols[:, 1:], zs], axis=1)  # theta_0 = 0 while fitting
    beta = _logit_fit(x, y, np.ones((1, n)))[0]
    if not np.isfinite(beta).all():
        raise DataError(f"style_control: the fit did not converge on {n} decisive votes (a covariate separates the "
                        "winners); drop that covariate or collect more votes")

    def strengths(coef: np.ndarray) -> np.ndarray:
        theta = np.concatenate([np.zeros((coef.shape[0], 1)), coef[:, : k - 1]], axis=1)
        centred: np.ndarray = theta - theta.mean(axis=1, keepdims=True)
        return centred

    factor = scale / np.log(base)
    theta = strengths(beta[None])[0]
    ratings = init + factor * theta
    gamma = beta[k - 1:]
    lo = np.full(k, np.nan)
    hi = np.full(k, np.nan)
    g_lo = np.full(len(used), np.nan)
    g_hi = np.full(len(used), np.nan)
    valid = 0
    if n_boot:
        rng = as_generator(seed)
        boots = []
        for block in resample_weights(rng, n, n_boot):
            step = max(1, 2_000_000 // (n * x.shape[1]))  # (step, n, d) work arrays of ~16 MB
            for start in range(0, block.shape[0], step):
                boots.append(_logit_fit(x, y, block[start:start + step], start=beta))
        boot = np.concatenate(boots)
        finite = np.isfinite(boot).all(axis=1)
        valid = int(finite.sum())
        if valid:
            tail = (1 - confidence_level) / 2 * 100
            lo, hi = np.percentile(init + factor * strengths(boot[finite]), [tail, 100 - tail], axis=0)
            if used:
                g_lo, g_hi = np.percentile(boot[finite][:, k - 1:], [tail, 100 - tail], axis=0)
    lo, hi, reasons = _signable_rows(ratings, lo, hi, confidence_level, undefined=n_boot - valid, total=n_boot)
    order = np.argsort(-ratings, kind="stable")
    beats = lo[:, None] > hi[None, :]
    rank_low, rank_high = _ranges_from_wins(order, beats)
    n_per = np.bincount(a, minlength=k) + np.bincount(b, minlength=k)
    extra = {"n_votes": len(battles), "n_decisive": n, "n_boot": n_boot, "n_boot_valid": valid,
             "seed": seed if isinstance(seed, int) or seed is None else "generator", "scale": scale, "base": base,
             "init": init, "ci_level": confidence_level, "ties": "left out (decisive votes only)",
             "covariates": used, "dropped": dropped, "standardised": standardise,
             "covariate_mean": dict(zip(used, mean[keep].tolist(), strict=True)),
             "covariate_sd": dict(zip(used, sd[keep].tolist(), strict=True))}
    ranking = _ranking(names, order, ratings, lo, hi, n_per, rank_low, rank_high, "style_control",
                       per_system=lambda i: {"theta": float(theta[i]),
                                             **({"no_interval": reasons[i]} if reasons[i] else {})},
                       extra=extra)
    coefficients = {c: Estimate(float(gamma[j]), g_lo[j], g_hi[j], n=n, method="style_control coefficient",
                                extra={"scale": "log-odds per sd of the normalised difference" if standardise
                                       else "log-odds per unit"})
                    for j, c in enumerate(used)}
    return StyleControl(ranking, coefficients, n, "style_control", extra)
