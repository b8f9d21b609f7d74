"""humeval.stats: agreement, significance tests, effect sizes, rankings and correlations.

Pure functions over arrays (or long DataFrames via :func:`wide_from_long`). Every
function returns an :class:`Estimate` (``estimate, ci_low, ci_high, p_value, n, method,
extra``), a mapping of them (:func:`posthoc`), or a :class:`Ranking` of them. Randomness
(bootstrap) enters only through a ``seed`` argument (int or ``numpy.random.Generator``).
Each docstring gives the formula, a reference, and the oracle it was checked against.

Importing ``humeval.stats`` defines names only: each is imported from its module on first
use (PEP 562), so ``from humeval.stats import krippendorff_alpha`` pays for neither pandas
nor SciPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from humeval.lazy import lazy_exports

_EXPORTS = {
    "wide_from_long": "humeval.stats._checks",
    "Estimate": "humeval.stats._result",
    "to_frame": "humeval.stats._result",
    "ALPHA_LEVELS": "humeval.stats.agreement",
    "ICC_FORMS": "humeval.stats.agreement",
    "fleiss_kappa": "humeval.stats.agreement",
    "icc": "humeval.stats.agreement",
    "krippendorff_alpha": "humeval.stats.agreement",
    "CORRECTIONS": "humeval.stats.correction",
    "adjust_pvalues": "humeval.stats.correction",
    "DavidsonFit": "humeval.stats.davidson",
    "davidson_fit": "humeval.stats.davidson",
    "benjamini_hochberg": "humeval.stats.correction",
    "holm": "humeval.stats.correction",
    "CI_METHODS": "humeval.stats.correlation",
    "kendall": "humeval.stats.correlation",
    "pearson": "humeval.stats.correlation",
    "spearman": "humeval.stats.correlation",
    "cohens_d": "humeval.stats.effect",
    "eta_squared": "humeval.stats.effect",
    "rank_biserial": "humeval.stats.effect",
    "mean_ci": "humeval.stats.means",
    "VoteOutliers": "humeval.stats.vote_quality",
    "vote_outliers": "humeval.stats.vote_quality",
    "confirmation_power": "humeval.stats.drift",
    "confirmation_pvalues": "humeval.stats.drift",
    "confirmation_threshold": "humeval.stats.drift",
    "confirmation_wave_size": "humeval.stats.drift",
    "curtailed_wave": "humeval.stats.drift",
    "stopped_split_pvalues": "humeval.stats.drift",
    "wilson_interval": "humeval.stats.proportion",
    "ppi_active_mean": "humeval.stats.ppi",
    "ppi_difference": "humeval.stats.ppi",
    "ppi_labels_needed": "humeval.stats.ppi",
    "ppi_mean": "humeval.stats.ppi",
    "ppi_mean_arrays": "humeval.stats.ppi",
    "ppi_win_rate": "humeval.stats.ppi",
    "WINNERS": "humeval.stats.rankings",
    "Ranking": "humeval.stats.rankings",
    "battles_from_scores": "humeval.stats.rankings",
    "bradley_terry": "humeval.stats.rankings",
    "elo": "humeval.stats.rankings",
    "rank_by_scores": "humeval.stats.rankings",
    "read_battles": "humeval.stats.rankings",
    "trueskill_ranking": "humeval.stats.rankings",
    "write_battles": "humeval.stats.rankings",
    "STYLE_FEATURES": "humeval.stats.style",
    "StyleControl": "humeval.stats.style",
    "style_control": "humeval.stats.style",
    "style_covariates": "humeval.stats.style",
    "POSTHOC_TESTS": "humeval.stats.significance",
    "anova_oneway": "humeval.stats.significance",
    "friedman": "humeval.stats.significance",
    "kruskal_wallis": "humeval.stats.significance",
    "mann_whitney": "humeval.stats.significance",
    "paired_bootstrap": "humeval.stats.significance",
    "posthoc": "humeval.stats.significance",
    "rm_anova": "humeval.stats.significance",
    "shapiro": "humeval.stats.significance",
    "sign_test": "humeval.stats.significance",
    "ttest": "humeval.stats.significance",
    "wilcoxon": "humeval.stats.significance",
}

__all__ = [
    "DavidsonFit",
    "ALPHA_LEVELS",
    "CI_METHODS",
    "CORRECTIONS",
    "ICC_FORMS",
    "POSTHOC_TESTS",
    "STYLE_FEATURES",
    "StyleControl",
    "VoteOutliers",
    "WINNERS",
    "Estimate",
    "Ranking",
    "adjust_pvalues",
    "anova_oneway",
    "battles_from_scores",
    "benjamini_hochberg",
    "bradley_terry",
    "davidson_fit",
    "cohens_d",
    "elo",
    "eta_squared",
    "fleiss_kappa",
    "friedman",
    "holm",
    "icc",
    "kendall",
    "krippendorff_alpha",
    "kruskal_wallis",
    "mann_whitney",
    "mean_ci",
    "paired_bootstrap",
    "pearson",
    "posthoc",
    "ppi_active_mean",
    "ppi_difference",
    "ppi_labels_needed",
    "ppi_mean",
    "ppi_mean_arrays",
    "ppi_win_rate",
    "rank_biserial",
    "rank_by_scores",
    "read_battles",
    "rm_anova",
    "shapiro",
    "sign_test",
    "spearman",
    "confirmation_power",
    "confirmation_pvalues",
    "confirmation_threshold",
    "confirmation_wave_size",
    "curtailed_wave",
    "stopped_split_pvalues",
    "style_control",
    "style_covariates",
    "to_frame",
    "trueskill_ranking",
    "ttest",
    "vote_outliers",
    "wide_from_long",
    "wilcoxon",
    "wilson_interval",
    "write_battles",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from humeval.stats._checks import wide_from_long
    from humeval.stats._result import Estimate, to_frame
    from humeval.stats.agreement import (
        ALPHA_LEVELS,
        ICC_FORMS,
        fleiss_kappa,
        icc,
        krippendorff_alpha,
    )
    from humeval.stats.correction import CORRECTIONS, adjust_pvalues, benjamini_hochberg, holm
    from humeval.stats.correlation import CI_METHODS, kendall, pearson, spearman
    from humeval.stats.davidson import DavidsonFit, davidson_fit
    from humeval.stats.drift import (
        confirmation_power,
        confirmation_pvalues,
        confirmation_threshold,
        confirmation_wave_size,
        curtailed_wave,
        stopped_split_pvalues,
    )
    from humeval.stats.effect import cohens_d, eta_squared, rank_biserial
    from humeval.stats.means import mean_ci
    from humeval.stats.ppi import (
        ppi_active_mean,
        ppi_difference,
        ppi_labels_needed,
        ppi_mean,
        ppi_mean_arrays,
        ppi_win_rate,
    )
    from humeval.stats.proportion import wilson_interval
    from humeval.stats.rankings import (
        WINNERS,
        Ranking,
        battles_from_scores,
        bradley_terry,
        elo,
        rank_by_scores,
        read_battles,
        trueskill_ranking,
        write_battles,
    )
    from humeval.stats.significance import (
        POSTHOC_TESTS,
        anova_oneway,
        friedman,
        kruskal_wallis,
        mann_whitney,
        paired_bootstrap,
        posthoc,
        rm_anova,
        shapiro,
        sign_test,
        ttest,
        wilcoxon,
    )
    from humeval.stats.style import STYLE_FEATURES, StyleControl, style_control, style_covariates
    from humeval.stats.vote_quality import VoteOutliers, vote_outliers
