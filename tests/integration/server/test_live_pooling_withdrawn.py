"""A pooled ``goal: best`` whose crowd prefers in a cycle (s1 > s2 > s3 > s1, each at 0.95; s4 and s5 below them):
through the real server the fit check rejects the Bradley-Terry model while votes come in, withdraws the pooled
statements live (the event ``goal_pooling_withdrawn``, the reason, the admin card's basis ``direct``), announces nothing,
and the analysis replay from the export withdraws them at the same vote.

In-process (httpx.ASGITransport) on SQLite, the study and clients of test_live_pooled_goal.py with another crowd.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from humeval.analysis.decisions import replay_decisions
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusions, valid_judgements

from . import test_live_goal as base

pytestmark = pytest.mark.timeout(240)

#: P(row beats column): the cycle among s1, s2, s3, each of them over s4 and s5 at 0.6, s4 and s5 even
CYCLE = {("s1", "s2"): 0.95, ("s2", "s3"): 0.95, ("s3", "s1"): 0.95, ("s4", "s5"): 0.5,
         **{(a, b): 0.6 for a in ("s1", "s2", "s3") for b in ("s4", "s5")}}


class CycleClient(base.BTClient):
    def choose(self, aid: str) -> str:
        _, (first, second) = self.task_of(aid)
        p = CYCLE[(first, second)] if (first, second) in CYCLE else 1 - CYCLE[(second, first)]
        return "A" if self.rng.random() < p else "B"


def test_a_preference_cycle_withdraws_pooling_live_and_the_replay_agrees(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "PROTOCOL", base.PROTOCOL.replace(
        "goal: best,", "goal: best, pooling: true, epoch: 40, pair_choice: uniform,"))
    study = base.make_study(tmp_path / "study", items=150)

    async def go() -> CycleClient:
        c = CycleClient(study, seed=5)
        wave = 0
        while not any(k == "goal_pooling_withdrawn" for k, _ in base._events(c)) and wave < 40:
            await asyncio.gather(*(c.bt_work(f"P{wave:03d}-{k}") for k in range(4)))
            wave += 1
        await asyncio.gather(*(c.bt_work(f"Q000-{k}") for k in range(4)))  # votes after the withdrawal
        return c

    c = asyncio.run(go())
    try:
        withdrawn = [d for k, d in base._events(c) if k == "goal_pooling_withdrawn"]
        assert len(withdrawn) == 1, base._events(c)[-5:]
        st = c.store.stopping()[0]
        assert st["outcome"] == "continue" and "fit is poor" in st["reason"], st  # no best system exists
        board = c.store.leaderboards()["quality"]
        assert board["pooling"] and board["basis"] == "direct" and board["answer"] is None
        frame = pd.DataFrame(c.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        kept = valid_judgements(frame, exclusions(frame, study.protocol, study.read_lists()))
        (rec,) = replay_decisions(kept, study.protocol, base.SYSTEMS)
        assert rec["pooling"] and rec["basis"] == "direct" and rec["misfit_at"] == withdrawn[0]["votes"]
        assert rec["n"] == st["n"] > withdrawn[0]["votes"]

        async def admin() -> str:
            r = await c.http.get(f"/admin?token={base.ADMIN}")
            c.http.cookies.update(r.cookies)
            return (await c.http.get("/admin")).text

        assert 'id="pooled-goal-quality" data-basis="direct"' in asyncio.run(admin())
    finally:
        asyncio.run(c.close())
