"""humeval.stats: agreement, significance tests, effect sizes, rankings and correlations.

Pure functions over arrays (or long DataFrames via :func:`wide_from_long`). Every
function returns an :class:`Estimate` (``estimate, ci_low, ci_high, p_value, n, method,
extra``), a mapping of them (:func:`posthoc`), or a :class:`Ranking` of them. Randomness
(bootstrap) enters only through a ``seed`` argument (int or ``numpy.random.Generator``).
Each docstring gives the formula, a reference, and the oracle it was checked against.
"""

from humeval.stats._checks import wide_from_long
from humeval.stats._result import Estimate, to_frame
from humeval.stats.agreement import ALPHA_LEVELS, ICC_FORMS, fleiss_kappa, icc, krippendorff_alpha
from humeval.stats.correction import CORRECTIONS, adjust_pvalues, benjamini_hochberg, holm
from humeval.stats.correlation import CI_METHODS, kendall, pearson, spearman
from humeval.stats.effect import cohens_d, eta_squared, rank_biserial
from humeval.stats.ppi import (
    ppi_active_mean,
    ppi_difference,
    ppi_mean,
    ppi_mean_arrays,
    ppi_win_rate,
)
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

__all__ = [
    "ALPHA_LEVELS",
    "CI_METHODS",
    "CORRECTIONS",
    "ICC_FORMS",
    "POSTHOC_TESTS",
    "WINNERS",
    "Estimate",
    "Ranking",
    "adjust_pvalues",
    "anova_oneway",
    "battles_from_scores",
    "benjamini_hochberg",
    "bradley_terry",
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
    "paired_bootstrap",
    "pearson",
    "posthoc",
    "ppi_active_mean",
    "ppi_difference",
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
    "to_frame",
    "trueskill_ranking",
    "ttest",
    "wide_from_long",
    "wilcoxon",
    "write_battles",
]
