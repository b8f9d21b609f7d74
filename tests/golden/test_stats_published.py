"""Golden values: statistics pinned to published numbers (source of each in a comment)."""

from __future__ import annotations

import numpy as np
import pytest

from humeval.stats import fleiss_kappa, icc, krippendorff_alpha

# Fleiss (1971) psychiatric diagnoses: 30 patients x 6 raters, categories 1..5; as shipped in
# R irr (`diagnoses`) and statsmodels' tests. R: irr::kappam.fleiss(diagnoses) ->
# Kappa = 0.4302445, z = 17.65183 (values quoted in statsmodels/stats/tests/test_inter_rater.py).
DIAGNOSES = [
    [4, 4, 4, 4, 4, 4],
    [2, 2, 2, 5, 5, 5],
    [2, 3, 3, 3, 3, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4],
    [1, 1, 3, 3, 3, 3],
    [3, 3, 3, 3, 5, 5],
    [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4],
    [5, 5, 5, 5, 5, 5],
    [1, 4, 4, 4, 4, 4],
    [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3],
    [1, 4, 4, 4, 4, 4],
    [2, 2, 4, 4, 4, 5],
    [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5],
    [1, 1, 1, 1, 1, 2],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 4, 4, 4, 4, 4],
    [2, 2, 4, 5, 5, 5],
    [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5],
    [2, 2, 2, 2, 2, 4],
    [1, 1, 1, 1, 5, 5],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3],
    [5, 5, 5, 5, 5, 5],
]


def test_fleiss_kappa_r_irr_diagnoses() -> None:
    ratings = np.array(DIAGNOSES)
    counts = np.stack([(ratings == c).sum(axis=1) for c in range(1, 6)], axis=1)
    res = fleiss_kappa(counts, n_boot=0)
    assert res.estimate == pytest.approx(0.4302445, abs=1e-7)
    assert res.extra["z"] == pytest.approx(17.65183, abs=1e-5)
    assert res.p_value < 1e-60


def test_fleiss_kappa_wikipedia_example() -> None:
    # https://en.wikipedia.org/wiki/Fleiss%27_kappa worked example: 10 items, 14 raters -> kappa = 0.210
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(table, n_boot=0).estimate == pytest.approx(0.210, abs=5e-4)


# Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability, reliability data matrix
# of 4 observers x 12 units (p. 3): nominal .743, ordinal .815, interval .849, ratio .797.
N = np.nan
KRIPP_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


@pytest.mark.parametrize(
    "level,published",
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_example(level: str, published: float) -> None:
    assert krippendorff_alpha(KRIPP_2011, level, n_boot=0).estimate == pytest.approx(
        published, abs=5e-4
    )


# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges; Table 4 gives
# ICC(1,1)=.17, ICC(2,1)=.29, ICC(3,1)=.71, ICC(1,4)=.44, ICC(2,4)=.62, ICC(3,4)=.91.
SHROUT_FLEISS = [
    [9, 2, 5, 8],
    [6, 1, 3, 2],
    [8, 4, 6, 8],
    [7, 1, 2, 6],
    [10, 5, 6, 9],
    [6, 2, 4, 7],
]


@pytest.mark.parametrize(
    "form,published",
    [("1,1", 0.17), ("2,1", 0.29), ("3,1", 0.71), ("1,k", 0.44), ("2,k", 0.62), ("3,k", 0.91)],
)
def test_icc_shrout_fleiss_1979(form: str, published: float) -> None:
    assert icc(SHROUT_FLEISS, form).estimate == pytest.approx(published, abs=5e-3)


def test_sign_test_matches_r_binom_test():
    # R 4.x: binom.test(7, 10) -> p-value = 0.34375, 95 percent CI 0.3475471 0.9332605
    from humeval.stats import sign_test

    res = sign_test(7, 3)
    assert res.estimate == pytest.approx(0.7)
    assert res.p_value == pytest.approx(0.34375, abs=1e-12)
    assert (res.ci_low, res.ci_high) == pytest.approx((0.3475471, 0.9332605), abs=1e-7)


def test_sign_test_refuses_no_decisive_judgements():
    from humeval.errors import DataError
    from humeval.stats import sign_test

    with pytest.raises(DataError, match="no decisive judgements"):
        sign_test(0, 0)
