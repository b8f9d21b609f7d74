"""The admin page's leaderboard of a battle criterion over three models, checked against the pooled statements and
Davidson's fit called directly on the same votes (in-process, httpx.ASGITransport)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx
import numpy as np
import pytest

from humeval.data.llmfao import llmfao_outputs
from humeval.stats.davidson import davidson_fit
from humeval.stopping.board import BATCH
from humeval.stopping.pooled import PooledStatements
from tests.integration.server.inprocess import ADMIN, ADMIN_HEADERS, InProcess
from tests.integration.server.inprocess import enter as aenter
from tests.integration.server.studies import ARENA_MODELS, arena_study

pytestmark = pytest.mark.timeout(240)

#: the crowd's preference: the first model over the second over the third, each vote for the better one w.p. 0.9
STRENGTH = {m: s for m, s in zip(ARENA_MODELS, (2, 1, 0), strict=True)}


def _vote(rng: np.random.Generator, shown: list[str]) -> str:
    if rng.random() < 0.08:
        return "tie" if rng.random() < 0.5 else "both-bad"
    better = 0 if STRENGTH[shown[0]] > STRENGTH[shown[1]] else 1
    if rng.random() >= 0.9:
        better = 1 - better
    return "AB"[better]


def _reference(stored: list[dict], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, object, np.ndarray]:
    """Davidson's fit on every vote and the pooled statements fed batch by batch, straight from the stored votes."""
    index = {m: i for i, m in enumerate(ARENA_MODELS)}
    k = len(ARENA_MODELS)
    stored = sorted(stored, key=lambda j: j["submitted_at"])

    def counts(js: list[dict]) -> tuple[np.ndarray, np.ndarray]:
        w, t = np.zeros((k, k)), np.zeros((k, k))
        for j in js:  # a loop over the votes: the reference, written apart from the vectorised board
            a, b = (index[m] for m in j["display"])
            v = j["values"]["vote"]
            if v == "A":
                w[a, b] += 1
            elif v == "B":
                w[b, a] += 1
            else:
                t[a, b] += 1
                t[b, a] += 1
        return w, t

    wins, ties = counts(stored)
    rule = PooledStatements(k, "ranking", 0.05, seed=seed)
    state = rule.state()
    for start in range(0, len(stored) - BATCH + 1, BATCH):
        w, t = counts(stored[start:start + BATCH])
        state = rule.update(w[None], t[None])
    fit = davidson_fit(wins, ties)
    assert bool(fit.converged)
    return fit.theta, wins, ties, state, np.array([len(stored)])


def test_the_admin_leaderboard_shows_the_pooled_statements_of_the_votes_so_far(tmp_path: Path, shared_data: Path) -> None:
    data = shared_data / "arena"
    recorded = llmfao_outputs(data, models=ARENA_MODELS)
    model_of = {(r.input, r.output): r.system for r in recorded.itertuples()}
    study = arena_study(tmp_path / "arena", data, per_participant=19, judgements_per_item=4)
    app = InProcess(study)
    rng = np.random.default_rng(5)

    async def body(c: httpx.AsyncClient) -> tuple[str, str, list[dict]]:
        await c.get("/admin", params={"token": ADMIN})  # the admin cookie
        empty = (await c.get("/admin")).text
        for p in range(12):
            h = await aenter(c, f"V{p}")
            while (r := await c.get("/api/v1/next", headers=h)).status_code == 200:
                a = r.json()
                shown = [model_of[(a["input"], o)] for o in a["outputs"]]
                r = await c.post("/api/v1/judgements", headers=h, json={
                    "assignment_id": a["assignment_id"], "idempotency_key": f"k-{a['assignment_id']}",
                    "values": {"vote": _vote(rng, shown)}})
                assert r.status_code == 201, r.text
        page = (await c.get("/admin")).text
        stored = (await c.get("/api/v1/admin/judgements", headers=ADMIN_HEADERS)).json()
        return empty, page, stored

    try:
        empty, page, stored = app.run(body)
    finally:
        app.close()
    assert 'id="leaderboard-vote"' in empty and "undecided" in empty  # before any vote: the board, undecided
    assert len(stored) >= BATCH + 1
    theta, wins, ties, state, _ = _reference(stored, study.protocol.study.seed)
    basis = re.search(r'data-basis="(\w+)" data-fed="(\d+)" data-pending="(\d+)"', page)
    assert basis is not None
    fed = len(stored) // BATCH * BATCH
    assert basis.groups() == ("pooled", str(fed), str(len(stored) - fed))
    rows = re.findall(r'<tr data-system="([^"]+)" data-score="([-0-9.]+)" data-rank-low="(\d+)" data-rank-high="(\d+)">',
                      page)
    assert [html.unescape(r[0]) for r in rows] == sorted(ARENA_MODELS, key=lambda m: (
        int(state.rank_low[0][ARENA_MODELS.index(m)]), -theta[ARENA_MODELS.index(m)]))
    for name, score, low, high in rows:
        i = ARENA_MODELS.index(html.unescape(name))
        assert float(score) == pytest.approx(theta[i], abs=1e-6)
        assert (int(low), int(high)) == (int(state.rank_low[0][i]), int(state.rank_high[0][i]))
    # the crowd's preference is strong: with these votes the pooled statements resolve something
    assert (state.rank_high[0] - state.rank_low[0]).min() == 0
    # votes per pair: every cell against the counts of the stored votes
    matrix = re.search(r'<table class="pair-votes" id="pair-votes-vote">(.*?)</table>', page, re.S)
    assert matrix is not None
    order = [ARENA_MODELS.index(html.unescape(r[0])) for r in rows]
    for row_name, cells in re.findall(r'<tr data-system="([^"]+)"><th scope="row">[^<]*</th>(.*?)</tr>', matrix.group(1)):
        i = ARENA_MODELS.index(html.unescape(row_name))
        got = re.findall(r'<td(?: data-won="(\d+)" data-lost="(\d+)" data-ties="(\d+)")?>', cells)
        for j, cell in zip(order, got, strict=True):
            assert cell == (("", "", "") if i == j else (str(int(wins[i, j])), str(int(wins[j, i])), str(int(ties[i, j]))))
    # the decision and the stopping code's reason, names in place of indices
    answer = state.answer[0]
    decision = re.search(r'id="decision-vote" data-answer="([^"]*)"', page)
    assert decision is not None
    assert html.unescape(decision.group(1)) == ("" if answer is None else "|".join(ARENA_MODELS[i] for i in answer))
    reason = state.reason(0)
    if answer is not None:
        reason = reason.replace(str(list(answer)), str([ARENA_MODELS[i] for i in answer]))
    shown = re.search(r'<p class="reason" id="reason-vote">(.*?)</p>', page, re.S)
    assert shown is not None and html.unescape(shown.group(1)) == reason
    assert (answer is None) == ("undecided" in page)
