"""A 5-system ``goal: best`` study decided on pooled statements (``stopping.pooling``) through the real server:
the epochs' pairs chosen before their votes, the decision at an epoch's end, before the direct goal on the same
votes; the analysis replay from the export reaching the same answer at the same n; the admin page's pooled card.

In-process (httpx.ASGITransport) on SQLite with four participants at a time answering from a Bradley-Terry model
(seeded; the clients of test_live_goal.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from humeval.analysis.decisions import replay_decisions
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusions, valid_judgements
from humeval.pipeline import run_stage
from humeval.report.prereg import prereg
from humeval.stopping.goals import GoalRule

from . import test_live_goal as base
from .test_live_stopping import ADMIN

pytestmark = pytest.mark.timeout(240)
SYSTEMS = base.SYSTEMS


def test_pooled_best_decides_before_the_direct_goal_and_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # uniform pairs (Chatbot Arena's random pairs), where pooling saves votes (docs/arena.md, "Pooled goals in serve")
    pooled = "goal: best, pooling: true, epoch: 40, pair_choice: uniform,"
    monkeypatch.setattr(base, "PROTOCOL", base.PROTOCOL.replace("goal: best,", pooled))
    study = base.make_study(tmp_path / "study", items=120)
    assert study.protocol.stopping is not None and study.protocol.stopping.pooling

    c = base.collect_until_decided(study, max_waves=60)
    try:
        st = c.store.stopping()[0]
        assert st["outcome"] == "decided" and "['s3']" in st["reason"], st
        assert "pooled Bradley-Terry statements" in st["reason"] and "fit is poor" not in st["reason"]
        n = st["n"]
        # decided at an epoch's end: 40, 80, ... (10 % growth only after 400 votes)
        ends, start = [], 0
        while start < 5000:
            start += max(40, -(-start // 10))
            ends.append(start)
        assert n in ends
        events = base._events(c)
        decisions = [d for k, d in events if k == "decision"]
        assert len(decisions) == 1 and decisions[0]["answer"] == ["s3"]
        frame = pd.DataFrame(c.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        kept = valid_judgements(frame, exclusions(frame, study.protocol, study.read_lists()))
        (rec,) = replay_decisions(kept, study.protocol, SYSTEMS)
        assert rec["pooling"] and rec["basis"] == "pooled" and rec["misfit_at"] == -1
        assert rec["decision"] == ["s3"] and rec["n"] == n and rec["agrees_with_live"]
        # the direct goal (pairwise tests at delta / 10) on the same sequence of votes has not decided at n
        direct = GoalRule(5, "best", 0.05)
        for a, b, w in rec["sequence"][:n]:
            d = direct.update(a, b, w)
        assert not d.decided
        # the admin page: the goal's card reads the pooled statements
        board = c.store.leaderboards()["quality"]
        assert board["pooling"] and board["basis"] == "pooled" and board["answer"] == ["s3"]
        # rank sets: the statements at delta / (K (K - 1)), stricter than the decision's delta / (2 (K - 1))
        assert board["rows"][0]["system"] == "s3" and board["rows"][0]["rank_low"] == 1
        assert {r["system"]: [r["rank_low"], r["rank_high"]] for r in board["rows"]} == rec["rank_sets"]

        async def admin() -> str:
            r = await c.http.get(f"/admin?token={ADMIN}")
            c.http.cookies.update(r.cookies)
            return (await c.http.get("/admin")).text

        page = asyncio.run(admin())
        assert 'id="pooled-goal-quality" data-basis="pooled"' in page and "decided: s3" in page
        assert "rank set (pooled statements)" in page and "rank set (anytime-valid, pooled statements)" in page
    finally:
        asyncio.run(c.close())
    for stage in ("export", "collate", "exclude", "analyze", "report"):
        run_stage(study, stage)
    res = study.results().criteria["quality"]
    assert res.stopping is not None and res.stopping.decision == ["s3"] and res.stopping.n == n
    assert res.stopping.agrees_with_live
    prereg(study)
    text = (study.root / "prereg" / "preregistration.md").read_text(encoding="utf-8")
    assert "decided on pooled anytime-valid statements (`stopping.pooling: true`)" in text
    assert "epochs of at least 40 votes" in text and "paired with seed 11" in text
