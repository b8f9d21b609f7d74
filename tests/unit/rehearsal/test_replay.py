"""The replayed crowd's answers on a hand-made vote table: own votes flipped to the served sides, other workers'
votes when the worker never judged the battle, the pair's votes when nobody did, a pair nobody judged refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from humeval.errors import DataError, HumevalError
from humeval.rehearsal.replay import VoteReplay, read_crowd_votes

VOTES = pd.DataFrame({
    "item_id": ["p1", "p1", "p2"],
    "model_a": ["X", "Y", "X"],
    "model_b": ["Y", "X", "Y"],
    "winner": ["model_a", "tie", "model_b"],
    "judge": ["w1", "w2", "w3"],
})


def test_own_votes_are_flipped_to_the_served_sides_and_the_rest_drawn_from_others() -> None:
    replay = VoteReplay(VOTES)
    rng = np.random.default_rng(0)
    # participant 0's first battle is p1: it becomes w1 or w2 (who judged it); force w1 by binding first
    replay.bound[0] = "w1"
    assert replay.answer(0, "p1", "X", "Y", rng) == "A"  # w1 saw X left, X won
    assert replay.answer(0, "p1", "Y", "X", rng) == "B"  # served flipped: X is on side B
    # w1 never judged p2: w3's vote on it (Y won), on the served sides
    assert replay.answer(0, "p2", "Y", "X", rng) == "A"
    # nobody judged p3: a vote on the pair X / Y on another prompt
    vote = replay.answer(0, "p3", "X", "Y", rng)
    assert vote in {"A", "tie", "B"}
    assert [s["source"] for s in replay.served] == ["own", "own", "others", "pair"]
    assert replay.counts() == {"own": 2, "others": 1, "pair": 1}
    with pytest.raises(HumevalError, match="no recorded vote on the pair"):
        replay.answer(0, "p1", "X", "Z", rng)


def test_a_participant_becomes_a_worker_who_judged_its_first_battle_and_no_two_share_one() -> None:
    replay = VoteReplay(VOTES)
    rng = np.random.default_rng(1)
    replay.answer(0, "p2", "X", "Y", rng)
    replay.answer(1, "p2", "X", "Y", rng)
    assert replay.bound[0] == "w3" and replay.bound[1] == "w1"  # w3 judged p2; then the first worker left
    assert replay.served[1]["source"] == "others"


def test_llmfao_votes_are_read_with_prompt_slugs(tmp_path: Path, shared_data: Path) -> None:
    votes = read_crowd_votes(shared_data / "arena" / "llmfao-crowd-comparisons.csv")
    assert len(votes) == 8931 and set(votes["winner"]) == {"model_a", "model_b", "tie"}
    slugs = set(pd.read_json(shared_data / "arena" / "llmfao-prompts.jsonl", lines=True)["slug"])
    assert set(votes["item_id"]) <= slugs
    bad = tmp_path / "votes.csv"
    VOTES.assign(winner=["left", "tie", "tie"]).to_csv(bad, index=False)
    with pytest.raises(DataError, match="winner 'left'"):
        read_crowd_votes(bad)
