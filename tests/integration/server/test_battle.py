"""Arena battles on recorded outputs (LLMFAO's prompts and models) through the participant API and pages."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import httpx
import pandas as pd
import pytest

from humeval.data.llmfao import llmfao_outputs
from humeval.judgements import winners
from tests.integration.server.inprocess import ADMIN_HEADERS, InProcess
from tests.integration.server.inprocess import enter as aenter
from tests.integration.server.studies import ARENA_MODELS, arena_study

pytestmark = pytest.mark.timeout(180)


def test_a_battle_shows_two_anonymous_recorded_answers_and_stores_the_vote(tmp_path: Path, shared_data: Path) -> None:
    data = shared_data / "arena"
    recorded = llmfao_outputs(data, models=ARENA_MODELS)
    study = arena_study(tmp_path / "arena", data, per_participant=6)
    app = InProcess(study)
    votes = ["A", "B", "tie", "both-bad", "A", "B"]

    async def body(c: httpx.AsyncClient) -> list[dict]:
        h = await aenter(c, "P1")
        shown = []
        for vote in votes:
            a = (await c.get("/api/v1/next", headers=h)).json()
            assert a["criteria"][0]["type"] == "battle" and a["criteria"][0]["options"] == ["A", "B", "tie", "both-bad"]
            assert len(a["outputs"]) == 2
            text = json.dumps(a)
            assert not any(m in text for m in ARENA_MODELS)  # the models stay anonymous
            shown.append(a)
            r = await c.post("/api/v1/judgements", headers=h, json={
                "assignment_id": a["assignment_id"], "idempotency_key": f"k-{a['assignment_id']}", "values": {"vote": vote}})
            assert r.status_code == 201, r.text
        assert (await c.get("/api/v1/next", headers=h)).status_code == 204  # the list is done
        stored = (await c.get("/api/v1/admin/judgements", headers=ADMIN_HEADERS)).json()
        return [shown, stored]

    try:
        shown, stored = app.run(body)
    finally:
        app.close()
    assert [j["values"]["vote"] for j in stored] == votes
    by_id = {a["assignment_id"]: a for a in shown}
    for j in stored:
        a = by_id[j["assignment_id"]]
        # each answer shown is the model's recorded answer to the prompt shown, on the side the display names
        item = recorded[recorded["input"] == a["input"]]
        for side, model in enumerate(j["display"]):
            assert a["outputs"][side] == item.loc[item["system"] == model, "output"].item()
    sides = Counter(tuple(j["display"]) for j in stored)
    assert len({frozenset(d) for d in sides}) >= 2  # battles of different pairs
    # the long table reads a battle as every pairwise analysis does: the winner is the model on the voted side
    rows = pd.DataFrame([{"system": j["display"][0], "system_b": j["display"][1], "choice": j["values"]["vote"]}
                         for j in stored])
    won = winners(rows)
    for (_, r), w in zip(rows.iterrows(), won, strict=True):
        assert w == {"A": r["system"], "B": r["system_b"]}.get(r["choice"], r["choice"])


def test_the_battle_page_offers_the_four_votes_with_their_keys(tmp_path: Path, shared_data: Path) -> None:
    study = arena_study(tmp_path / "arena", shared_data / "arena", per_participant=2)
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> tuple[str, str]:
        r = await c.post("/start", data={"participant_id": "P2"}, follow_redirects=True)
        page = r.text
        aid = page.split('name="assignment_id" value="')[1].split('"')[0]
        key = page.split('name="idempotency_key" value="')[1].split('"')[0]
        after = await c.post("/task", data={"assignment_id": aid, "idempotency_key": key, "vote": "both-bad"},
                             follow_redirects=True)
        return page, after.text

    try:
        page, after = app.run(body)
        stored = app.store.judgements()
    finally:
        app.close()
    for value in ("A", "B", "tie", "both-bad"):
        assert f'value="{value}"' in page
    assert "Keys: 1 or A for A" in page and 'data-battle="vote"' in page
    assert "Model A" in page and "Model B" in page and "Prompt" in page
    assert not any(m in page for m in ARENA_MODELS)
    assert [j["values"] for j in stored] == [{"vote": "both-bad"}]
    assert "Which answer is better?" in after  # the next battle
