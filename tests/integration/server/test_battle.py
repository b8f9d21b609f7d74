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
        page = (await c.post("/start", data={"participant_id": "P2"}, follow_redirects=True)).text
        after = await c.post("/task", data=_form(page) | {"vote": "both-bad"}, follow_redirects=True)
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


def _form(page: str) -> dict[str, str]:
    return {name: page.split(f'name="{name}" value="')[1].split('"')[0] for name in ("assignment_id", "idempotency_key")}


def test_the_models_are_revealed_after_the_vote_and_only_then(tmp_path: Path, shared_data: Path) -> None:
    study = arena_study(tmp_path / "arena", shared_data / "arena", per_participant=3, arena="arena: {reveal: true}\n")
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> dict:
        page = (await c.post("/start", data={"participant_id": "R1"}, follow_redirects=True)).text
        form = _form(page)
        early = await c.get(f"/reveal?assignment={form['assignment_id']}")  # before the vote: the battle again
        voted = await c.post("/task", data=form | {"vote": "B"})
        shown = await c.get(voted.headers["location"])
        async with app.client() as other:  # another participant
            await other.post("/start", data={"participant_id": "R2"}, follow_redirects=True)
            peek = await other.get(voted.headers["location"])
        nxt = await c.get("/task")
        return {"early": early, "voted": voted, "shown": shown, "peek": peek, "next": nxt.text, "form": form}

    try:
        got = app.run(body)
        (stored,) = app.store.judgements()
    finally:
        app.close()
    assert got["early"].status_code == 303 and got["early"].headers["location"] == "/task"
    assert got["voted"].status_code == 303 and got["voted"].headers["location"].startswith("/reveal?assignment=")
    page = got["shown"].text
    assert got["shown"].status_code == 200 and "You voted: B is better." in page
    # the names in the order the two answers were shown, which the judgement stores
    first, second = stored["display"]
    assert page.index(f">{first}<") < page.index(f">{second}<")
    assert "Model A" in page and "Model B" in page and 'href="/task"' in page
    assert got["peek"].status_code == 303 and got["peek"].headers["location"] == "/task"  # not their battle
    assert not any(m in got["next"] for m in ARENA_MODELS)  # the next battle is anonymous again
    assert _form(got["next"])["assignment_id"] != got["form"]["assignment_id"]


def test_without_reveal_the_vote_goes_on_to_the_next_battle(tmp_path: Path, shared_data: Path) -> None:
    study = arena_study(tmp_path / "arena", shared_data / "arena", per_participant=2)
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> tuple[httpx.Response, httpx.Response]:
        page = (await c.post("/start", data={"participant_id": "N1"}, follow_redirects=True)).text
        voted = await c.post("/task", data=_form(page) | {"vote": "A"})
        return voted, await c.get(f"/reveal?assignment={_form(page)['assignment_id']}")

    try:
        voted, peek = app.run(body)
    finally:
        app.close()
    assert voted.headers["location"] == "/task" and peek.headers["location"] == "/task"
