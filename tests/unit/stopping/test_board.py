"""The arena leaderboard (humeval.stopping.board): counts by hand, the statements against PooledStatements fed
directly, and every look a prefix of one sequence of batches."""

from __future__ import annotations

import numpy as np
import pytest

from humeval.errors import DataError
from humeval.stats.davidson import davidson_fit
from humeval.stopping.board import arena_board, vote_matrices
from humeval.stopping.pooled import PooledStatements

SYSTEMS = ("a", "b", "c", "d")


def _votes(n: int, seed: int = 1) -> tuple[list[str], list[str], list[str]]:
    rng = np.random.default_rng(seed)
    theta = np.array([1.5, 0.7, 0.0, -1.0])
    first, second, choice = [], [], []
    for _ in range(n):
        i, j = rng.choice(4, 2, replace=False)
        u = rng.random()
        won = rng.random() < 1 / (1 + np.exp(-(theta[i] - theta[j])))
        first.append(SYSTEMS[i])
        second.append(SYSTEMS[j])
        choice.append("tie" if u < 0.05 else "both-bad" if u < 0.1 else "A" if won else "B")
    return first, second, choice


def test_the_vote_matrices_count_by_hand() -> None:
    wins, ties = vote_matrices(3, np.array([0, 0, 1, 2, 2]), np.array([1, 1, 2, 0, 1]), ["A", "B", "tie", "A", "both-bad"])
    assert wins.tolist() == [[0, 1, 0], [1, 0, 0], [1, 0, 0]]
    assert ties.tolist() == [[0, 0, 0], [0, 0, 2], [0, 2, 0]]


def test_the_board_is_the_pooled_statements_and_the_davidson_fit_of_the_votes() -> None:
    first, second, choice = _votes(437)
    board = arena_board(SYSTEMS, first, second, choice, batch=50, seed=7)
    idx = {s: i for i, s in enumerate(SYSTEMS)}
    rule = PooledStatements(4, "ranking", 0.05, seed=7)
    for start in range(0, 400, 50):
        w, t = np.zeros((4, 4)), np.zeros((4, 4))
        for f, s, c in zip(first[start:start + 50], second[start:start + 50], choice[start:start + 50], strict=True):
            if c == "A":
                w[idx[f], idx[s]] += 1
            elif c == "B":
                w[idx[s], idx[f]] += 1
            else:
                t[idx[f], idx[s]] += 1
                t[idx[s], idx[f]] += 1
        state = rule.update(w[None], t[None])
    assert (board.fed, board.pending) == (400, 37)
    assert board.rank_low.tolist() == state.rank_low[0].tolist() and board.rank_high.tolist() == state.rank_high[0].tolist()
    assert board.basis == "pooled" and board.answer == (None if state.answer[0] is None else
                                                        tuple(SYSTEMS[i] for i in state.answer[0]))
    fit = davidson_fit(board.wins, board.ties)
    np.testing.assert_allclose(board.theta, fit.theta)
    assert board.wins.sum() + board.ties.sum() // 2 == 437 and not board.ridge
    assert board.order[0] == 0  # the strongest system leads


def test_a_look_inside_a_batch_reads_the_same_statements_as_the_batch_before() -> None:
    first, second, choice = _votes(180, seed=3)
    at_150 = arena_board(SYSTEMS, first[:150], second[:150], choice[:150], batch=50, seed=2)
    at_199 = arena_board(SYSTEMS, first, second, choice, batch=50, seed=2)
    assert at_150.rank_low.tolist() == at_199.rank_low.tolist() and at_150.reason == at_199.reason
    assert (at_199.fed, at_199.pending) == (150, 30)


def test_few_votes_get_the_ridge_and_bad_input_is_named() -> None:
    board = arena_board(SYSTEMS, ["a"], ["b"], ["A"])
    assert board.ridge and board.answer is None and board.reason.startswith("undecided")
    with pytest.raises(DataError, match="3 or more systems"):
        arena_board(("a", "b"), [], [], [])
    with pytest.raises(DataError, match="'z', not one of"):
        arena_board(SYSTEMS, ["z"], ["a"], ["A"])
    with pytest.raises(DataError, match="'C' is not a pairwise choice"):
        arena_board(SYSTEMS, ["a"], ["b"], ["C"])


def test_the_bootstrap_intervals_are_those_of_resampling_the_votes_one_by_one() -> None:
    from humeval.stopping.board import davidson_intervals

    first, second, choice = _votes(300, seed=4)
    board = arena_board(SYSTEMS, first, second, choice)
    low, high = davidson_intervals(board.wins, board.ties, n_boot=400, seed=9)
    # the reference: draw 300 votes with replacement, 400 times, and fit each (a loop over resamples)
    idx = {s: i for i, s in enumerate(SYSTEMS)}
    rng = np.random.default_rng(10)
    thetas = []
    for _ in range(400):
        pick = rng.integers(0, 300, 300)
        w, t = vote_matrices(4, np.array([idx[first[p]] for p in pick]), np.array([idx[second[p]] for p in pick]),
                             [choice[p] for p in pick])
        thetas.append(davidson_fit(w, t).theta)
    ref_low, ref_high = np.quantile(np.array(thetas), [0.025, 0.975], axis=0)
    # two independent Monte Carlo runs of one bootstrap: equal within their simulation error
    np.testing.assert_allclose(low, ref_low, atol=0.12)
    np.testing.assert_allclose(high, ref_high, atol=0.12)
    assert ((low < board.theta) & (board.theta < high)).all()


def test_the_analysis_record_reads_the_votes_in_submission_order() -> None:
    import pandas as pd

    from humeval.analysis.pairwise import board_record

    first, second, choice = _votes(260, seed=5)
    stamps = [f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z" for n in range(260)]
    frame = pd.DataFrame({"system": first, "system_b": second, "choice": choice, "submitted_at": stamps})
    shuffled = frame.sample(frac=1.0, random_state=0)
    rec = board_record(shuffled, list(SYSTEMS), 3, n_boot=200)
    board = arena_board(SYSTEMS, first, second, choice, seed=3)
    assert [r.system for r in rec.rows] == [SYSTEMS[i] for i in board.order]
    assert [(r.rank_low, r.rank_high) for r in rec.rows] == [(int(board.rank_low[i]), int(board.rank_high[i]))
                                                             for i in board.order]
    assert (rec.fed, rec.pending, rec.reason) == (250, 10, board.reason)
