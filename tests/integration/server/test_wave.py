"""The confirmation wave through the server: collected after the decision at its preregistered time, never fed.

In-process (httpx.ASGITransport) on SQLite with a driven clock, the ``list`` strategy and
``stopping.drift_check: wave``: an early crowd that prefers the candidate decides the pair; once the wave's time
after launch has come, the pair's unserved tasks are served again, the wave counts the later crowd's outcomes
(curtailed once its flag is settled) without changing the decision, the export's ``wave_seq`` holds them and the
analysis reads the same wave. A crowd that turns to the baseline is flagged, one that does not move is not (each
participant's answers seeded).
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from humeval.analysis.drift import wave_check
from humeval.files import write_jsonl
from humeval.judgements import normalise_judgements
from humeval.pipeline import run
from humeval.stats.drift import confirmation_pvalues, confirmation_threshold
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.integration.server.inprocess import drive_clock
from tests.integration.server.test_live_stopping import ADMIN, Client, decision

pytestmark = pytest.mark.timeout(240)

OPENS = 3600.0
SIZE = 30

PROTOCOL = f"""
version: 1
study: {{name: wave, seed: 11}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?", tie: true}}
presentation: {{setup: separate}}
design: {{judgements_per_item: 1, items_per_participant: 10, counterbalancing: none, attention_checks: 1}}
assignment: {{strategy: list, lease_seconds: 600}}
stopping: {{rule: anytime, delta: 0.05, systems: [baseline, candidate], drift_check: wave,
            wave: {{outcomes: {SIZE}, opens_after_seconds: {OPENS:g}}}}}
exclusion:
  - {{rule: attention, max_failures: 0}}
platform: {{kind: local, completion_code: DONE-1}}
"""


def make_study(root: Path) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(200, seed=5))
    (root / "humeval.yaml").write_text(PROTOCOL, encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    return study


async def crowd(c: Client, start: int, share: float, rng: np.random.Generator, until: Any, most: int) -> int:
    """Participants arrive one after another and do their whole list, each pair task won by the candidate with
    probability ``share`` (attention checks answered right), until ``until()``; returns the next participant's number."""
    k = start
    while not until() and k < start + most:
        h = await c.enter(f"P{k:03d}")
        k += 1
        while (a := await c.next(h)) is not None:
            aid = a["assignment_id"]
            task, display = c.task_of(aid)
            if task.kind == "attention":
                choice = c.answer(aid, prefer="candidate", spam=False)
            else:
                winner = "candidate" if rng.random() < share else "baseline"
                choice = "A" if display[0] == winner else "B"
            r = await c.submit(h, aid, choice)
            assert r.status_code in (201, 409), r.text  # 409: the wave closed while they worked (lease withdrawn)
    return k


def run_wave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: float) -> dict[str, Any]:
    clock = drive_clock(monkeypatch)
    study = make_study(tmp_path / "study")
    out: dict[str, Any] = {}

    async def go() -> None:
        c = Client(study)
        try:
            rng = np.random.default_rng(7)
            k = await crowd(c, 0, 0.85, rng, lambda: decision(c.store)["outcome"] != "continue", 20)
            d = decision(c.store)
            assert d["outcome"] == "B" and d["n"] < 60  # candidate (the comparison's second system) decided early
            (w,) = c.store.waves()
            assert (w["state"], w["side"], w["size"], w["n"]) == ("waiting", 0, SIZE, 0)
            assert w["opens_at"] == pytest.approx(clock.now + OPENS, abs=5)  # an hour after the first entry
            rec = c.store.recruitment()
            assert not rec.finished  # the wave will open places
            late_one = await c.enter("early-late")
            assert await c.next(late_one) is None  # before the wave's time: nothing to do
            clock.now += OPENS + 10
            k = await crowd(c, k, late, rng, lambda: c.store.waves()[0]["state"] == "done", 20)
            (w,) = c.store.waves()
            assert w["state"] == "done"
            after = decision(c.store)
            assert (after["outcome"], after["n"]) == (d["outcome"], d["n"])  # never fed to the rule
            await c.http.get("/admin", params={"token": ADMIN})  # the admin cookie
            r = await c.http.get("/admin")
            assert r.status_code == 200 and 'id="wave-quality" data-state="done"' in r.text
            r = await c.http.get("/admin/export.jsonl")
            frame = normalise_judgements(pd.read_json(io.StringIO(r.text), lines=True))
            out.update(wave=w, frame=frame, decision=d, places=k)
            assert c.store.recruitment().finished
        finally:
            await c.close()

    asyncio.run(go())
    return out


def _check_against_store(out: dict[str, Any]) -> dict[str, Any]:
    w, frame = out["wave"], out["frame"]
    rows = frame[(frame["kind"] == "task") & frame["wave_seq"].notna()]
    assert sorted(rows["wave_seq"].astype(int)) == list(range(1, w["n"] + 1))
    assert rows["stop_seq"].isna().all()  # a wave outcome never reached the rule
    got = wave_check(frame[frame["kind"] == "task"], "candidate", "baseline", SIZE, 0.05)
    assert (got["n"], got["wins"], got["flagged"], got["settled"]) == (w["n"], w["wins"], bool(w["flagged"]), True)
    c = int(confirmation_threshold(SIZE, 0.05)[0])
    # by hand: the wave stopped at the first outcome that settled the flag (curtailed), or at w
    wins = (rows.sort_values("wave_seq").pipe(lambda r: r["choice"].where(r["choice"] != "A", r["system"])
                                               .where(r["choice"] != "B", r["system_b"])) == "candidate").to_numpy()
    cum = np.cumsum(wins)
    losses = np.arange(1, len(wins) + 1) - cum
    settled = np.flatnonzero((cum > c) | (losses >= SIZE - c))
    assert len(wins) == (int(settled[0]) + 1 if settled.size else SIZE)
    return got


def test_a_crowd_that_turns_is_flagged_by_its_wave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = run_wave(tmp_path, monkeypatch, late=0.2)
    got = _check_against_store(out)
    assert got["flagged"] and out["wave"]["flagged"]
    # curtailed: the flag was certain before w outcomes; the full wave's p is at most the bound reported
    assert got["p_bound"] == "at most" and got["n"] < SIZE
    assert got["p_value"] == pytest.approx(float(confirmation_pvalues(got["wins"] + SIZE - got["n"], SIZE)[0]))
    assert got["p_value"] <= 0.05


def test_a_crowd_that_stays_is_not_flagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = run_wave(tmp_path, monkeypatch, late=0.85)
    got = _check_against_store(out)
    assert not got["flagged"] and out["wave"]["flagged"] is False
    assert got["p_bound"] == "at least" and got["n"] < SIZE  # more wins than the threshold: settled early


def test_analyze_reads_the_wave_beside_the_decision_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from humeval.analysis.decisions import replay_decisions
    from humeval.analysis.drift import drift_text
    from humeval.report.prereg import _drift_text
    from humeval.results import DriftCheck

    out = run_wave(tmp_path, monkeypatch, late=0.2)
    frame = out["frame"]
    protocol = StudyFolder.open(tmp_path / "study").protocol
    (record,) = replay_decisions(frame, protocol, ["baseline", "candidate"])
    assert (record["outcome"], record["n"], record["agrees_with_live"]) == ("B", out["decision"]["n"], True)
    drift = record["drift"]
    assert drift["check"] == "wave" and drift["flagged"] and drift["early"] is not None  # the halves beside it
    assert (drift["wave"]["n"], drift["wave"]["wins"]) == (out["wave"]["n"], out["wave"]["wins"])
    text = drift_text(DriftCheck.model_validate(drift), "baseline")
    assert text.startswith(f"the later crowd prefers the other side: the confirmation wave gave {out['wave']['wins']} "
                           f"of {out['wave']['n']} outcomes for candidate (w = {SIZE}, curtailed")
    assert "the decision is about the crowd that made it" in text
    stated = _drift_text("wave", 0.05, protocol.stopping.wave)
    assert f"a confirmation wave of w = {SIZE} judgements" in stated and f"opens {OPENS:g} s after" in stated
