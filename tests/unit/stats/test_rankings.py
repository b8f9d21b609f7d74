"""Rankings: Bradley-Terry against a statsmodels GLM, Elo against FastChat's loop, TrueSkill, clusters."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import trueskill

from humeval.errors import DataError
from humeval.stats import (
    battles_from_scores,
    bradley_terry,
    elo,
    paired_bootstrap,
    rank_by_scores,
    rankings,
    read_battles,
    trueskill_ranking,
    write_battles,
)


def _battles(seed: int, k: int = 4, n: int = 300, tie_rate: float = 0.2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    skill = np.linspace(1.5, -1.5, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p = 1 / (1 + np.exp(-(skill[a] - skill[b])))
    u = rng.random(n)
    tie = rng.random(n) < tie_rate
    winner = np.where(tie, "tie", np.where(u < p, "model_a", "model_b"))
    names = np.array([f"sys{i}" for i in range(k)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})


@pytest.mark.parametrize("seed", range(3))
def test_bradley_terry_matches_binomial_glm(seed: int) -> None:
    battles = _battles(seed)
    res = bradley_terry(battles, n_boot=0)
    systems = sorted(set(battles.model_a) | set(battles.model_b))
    idx = {s: i for i, s in enumerate(systems)}
    x = np.zeros((len(battles), len(systems)))
    x[np.arange(len(battles)), battles.model_a.map(idx)] = 1
    x[np.arange(len(battles)), battles.model_b.map(idx)] = -1
    y = battles.winner.map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy()
    glm = sm.GLM(y, x[:, 1:], family=sm.families.Binomial()).fit(tol=1e-13)
    theta = np.concatenate([[0.0], glm.params])
    theta -= theta.mean()
    expected = dict(zip(systems, 1000 + 400 / np.log(10) * theta, strict=True))
    for name, est in zip(res.systems, res.scores, strict=True):
        assert est.estimate == pytest.approx(expected[name], abs=1e-6)
    assert list(res.systems) == ["sys0", "sys1", "sys2", "sys3"]


def test_bradley_terry_two_systems_is_logit_of_win_share() -> None:
    battles = pd.DataFrame(
        {
            "model_a": ["a"] * 4,
            "model_b": ["b"] * 4,
            "winner": ["model_a", "model_a", "tie", "model_b"],
        }
    )
    res = bradley_terry(battles, n_boot=0, scale=1.0, base=np.e, init=0.0)
    share = 2.5 / 4  # ties as half wins
    assert res.score("a").estimate - res.score("b").estimate == pytest.approx(
        np.log(share / (1 - share)), abs=1e-10
    )


def test_bradley_terry_bootstrap_ranks_from_non_overlapping_cis() -> None:
    res = bradley_terry(_battles(1, n=800), n_boot=200, seed=3)
    assert res == bradley_terry(_battles(1, n=800), n_boot=200, seed=3)
    assert res != bradley_terry(_battles(1, n=800), n_boot=200, seed=4)
    for est in res.scores:
        assert est.ci_low < est.estimate < est.ci_high
    # a rank range is consistent with the CIs
    for i, name in enumerate(res.systems):
        better = sum(other.ci_low > res.scores[i].ci_high for other in res.scores)
        assert res.rank_range(name)[0] == 1 + better
    assert res.rank_range("sys0") == (1, 1)


def test_bradley_terry_infinite_mle_is_an_error_naming_systems() -> None:
    battles = pd.DataFrame(
        {
            "model_a": ["a", "a", "b"],
            "model_b": ["b", "c", "c"],
            "winner": ["model_a", "model_a", "tie"],
        }
    )
    with pytest.raises(DataError, match=r"never lost: \['a'\]"):
        bradley_terry(battles, n_boot=0)


def _fastchat_online_elo(
    battles: pd.DataFrame, k: float = 4, scale: float = 400, base: float = 10, init: float = 1000
) -> dict[str, float]:
    """FastChat's compute_online_elo (fastchat/serve/monitor/elo_analysis.py), scalar loop."""
    rating: dict[str, float] = {}
    for model_a, model_b, winner in battles[["model_a", "model_b", "winner"]].itertuples(
        index=False
    ):
        ra, rb = rating.setdefault(model_a, init), rating.setdefault(model_b, init)
        ea = 1 / (1 + base ** ((rb - ra) / scale))
        eb = 1 / (1 + base ** ((ra - rb) / scale))
        sa = 1.0 if winner == "model_a" else 0.0 if winner == "model_b" else 0.5
        rating[model_a] += k * (sa - ea)
        rating[model_b] += k * (1 - sa - eb)
    return rating


def test_elo_matches_fastchat_loop_and_hand_example() -> None:
    battles = _battles(2)
    res = elo(battles)
    expected = _fastchat_online_elo(battles)
    for name, est in zip(res.systems, res.scores, strict=True):
        assert est.estimate == pytest.approx(expected[name], abs=1e-9)
    two = pd.DataFrame({"model_a": ["x", "x"], "model_b": ["y", "y"], "winner": ["model_a", "tie"]})
    r = elo(two)
    # battle 1: +2 / -2; battle 2: E_x = 1/(1+10^(-4/400)), x += 4 (0.5 - E_x)
    ex = 1 / (1 + 10 ** (-4 / 400))
    assert r.score("x").estimate == pytest.approx(1002 + 4 * (0.5 - ex), abs=1e-12)


def test_elo_bootstrap_is_vectorised_equivalent_of_loop() -> None:
    battles = _battles(4, n=120)
    res = elo(battles, n_boot=50, seed=9)
    rng = np.random.default_rng(9)
    idx = rng.integers(0, len(battles), size=(50, len(battles)))
    boot = pd.DataFrame([_fastchat_online_elo(battles.iloc[row]) for row in idx])
    lo = boot.quantile(0.025)
    for name, est in zip(res.systems, res.scores, strict=True):
        assert est.ci_low == pytest.approx(np.percentile(boot[name], 2.5), abs=1e-9)
    assert lo.notna().all()


def test_trueskill_matches_direct_package_loop_and_orders_known_skills() -> None:
    battles = _battles(5, n=200)
    res = trueskill_ranking(battles, n_boot=0, seed=1, draw_probability=0.2)
    env = trueskill.TrueSkill(
        mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.2, backend=None
    )
    ratings = {s: env.create_rating() for s in sorted(set(battles.model_a) | set(battles.model_b))}
    order = np.random.default_rng(1).permutation(len(battles))
    for t in order:
        a, b, w = battles.iloc[t]
        if w == "model_b":
            a, b = b, a
        ratings[a], ratings[b] = trueskill.rate_1vs1(
            ratings[a], ratings[b], drawn=bool(w == "tie"), env=env
        )
    for name, est in zip(res.systems, res.scores, strict=True):
        assert est.estimate == pytest.approx(ratings[name].mu, abs=1e-12)
    assert res.systems[0] == "sys0"
    many = trueskill_ranking(_battles(5, n=1000, tie_rate=0.05), n_boot=0, seed=1)
    assert many.systems == ("sys0", "sys1", "sys2", "sys3")
    boot = trueskill_ranking(_battles(5, n=200), n_boot=20, seed=1)
    assert boot.rank_range("sys0")[0] == 1
    assert all(lo <= hi for lo, hi in zip(boot.rank_low, boot.rank_high, strict=True))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("draw_probability", [0.0, 0.01, 0.1, 0.5, 0.9])
def test_trueskill_replay_equals_a_direct_rate_1vs1_loop(seed: int, draw_probability: float) -> None:
    # wins, losses and ties in several orders (rows), each row against the package played one battle at a time.
    # With draw_probability 0 the draw margin is ~1e-8 (the package's ppf(0.5)), and a tie's update divides by the
    # difference of two nearly equal cdfs: ill-conditioned in both implementations, so that case has no ties
    rng = np.random.default_rng(seed)
    k, n = 5, 150
    a = rng.integers(0, k, n).astype(np.int32)
    b = ((a + rng.integers(1, k, n)) % k).astype(np.int32)
    tie_share = 0.2 if draw_probability else 0.0
    outcome = rng.choice([0.0, 0.5, 1.0], size=n, p=[0.5 - tie_share / 2, tie_share, 0.5 - tie_share / 2])
    rows = np.vstack([rng.permutation(n), rng.integers(0, n, (3, n))])
    sigma = 25 / 3
    env = trueskill.TrueSkill(
        mu=25.0, sigma=sigma, beta=sigma / 2, tau=sigma / 100, draw_probability=draw_probability, backend=None
    )
    margin = rankings._ts_draw_margin(draw_probability, sigma / 2)
    assert margin == pytest.approx(trueskill.calc_draw_margin(draw_probability, 2, env), rel=1e-14, abs=1e-300)
    mus, sigmas = rankings._trueskill_replay(
        rows, a, b, outcome, k, mu=25.0, sigma=sigma, beta=sigma / 2, tau=sigma / 100, margin=margin
    )
    for row, mu_row, sigma_row in zip(rows, mus, sigmas, strict=True):
        ratings = [env.create_rating() for _ in range(k)]
        for t in row:
            i, j = (b[t], a[t]) if outcome[t] == 0.0 else (a[t], b[t])
            ratings[i], ratings[j] = trueskill.rate_1vs1(
                ratings[i], ratings[j], drawn=bool(outcome[t] == 0.5), env=env
            )
        np.testing.assert_allclose(mu_row, [r.mu for r in ratings], rtol=0, atol=1e-10)
        np.testing.assert_allclose(sigma_row, [r.sigma for r in ratings], rtol=0, atol=1e-10)


def test_trueskill_step_refuses_an_update_the_package_cannot_compute() -> None:
    # a win by a player rated 1,000 below the loser: the package's cdf underflows to 0 and it raises
    env = trueskill.TrueSkill(mu=0.0, sigma=1.0, beta=0.5, tau=0.01, draw_probability=0.1, backend=None)
    with pytest.raises(FloatingPointError):
        trueskill.rate_1vs1(env.create_rating(0.0), env.create_rating(1000.0), env=env)
    one = np.ones(2)
    with pytest.raises(DataError, match="underflowed"):
        rankings._trueskill_step(np.array([0.0, 0.0]), one, np.array([0.0, 1000.0]), one, np.zeros(2, bool),
                                 beta=0.5, tau=0.01, margin=rankings._ts_draw_margin(0.1, 0.5))


# computed with the former implementation (one trueskill.rate_1vs1 call per battle and sample, commit 3b93873):
# the vectorised one must give the same ratings for the same seed (the same random stream) and the same rank ranges
_TRUESKILL_BEFORE = [
    (
        (7, 5, 120, 0.3),
        {"n_boot": 50, "seed": 3},
        ("sys0", "sys1", "sys2", "sys3", "sys4"),
        [29.418643808712652, 27.69880422444088, 25.955500223413605, 24.295196509799048, 22.270718899336696],
        [1.0679504348858229, 1.166674300074093, 1.062328131906059, 1.1991653593545841, 1.150339813722848],
        ((1, 2, 2, 3, 4), (1, 4, 4, 5, 5)),
    ),
    (
        (2, 3, 41, 0.0),
        {"n_boot": 50, "seed": 11, "draw_probability": 0.5},
        ("sys0", "sys1", "sys2"),
        [32.69648167279224, 30.055421736816772, 8.417959369526923],
        [2.8928920119919717, 2.4550013857878117, 3.2418120763389044],
        ((1, 1, 3), (2, 2, 3)),
    ),
]


@pytest.mark.parametrize("block", [None, 41 * 7])
@pytest.mark.parametrize(("data", "kwargs", "systems", "mus", "sigmas", "ranges"), _TRUESKILL_BEFORE)
def test_trueskill_ranking_keeps_the_former_numbers(
    monkeypatch: pytest.MonkeyPatch, block, data, kwargs, systems, mus, sigmas, ranges
) -> None:
    if block is not None:  # samples played in several blocks draw the same stream as one block
        monkeypatch.setattr(rankings, "_TRUESKILL_BLOCK", block)
    res = trueskill_ranking(_battles(*data), **kwargs)
    assert res.systems == systems
    np.testing.assert_allclose([e.estimate for e in res.scores], mus, rtol=0, atol=1e-10)
    np.testing.assert_allclose([e.extra["sigma"] for e in res.scores], sigmas, rtol=0, atol=1e-10)
    assert (res.rank_low, res.rank_high) == ranges


def test_battles_jsonl_round_trip_and_errors(tmp_path: Path) -> None:
    battles = _battles(0, n=20)
    battles["question_id"] = range(20)
    path = write_battles(battles, tmp_path / "battles.jsonl")
    back = read_battles(path)
    pd.testing.assert_frame_equal(back[battles.columns], battles)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"model_a": "a", "model_b": "b", "winner": "tie"})
        + "\n"
        + json.dumps({"model_a": "a", "model_b": "b", "winner": "draw"})
        + "\n"
    )
    with pytest.raises(
        DataError, match=r"bad.jsonl:2: winner 'draw' is not valid; valid: model_a, model_b, tie"
    ):
        read_battles(bad)
    bad.write_text('{"model_a": "a", "winner": "tie"}\n')
    with pytest.raises(DataError, match=r":1: missing field 'model_b'"):
        read_battles(bad)
    bad.write_text("{not json\n")
    with pytest.raises(DataError, match=r":1: broken JSON line"):
        read_battles(bad)


def test_fastchat_tie_bothbad_counts_as_tie() -> None:
    a = pd.DataFrame(
        {
            "model_a": ["x", "y", "x"],
            "model_b": ["y", "x", "y"],
            "winner": ["model_a", "model_a", "tie (bothbad)"],
        }
    )
    b = a.assign(winner=["model_a", "model_a", "tie"])
    assert bradley_terry(a, n_boot=0).score("x").estimate == pytest.approx(
        bradley_terry(b, n_boot=0).score("x").estimate
    )


def test_battles_from_scores_pairs_within_groups() -> None:
    data = pd.DataFrame(
        {"judgement": [0, 0, 0, 1, 1, 1], "system": list("abcabc"), "score": [3, 3, 1, 2, 5, 5]}
    )
    out = battles_from_scores(data, group="judgement", system="system", score="score")
    assert out[["model_a", "model_b", "winner"]].values.tolist() == [
        ["a", "b", "tie"],
        ["a", "c", "model_a"],
        ["b", "c", "model_a"],
        ["a", "b", "model_b"],
        ["a", "c", "model_b"],
        ["b", "c", "tie"],
    ]
    with pytest.raises(DataError, match="appears twice"):
        battles_from_scores(
            pd.concat([data, data.iloc[:1]]), group="judgement", system="system", score="score"
        )


def test_rank_by_scores_clusters_and_agrees_with_paired_bootstrap() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(size=(200, 1))
    scores = pd.DataFrame(
        base + rng.normal(size=(200, 3)) * 0.5 + [1.0, 0.95, 0.0], columns=["A", "B", "C"]
    )
    res = rank_by_scores(scores, n_boot=1000, seed=4)
    assert res.label() == "1.-2. A + B; 3. C"
    two = rank_by_scores(scores[["A", "C"]], n_boot=1000, seed=4)
    pb = paired_bootstrap(scores["A"], scores["C"], n_boot=1000, seed=4)
    assert two.extra["pairs"]["A > C"] == pytest.approx(pb.p_value)
    ab = rank_by_scores(scores[["A", "B"]], n_boot=1000, seed=4)
    assert ab.extra["pairs"]["A > B"] == pytest.approx(
        paired_bootstrap(scores["A"], scores["B"], n_boot=1000, seed=4).p_value
    )


def test_battle_validation_errors() -> None:
    with pytest.raises(DataError, match="missing column"):
        bradley_terry(pd.DataFrame({"model_a": ["x"], "winner": ["tie"]}))
    with pytest.raises(DataError, match="row 0: model_a and model_b are both 'x'"):
        elo(pd.DataFrame({"model_a": ["x"], "model_b": ["x"], "winner": ["tie"]}))
