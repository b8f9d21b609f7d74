"""``stopping.tuned_for`` through the whole path: protocol -> live rule in the server -> export -> analysis replay."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from humeval.analysis.decisions import replay_decisions
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.judgements.exclusion import exclusions, valid_judgements
from humeval.protocol.comparisons import watched_comparisons
from humeval.stopping import BetaMixtureRule, prior_strength_for
from humeval.study import StudyFolder
from tests.integration.server.test_live_stopping import Client, decision, make_study

pytestmark = pytest.mark.timeout(120)


def test_a_tuned_rule_decides_live_as_the_replay_does(tmp_path: Path) -> None:
    root = tmp_path / "study"
    make_study(root, checks=0)
    path = root / "humeval.yaml"
    path.write_text(path.read_text().replace("min_in_flight: 1}", "min_in_flight: 1, tuned_for: 30}"))
    study = StudyFolder.open(root)
    comp = watched_comparisons(study.protocol, ["baseline", "candidate"])[0]
    rule = comp.build_rule()
    assert rule.prior_strength == pytest.approx(prior_strength_for(30, 0.05))

    async def go() -> Client:
        c = Client(study)
        i = 0
        while decision(c.store)["outcome"] == "continue" and i < 40:
            i += 1
            await c.work(f"P{i:03d}", prefer="candidate")
        return c

    c = asyncio.run(go())
    try:
        st = decision(c.store)
        assert st["outcome"] == "B"
        # every outcome favours B: the tuned rule decides where its boundary first allows, before the default's
        tuned = BetaMixtureRule(0.05, prior_strength_for(30, 0.05)).a_min(np.arange(1, 100))
        default = BetaMixtureRule(0.05).a_min(np.arange(1, 100))
        first = lambda a: int(next(n for n, v in enumerate(a, 1) if v <= n))  # noqa: E731
        assert st["n"] == first(tuned) < first(default)
        frame = pd.DataFrame(c.store.judgement_rows(), columns=JUDGEMENT_COLUMNS)
        kept = valid_judgements(frame, exclusions(frame, study.protocol, study.read_lists()))
        record = replay_decisions(kept, study.protocol, ["baseline", "candidate"])[0]
        assert (record["outcome"], record["n"]) == ("B", st["n"])
    finally:
        asyncio.run(c.close())
