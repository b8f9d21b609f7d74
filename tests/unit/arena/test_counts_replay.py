"""Arena vote counts and their exchangeable replay (hand-made counts, and Chatbot Arena's where available)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from humeval.arena.counts import read_arena_counts
from humeval.arena.replay import draw_votes, replay_counts
from humeval.errors import DataError, HumevalError

from .made_up import clear_order_counts


def _write(tmp_path: Path, raw: object) -> Path:
    p = tmp_path / "counts.json"
    p.write_text(json.dumps(raw))
    return p


def test_read_orients_and_adds_pairs(tmp_path: Path) -> None:
    raw = {"models": ["a", "b", "c"], "X": [[1, 0], [0, 1], [1, 2]], "Y": [[5, 1, 2, 0], [3, 4, 0, 1], [2, 2, 2, 2]]}
    c = read_arena_counts(_write(tmp_path, raw))
    assert c.pairs.tolist() == [[0, 1], [1, 2]]
    assert c.counts.tolist() == [[4, 9, 2, 1], [2, 2, 2, 2]]  # (1, 0) swapped to (0, 1) and added
    wins, ties = c.matrices()
    assert wins[0, 1] == 4 and wins[1, 0] == 9 and ties[0, 1] == ties[1, 0] == 3 and c.votes == 24


@pytest.mark.parametrize(("raw", "match"), [
    ([1, 2], "an object with 'models', 'X' and 'Y'"),
    ({"models": ["a"], "X": [[0, 0]], "Y": [[1, 1, 1, 1]]}, "two different models"),
    ({"models": ["a", "b"], "X": [[0, 1]], "Y": [[1, -1, 1, 1]]}, "negative count"),
    ({"models": ["a", "b"], "X": [[0, 1]], "Y": []}, "1 pairs but 'Y' 0 rows"),
])
def test_bad_files_say_what_is_wrong(tmp_path: Path, raw: object, match: str) -> None:
    with pytest.raises(DataError, match=match):
        read_arena_counts(_write(tmp_path, raw))
    with pytest.raises(DataError, match="no such arena counts file"):
        read_arena_counts(tmp_path / "missing.json")


def test_top_skips_a_model_that_met_none_of_the_others(tmp_path: Path) -> None:
    raw = {"models": ["a", "b", "c", "lonely", "d"], "X": [[0, 1], [1, 2], [0, 2], [3, 4], [2, 4]],
           "Y": [[30, 10, 5, 0], [30, 10, 5, 0], [30, 10, 5, 0], [90, 1, 0, 0], [30, 10, 5, 0]]}
    c = read_arena_counts(_write(tmp_path, raw))
    top = c.top(3)
    assert "lonely" not in top.models and len(top.models) == 3
    with pytest.raises(DataError, match="--models must be an integer in 2..5"):
        c.top(9)


def test_draw_votes_is_without_replacement() -> None:
    rng = np.random.default_rng(0)
    remaining = np.array([[[3, 1, 0, 2], [0, 0, 0, 0]]] * 500)
    drawn = draw_votes(rng, remaining, np.array([[4, 2]] * 500))
    assert (drawn <= remaining).all() and (drawn.sum(axis=-1) == [4, 0]).all()
    # hypergeometric mean of the first category: 4 * 3 / 6
    assert drawn[:, 0, 0].mean() == pytest.approx(2.0, abs=0.1)
    everything = draw_votes(rng, remaining, np.array([[10, 10]] * 500))
    assert (everything == remaining).all()


def test_replay_of_made_up_counts_decides_right(tmp_path: Path) -> None:
    # replays in random orders find the best of a clear order
    c = read_arena_counts(clear_order_counts(tmp_path))
    res = replay_counts(c, "best", replays=30, seed=1, first_batch=100)
    assert res.truth_order[0] == 0 and res.data_votes == 3600
    assert res.decided.mean() > 0.8 and (res.decided_at <= res.data_votes).all()
    assert all(a in (None, (0,)) for a in res.answers) and not res.wrong.any()
    uni = replay_counts(c, "best", policy="uniform", replays=30, seed=1, first_batch=100)
    assert np.where(res.decided, res.decided_at, 3600).mean() < np.where(uni.decided, uni.decided_at, 3600).mean()
    with pytest.raises(HumevalError, match="unknown question"):
        replay_counts(c, "bets")


def test_chatbot_arena_top_models(shared_data: Path) -> None:
    c = read_arena_counts(shared_data / "arena" / "chatbotarena_20240814.json")
    assert c.votes == 1_670_250 and len(c.models) == 129
    top = c.top(8)
    assert top.models[:2] == ("chatgpt-4o-latest", "gemini-1.5-pro-exp-0801")  # the data card's two leaders
    res = replay_counts(top, "ranking", replays=4, seed=2)
    assert not res.wrong.any()
    assert ((res.votes_used > 0) & (res.votes_used <= top.votes)).all()
    assert (res.rank_width >= 1).all() and (res.rank_width < 8).all()


def test_batch_allocation_is_exact_and_even() -> None:
    from humeval.policies.pooled_goal import allocate as _allocate

    rng = np.random.default_rng(0)
    p = np.array([[0.1, 0.25, 0.25, 0.4], [0.5, 0.5, 0.0, 0.0]])
    draws = np.stack([_allocate(rng, np.array([7, 3]), p) for _ in range(20_000)])
    assert (draws.sum(axis=-1) == [7, 3]).all()  # every batch has its size
    assert np.abs(draws[:, 0, 1] - draws[:, 0, 2]).max() <= 1  # equal weights: equal votes up to one
    assert (draws[:, 1, 2:] == 0).all()
    np.testing.assert_allclose(draws.mean(axis=0), [[0.7, 1.75, 1.75, 2.8], [1.5, 1.5, 0, 0]], atol=0.03)


def test_vote_logs_are_counted(tmp_path: Path) -> None:
    from humeval.arena.counts import read_arena_votes

    csv = tmp_path / "crowd.csv"
    csv.write_text("id,worker,winner,left,right\n0,w1,left,b,a\n1,w2,right,b,a\n2,w3,tie,a,b\n3,w1,left,a,c\n")
    c = read_arena_votes(csv)
    assert c.models == ("a", "b", "c")
    assert c.pairs.tolist() == [[0, 1], [0, 2]]
    assert c.counts.tolist() == [[1, 1, 1, 0], [1, 0, 0, 0]]  # b won once as left, a once as right, one tie
    log = tmp_path / "battles.json"
    log.write_text(json.dumps([{"model_a": "x", "model_b": "y", "winner": "model_b"},
                               {"model_a": "y", "model_b": "x", "winner": "tie (bothbad)"},
                               {"model_a": "y", "model_b": "x", "winner": "model_a"}]))
    fc = read_arena_votes(log)
    assert fc.models == ("x", "y") and fc.counts.tolist() == [[0, 2, 0, 1]]
    counts_file = _write(tmp_path, {"models": ["a", "b"], "X": [[0, 1]], "Y": [[1, 2, 3, 4]]})
    assert read_arena_votes(counts_file).counts.tolist() == [[1, 2, 3, 4]]
    csv.write_text("winner,left,right\nboth,a,b\n")
    with pytest.raises(DataError, match="row 2: winner 'both' is not left, right or tie"):
        read_arena_votes(csv)
    with pytest.raises(DataError, match="no such arena votes file"):
        read_arena_votes(tmp_path / "nothing.csv")
