"""LLMFAO-style crowd votes with a judge: reading, fixed-n coverage, watched statements, the CLI's --judge."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from humeval.arena.ppi import (
    agreement,
    arena_ppi,
    asymptotic_cs_multiplier,
    other_workers,
    ppi_sequence,
    ppi_splits,
    read_judged_votes,
)
from humeval.errors import DataError
from tests.cli import humeval

MODELS = ["m0", "m1", "m2", "m3", "m4"]


def _write(folder: Path, *, seed: int = 0, items: int = 900, judge_right: float = 0.9) -> tuple[Path, Path]:
    """Made-up comparisons of five models (strengths 1 .. -1), three crowd votes each, and a judge that gives the
    comparison's own leaning (its latent preference) with probability ``judge_right``, else a coin."""
    rng = np.random.default_rng(seed)
    th = np.linspace(1, -1, 5)
    a = rng.integers(0, 5, items)
    b = (a + rng.integers(1, 5, items)) % 5
    lean = 1 / (1 + np.exp(-(th[a] - th[b]) - rng.normal(0, 1.5, items)))  # the comparison's own leaning
    crowd, judge = ["id,left,right,winner,worker"], ["id,left,right,winner"]
    for i in range(items):
        for w in range(3):
            won = rng.random() < lean[i]
            crowd.append(f"{i},{MODELS[a[i]]},{MODELS[b[i]]},{'left' if won else 'right'},{w}")
        g = lean[i] > 0.5 if rng.random() < judge_right else rng.random() < 0.5
        if i % 7 == 0:  # shown with the sides swapped to the judge
            judge.append(f"{i},{MODELS[b[i]]},{MODELS[a[i]]},{'right' if g else 'left'}")
        else:
            judge.append(f"{i},{MODELS[a[i]]},{MODELS[b[i]]},{'left' if g else 'right'}")
    cp, jp = folder / "crowd.csv", folder / "judge.csv"
    cp.write_text("\n".join(crowd) + "\n")
    jp.write_text("\n".join(judge) + "\n")
    return cp, jp


def test_read_judged_votes_turns_swapped_verdicts_round(tmp_path: Path) -> None:
    cp, jp = _write(tmp_path, items=50, judge_right=1.0)
    jv = read_judged_votes(cp, jp)
    assert jv.models == tuple(MODELS) and len(jv.human) == 150
    # judge_right = 1: the judge's verdict is the comparison's leaning, seen from the crowd's left in every row
    lean_left = jv.judge == 1.0
    assert lean_left.any() and (~lean_left).any()
    assert (jv.judge[jv.item == 0] == jv.judge[jv.item == 0][0]).all()
    others = other_workers(jv)
    first = np.flatnonzero(jv.item == 0)
    assert others[first[0]] == pytest.approx(jv.human[first[1:]].mean())


def test_read_errors(tmp_path: Path) -> None:
    cp, jp = _write(tmp_path, items=20)
    short = tmp_path / "short.csv"
    short.write_text("\n".join(jp.read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(DataError, match="no verdict for comparison id '19'"):
        read_judged_votes(cp, short)
    bad = tmp_path / "bad.csv"
    bad.write_text(jp.read_text().replace("left\n", "maybe\n", 1))
    with pytest.raises(DataError, match="winner 'maybe' is not left, right or tie"):
        read_judged_votes(cp, bad)
    with pytest.raises(DataError, match="no such judge verdict table file"):
        read_judged_votes(cp, tmp_path / "none.csv")


def test_fixed_n_coverage_and_a_good_judge_saves_votes(tmp_path: Path) -> None:
    jv = read_judged_votes(*_write(tmp_path, seed=1))
    ag = agreement(jv)
    assert ag.residual_correlation > 0.2 and 0 < ag.between_share < 1
    sp = ppi_splits(jv, share=0.3, splits=200, seed=2)
    cov, lo, hi = sp.coverage("ppi")
    # 200 splits x 5 models: the mean coverage of nominal 95 % intervals within a wide band (CLT intervals)
    assert 0.92 <= cov <= 0.98 and lo < cov < hi
    assert 0.92 <= sp.coverage("human")[0] <= 0.98
    assert sp.lam.mean() > 0.1 and sp.saving > 0.05
    assert (sp.se_ppi.mean(axis=0) < sp.se_human.mean(axis=0)).all()
    # a judge that is a coin gets lambda near 0 and saves nothing
    coin = jv.with_judge(np.random.default_rng(0).integers(0, 2, len(jv.human)).astype(float), "coin")
    sc = ppi_splits(coin, share=0.3, splits=50, seed=2)
    assert sc.lam.mean() < 0.05 and abs(sc.saving) < 0.03


def test_watched_statements_with_a_perfect_judge(tmp_path: Path) -> None:
    jv = read_judged_votes(*_write(tmp_path, seed=3))
    perfect = jv.with_judge(jv.human, "the humans themselves")
    sq = ppi_sequence(perfect, share=0.5, replays=20, seed=4, first=300)
    assert not sq.wrong_ppi.any() and not sq.wrong_human.any()
    assert np.allclose(sq.lam, 0.5, atol=0.05)  # f = y: lambda* = N / (n + N), the unlabelled share
    a, b, n = sq.count_ratio(5)
    assert n == 20 and a < 0.8 * b  # the judge is the label: fewer human votes for the same statements
    assert sq.ratio() < 1.0


def test_asymptotic_cs_multiplier_by_hand() -> None:
    alpha, t_star = 0.01, 400.0
    la = -2 * np.log(alpha)
    rho2 = (la + np.log(la + 1)) / t_star
    t = 900.0
    want = np.sqrt(2 * (t * rho2 + 1) / (t * rho2) * np.log(np.sqrt(t * rho2 + 1) / alpha))
    assert float(asymptotic_cs_multiplier(t, alpha, t_star)) == pytest.approx(want)
    # wider than the fixed-n interval at every t, and tightest near the tuned t
    from scipy.stats import norm

    grid = np.array([50.0, 400.0, 5000.0])
    m = asymptotic_cs_multiplier(grid, alpha, t_star)
    assert (m > norm.ppf(1 - alpha / 2)).all()


def test_cli_judge_rows(tmp_path: Path) -> None:
    cp, jp = _write(tmp_path, seed=5, items=600)
    res = humeval("arena", "replay", cp, "--judge", jp, "--splits", "20", "--replays", "4", "--labelled-share",
                  "0.4", "--format", "json", expect=0)
    rows = json.loads(res.stdout)["rows"]
    assert [r["judge"] for r in rows] == ["judge.csv", "other workers (bound)"]
    assert rows[0]["splits"] == 20 and rows[0]["replays"] == 4 and rows[0]["share"] == 0.4
    assert 0.0 <= rows[0]["lam"] <= 1.0 and 0.5 < rows[0]["coverage"] <= 1.0
    res = humeval("arena", "replay", cp, "--judge", tmp_path / "none.csv", expect=1)
    assert "no such judge verdict table file" in res.stderr
    assert arena_ppi(cp, jp, splits=5, replays=2, bound=False)[0].judge == "judge.csv"


def test_llmfao_gpt4(shared_data: Path) -> None:
    d = shared_data / "arena"
    jv = read_judged_votes(d / "llmfao-crowd-comparisons.csv", d / "llmfao-gpt4-crowd-comparisons.csv")
    assert len(jv.models) == 59 and len(jv.human) == 8931
    ag = agreement(jv)
    assert 0.6 < ag.decisive_agreement < 0.7 and ag.residual_correlation < 0.1 and ag.between_share < 0.2
    sp = ppi_splits(jv, share=0.5, splits=40, seed=0)
    assert 0.92 < sp.coverage("ppi")[0] < 0.97 and sp.lam.mean() < 0.05
