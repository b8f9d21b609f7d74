"""A rehearsal crowd that replays LLMFAO's real crowd votes through the real server (``kind="replay"``): each
synthetic participant is one LLMFAO worker and answers the battle served with that worker's recorded vote, flipped
to the sides the server chose; the report's win rates are a direct count of the votes replayed."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from humeval.data.llmfao import llmfao_outputs
from humeval.rehearsal import rehearse
from humeval.rehearsal.replay import REPLAY_SOURCES, read_crowd_votes
from humeval.store import Store
from humeval.study import StudyFolder
from tests.integration.server.studies import arena_study

pytestmark = pytest.mark.timeout(600)

#: four LLMFAO models with a non-empty answer to all 19 prompts whose six pairs the crowd judged most (3 to 13 prompts
#: per pair)
REPLAY_MODELS = ("GPT 3.5 Turbo", "StarCoderChat Alpha (16B)", "Weaver 12k", "command-light")


def replay_study(root: Path, data: Path) -> StudyFolder:
    """The arena study of :data:`REPLAY_MODELS` on the prompts where no two of them wrote the same answer (a replayed
    vote must know which model is on each side: 18 of 19 prompts)."""
    outputs = llmfao_outputs(data, models=REPLAY_MODELS)
    clash = outputs.groupby("item_id")["output"].agg(lambda s: s.duplicated().any())
    return arena_study(root, data, models=REPLAY_MODELS, prompts=sorted(clash.index[~clash]), per_participant=6)


def test_a_replayed_crowd_votes_as_recorded_and_the_report_counts_its_votes(tmp_path: Path, shared_data: Path) -> None:
    data = shared_data / "arena"
    study = replay_study(tmp_path / "arena", data)
    result = rehearse(study, kind="replay", crowd_votes=data / "llmfao-crowd-comparisons.csv", concurrency=2,
                      timeout=300)
    assert result.judgements == result.judgements_required > 0
    served = pd.read_json(result.workspace / "replayed-votes.jsonl", lines=True)
    assert len(served) == result.judgements and set(served["source"]) <= set(REPLAY_SOURCES)
    assert result.summary["replayed"] == {s: int((served["source"] == s).sum()) for s in REPLAY_SOURCES}

    # the store's judgements, each with the models on its sides as the server served them, are the votes replayed
    store = Store.open(study, result.store)
    try:
        judged = store.judgements()
    finally:
        store.close()
    stored = pd.DataFrame([{"participant": int(j["participant_id"].rsplit("-", 1)[1]) - 1, "item_id": j["item_id"],
                            "model_a": j["display"][0], "model_b": j["display"][1], "vote": j["values"]["vote"]}
                           for j in judged])
    key = ["participant", "item_id", "model_a", "model_b"]
    pd.testing.assert_frame_equal(stored.sort_values(key).reset_index(drop=True)[[*key, "vote"]],
                                  served.sort_values(key).reset_index(drop=True)[[*key, "vote"]], check_dtype=False)

    # where the worker judged the battle, the served vote is their recorded vote, flipped to the served sides
    votes = read_crowd_votes(data / "llmfao-crowd-comparisons.csv")
    votes["pair"] = [frozenset(p) for p in zip(votes["model_a"], votes["model_b"], strict=True)]
    votes["won"] = [r.model_a if r.winner == "model_a" else r.model_b if r.winner == "model_b" else r.winner
                    for r in votes.itertuples()]
    assert served.groupby("participant")["worker"].nunique().eq(1).all()  # a participant plays one worker
    assert served.drop_duplicates("participant")["worker"].is_unique  # and no two participants play the same one
    flips = {True: 0, False: 0}
    for s in served.itertuples():
        pair = frozenset((s.model_a, s.model_b))
        battle = votes[(votes["pair"] == pair) & (votes["item_id"] == s.item_id)]
        mine = battle[battle["judge"] == str(s.worker)]
        assert (s.source == "own") == (len(mine) > 0)
        if s.source == "own":
            r = mine.iloc[0]
            flipped = r["model_a"] != s.model_a
            flips[bool(flipped)] += 1
            sides = {"model_a": "B", "model_b": "A"} if flipped else {"model_a": "A", "model_b": "B"}
            assert s.vote == sides.get(r["winner"], r["winner"]), (s, r)
        else:  # another worker's vote on that battle; nobody's: a vote on the pair on another prompt
            pool = battle if s.source == "others" else votes[votes["pair"] == pair]
            assert s.source == "pair" or len(battle) > 0
            assert s.winner in set(pool["won"])
            assert s.vote == ("A" if s.winner == s.model_a else "B" if s.winner == s.model_b else s.winner)
    assert flips[True] > 0 and flips[False] > 0  # both orientations of a recorded vote were served and replayed

    # the report's win rates: a direct count of the replayed votes (a win 1, a tie 1/2; LLMFAO has no both-bad)
    assert not (served["vote"] == "both-bad").any()
    rates = json.loads((result.workspace / "results.json").read_text(encoding="utf-8"))["criteria"]["vote"]["win_rates"]
    for a in REPLAY_MODELS:
        for b in REPLAY_MODELS:
            if a == b:
                continue
            met = served[served[["model_a", "model_b"]].apply(frozenset, axis=1) == frozenset((a, b))]
            count = ((met["winner"] == a).sum() + 0.5 * (met["winner"] == "tie").sum()) / len(met)
            assert rates[a][b] == pytest.approx(count, abs=1e-12), (a, b)
    print(json.dumps({"replayed": result.summary["replayed"], "own_flipped": flips[True], "own_as_recorded":
                      flips[False], "judgements": result.judgements, "workers": int(served["worker"].nunique())}))


#: :data:`REPLAY_MODELS` as a live arena names them
LIVE_REPLAY = {"gpt-3.5-turbo": "GPT 3.5 Turbo", "starcoderchat-alpha-16b": "StarCoderChat Alpha (16B)",
               "weaver-12k": "Weaver 12k", "command-light": "command-light"}


def test_a_replayed_crowd_votes_on_live_battles(tmp_path: Path, shared_data: Path) -> None:
    """A live arena (its data prompts only, the four models' answers streamed from their recorded table): each replayed
    worker is told the models on each side by the streamed answers, and votes as recorded."""
    from tests.integration.server.studies import live_arena_study

    data = shared_data / "arena"
    outputs = llmfao_outputs(data, models=REPLAY_MODELS)
    clash = outputs.groupby("item_id")["output"].agg(lambda s: s.duplicated().any())
    prompts = sorted(clash.index[~clash])[:6]
    study = live_arena_study(tmp_path / "live", data, prompts=len(prompts), items=prompts, per_participant=6,
                             models=LIVE_REPLAY)
    back = {v: k for k, v in LIVE_REPLAY.items()}
    votes = read_crowd_votes(data / "llmfao-crowd-comparisons.csv")
    votes = votes[votes["model_a"].isin(back) & votes["model_b"].isin(back)]
    votes = votes.assign(model_a=votes["model_a"].map(back), model_b=votes["model_b"].map(back))
    votes.to_csv(tmp_path / "votes.csv", index=False)
    result = rehearse(study, kind="replay", crowd_votes=tmp_path / "votes.csv", concurrency=2, timeout=300)
    assert result.judgements == result.judgements_required == 36  # 6 pairs on 6 prompts, none failed: all voted
    served = pd.read_json(result.workspace / "replayed-votes.jsonl", lines=True)
    store = Store.open(study, result.store)
    try:
        judged = store.judgements()
    finally:
        store.close()
    stored = sorted((j["item_id"], j["display"][0], j["display"][1], j["values"]["vote"]) for j in judged)
    assert stored == sorted(zip(served["item_id"], served["model_a"], served["model_b"], served["vote"], strict=True))
    assert len(served) == result.judgements and served["source"].isin(REPLAY_SOURCES).all()
