"""One name for the coverage of an interval across humeval.stats: ``confidence_level``."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import humeval.stats as hs
from humeval.errors import HumevalError

_RNG = np.random.default_rng(7)
_X = _RNG.normal(size=25)
_Y = _X * 0.5 + _RNG.normal(size=25)
_RATINGS = _RNG.integers(1, 6, size=(4, 30)).astype(float)
_SCORES = _RNG.normal(size=(20, 4)) + _RNG.normal(size=(20, 1)) * 2
_COUNTS = np.array([[3, 1, 1], [2, 2, 1], [0, 4, 1], [1, 1, 3], [5, 0, 0], [2, 3, 0]] * 4)
_BIN = np.array([1.0, 0.0, 1.0, 0.5, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0] * 3)
_SYSTEMS = pd.DataFrame(_RNG.normal(size=(30, 3)) + [0.0, 0.2, 0.4], columns=["a", "b", "c"])
_BATTLES = pd.DataFrame(
    {
        "model_a": ["a", "b", "c", "a", "b", "c"] * 15,
        "model_b": ["b", "c", "a", "c", "a", "b"] * 15,
        "winner": (["model_a", "model_b", "tie", "model_b", "model_a", "model_a"] * 15),
    }
)

_CYCLE = pd.DataFrame(  # every system wins and loses (a finite fit)
    {
        "model_a": ["a", "b", "c", "a", "b", "c"] * 15,
        "model_b": ["b", "c", "a", "b", "c", "a"] * 15,
        "winner": (["model_a", "model_a", "model_b", "model_b", "model_b", "model_b"] * 15),
    }
)

# Public functions that return no interval. A new public function must be added here or
# take ``confidence_level`` (and get an example call below).
NO_INTERVAL = {
    "adjust_pvalues",
    "anova_oneway",
    "battles_from_scores",
    "benjamini_hochberg",
    "confirmation_power",  # a test's power at a level alpha (the drift check's confirmation wave)
    "confirmation_pvalues",
    "confirmation_threshold",
    "confirmation_wave_size",
    "curtailed_wave",
    "davidson_fit",  # a point fit; the arena's statements are anytime tests (humeval.stopping.pooled)
    "eta_squared",
    "friedman",
    "holm",
    "kruskal_wallis",
    "mann_whitney",
    "ppi_labels_needed",  # a formula of rho; its uncertainty comes from rho's interval (humeval.judge_budget)
    "rank_biserial",
    "read_battles",
    "rm_anova",
    "shapiro",
    "style_covariates",  # features of two texts, no estimate
    "stopped_split_pvalues",  # a test's p-values (the drift check); the halves' shares carry their intervals
    "to_frame",
    "vote_outliers",  # a sequential test's flags per participant at level alpha
    "wide_from_long",
    "wilcoxon",
    "write_battles",
}

# Parameters whose names resemble a confidence level but mean something else.
OTHER_MEANINGS = {
    ("krippendorff_alpha", "level"),  # level of measurement: nominal / ordinal / interval / ratio
    ("pearson", "ci"),  # the interval's method: fisher / bootstrap
    ("spearman", "ci"),
    ("kendall", "ci"),
    ("rank_by_scores", "alpha"),  # significance level of the pairwise test decisions
    ("confirmation_power", "alpha"),  # the confirmation wave's test level (the drift check)
    ("confirmation_threshold", "alpha"),
    ("confirmation_wave_size", "alpha"),
    ("curtailed_wave", "alpha"),
    ("vote_outliers", "alpha"),  # the outlier test's level, split over participants
}

# One small call per interval-building function: (call, its interval as (low, high)).
Interval = tuple[float, float]
EXAMPLES: dict[str, Callable[[float], Interval]] = {
    "ttest": lambda cl: hs.ttest(_X, _Y, confidence_level=cl).ci,
    "sign_test": lambda cl: hs.sign_test(14, 6, confidence_level=cl).ci,
    "paired_bootstrap": lambda cl: (
        hs.paired_bootstrap(_X, _Y, n_boot=300, seed=1, confidence_level=cl).ci
    ),
    "posthoc": lambda cl: hs.posthoc({"x": _X, "y": _Y}, confidence_level=cl)[("x", "y")].ci,
    "cohens_d": lambda cl: hs.cohens_d(_X, _Y, confidence_level=cl).ci,
    "fleiss_kappa": lambda cl: hs.fleiss_kappa(_COUNTS, n_boot=300, seed=2, confidence_level=cl).ci,
    "krippendorff_alpha": lambda cl: (
        hs.krippendorff_alpha(_RATINGS, "interval", n_boot=300, seed=3, confidence_level=cl).ci
    ),
    "icc": lambda cl: hs.icc(_SCORES, "2,1", confidence_level=cl).ci,
    "pearson": lambda cl: hs.pearson(_X, _Y, confidence_level=cl).ci,
    "spearman": lambda cl: hs.spearman(_X, _Y, confidence_level=cl).ci,
    "kendall": lambda cl: (
        hs.kendall(_X, _Y, ci="bootstrap", n_boot=200, seed=4, confidence_level=cl).ci
    ),
    "bradley_terry": lambda cl: (
        hs.bradley_terry(_BATTLES, n_boot=100, seed=5, confidence_level=cl).score("a").ci
    ),
    "elo": lambda cl: hs.elo(_BATTLES, n_boot=50, seed=6, confidence_level=cl).score("a").ci,
    "style_control": lambda cl: (
        hs.style_control(_CYCLE, pd.DataFrame({"length": np.random.default_rng(11).normal(size=90)}), n_boot=100, seed=7,
                         confidence_level=cl).ranking.score("a").ci
    ),
    "trueskill_ranking": lambda cl: (
        hs.trueskill_ranking(_BATTLES, n_boot=20, seed=7, confidence_level=cl).score("a").ci
    ),
    "mean_ci": lambda cl: hs.mean_ci(_X, n_boot=300, seed=9, confidence_level=cl).ci,
    "ppi_mean": lambda cl: hs.ppi_mean(_X, _Y, _Y * 0.9, confidence_level=cl).ci,
    "ppi_mean_arrays": lambda cl: tuple(
        float(hs.ppi_mean_arrays(_X, _Y, _Y * 0.9, confidence_level=cl)[k]) for k in ("ci_low", "ci_high")
    ),
    "ppi_win_rate": lambda cl: hs.ppi_win_rate(_BIN[:10], _BIN[5:15], _BIN, confidence_level=cl).ci,
    "ppi_difference": lambda cl: hs.ppi_difference(_X, _Y, _X, _Y, _Y, _X, confidence_level=cl).ci,
    "ppi_active_mean": lambda cl: (
        hs.ppi_active_mean(_X, _Y, np.arange(25) % 3 == 0, np.full(25, 1 / 3), confidence_level=cl).ci
    ),
    "rank_by_scores": lambda cl: (
        hs.rank_by_scores(_SYSTEMS, n_boot=300, seed=8, confidence_level=cl).score("a").ci
    ),
    "wilson_interval": lambda cl: hs.wilson_interval(7, 20, confidence_level=cl),
}


def _public_functions() -> dict[str, Callable[..., Any]]:
    return {
        name: obj
        for name in hs.__all__
        if callable(obj := getattr(hs, name)) and not inspect.isclass(obj)
    }


def test_every_public_function_is_classified() -> None:
    functions = set(_public_functions())
    assert NO_INTERVAL <= functions, NO_INTERVAL - functions
    assert functions - NO_INTERVAL == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_interval_functions_take_confidence_level(name: str) -> None:
    params = inspect.signature(getattr(hs, name)).parameters
    assert "confidence_level" in params
    param = params["confidence_level"]
    assert param.default == 0.95
    assert param.kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("name", sorted(_public_functions()))
def test_no_other_name_sets_a_confidence_level(name: str) -> None:
    params = inspect.signature(getattr(hs, name)).parameters
    for old in ("level", "ci", "alpha", "ci_level", "conf_level", "confidence"):
        if old in params:
            assert (name, old) in OTHER_MEANINGS, f"{name}({old}=...) looks like a confidence level"
    if name in NO_INTERVAL:
        assert "confidence_level" not in params


def test_other_meanings_are_not_confidence_levels() -> None:
    """The look-alikes keep their meaning: measurement level, CI method, significance level."""
    sig = inspect.signature
    assert sig(hs.krippendorff_alpha).parameters["level"].default == "interval"
    for fn in (hs.pearson, hs.spearman, hs.kendall):
        assert sig(fn).parameters["ci"].default == "fisher"
    assert sig(hs.rank_by_scores).parameters["alpha"].default == 0.05


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_confidence_level_sets_the_coverage(name: str) -> None:
    """A higher level gives a wider interval around the same estimate (the parameter is used)."""
    lo80, hi80 = EXAMPLES[name](0.8)
    lo99, hi99 = EXAMPLES[name](0.99)
    assert all(math.isfinite(v) for v in (lo80, hi80, lo99, hi99))
    assert lo99 <= lo80 and hi80 <= hi99
    assert (hi99 - lo99) > (hi80 - lo80)
    assert EXAMPLES[name](0.95) == EXAMPLES[name](0.95)


def test_rank_by_scores_keeps_alpha_for_decisions_apart_from_the_intervals() -> None:
    base = hs.rank_by_scores(_SYSTEMS, n_boot=300, seed=8)
    wider = hs.rank_by_scores(_SYSTEMS, n_boot=300, seed=8, confidence_level=0.99)
    assert (wider.rank_low, wider.rank_high) == (base.rank_low, base.rank_high)
    assert wider.extra["pairs"] == base.extra["pairs"]
    assert wider.extra["ci_level"] == 0.99 and base.extra["ci_level"] == 0.95
    assert wider.extra["alpha"] == base.extra["alpha"] == 0.05


@pytest.mark.parametrize("name", sorted(EXAMPLES))
@pytest.mark.parametrize("bad", [95, 95.0, 0, 1, 1.0, -0.05, float("nan"), True, "0.95", None])
def test_bad_confidence_level_is_a_clear_error(name: str, bad: object) -> None:
    with pytest.raises(HumevalError) as info:
        EXAMPLES[name](bad)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith(f"{name}: confidence_level must be")
    assert "between 0 and 1" in message
    assert repr(bad) in message


def test_a_percentage_gets_a_hint() -> None:
    with pytest.raises(HumevalError, match=r"got 95; it looks like a percentage: write 0\.95"):
        hs.sign_test(7, 3, confidence_level=95)


@pytest.mark.parametrize("old", ["alpha", "level", "ci"])
def test_old_keywords_are_gone(old: str) -> None:
    with pytest.raises(TypeError, match=old):
        hs.sign_test(7, 3, **{old: 0.95})
