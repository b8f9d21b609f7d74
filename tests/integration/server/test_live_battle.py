"""Live battles through the real app in-process: the two answers streamed from the arena's models (recorded
endpoints streaming LLMFAO's answers in pieces), stored with their records, and a failed generation never shown as a
battle and never counted."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.server.inprocess import ADMIN_HEADERS, InProcess
from tests.integration.server.inprocess import enter as aenter
from tests.integration.server.studies import live_arena_study

pytestmark = pytest.mark.timeout(180)


def events(body: str) -> list[tuple[str, dict]]:
    """The server-sent events of a response body, as (event, data)."""
    out = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


async def vote_on_each(c: httpx.AsyncClient, h: dict[str, str]) -> None:
    """Stream every battle the participant is served and vote A on each one that streamed in full."""
    for _ in range(30):
        r = await c.get("/api/v1/next", headers=h)
        if r.status_code == 204:
            return
        a = r.json()
        if events((await c.get(a["stream"], headers=h)).text)[-1][0] == "done":
            await c.post("/api/v1/judgements", headers=h, json={
                "assignment_id": a["assignment_id"], "idempotency_key": f"k-{a['assignment_id']}",
                "values": {"vote": "A"}})


def served(app: InProcess, body: Any) -> tuple[Any, list[dict], dict[str, list[str]]]:
    """Run ``body`` in ``app``, then close it: what ``body`` returned, the generations stored, and each judged
    assignment's display."""
    try:
        out = app.run(body)
        generations = app.store.generations()
        judged = {j["assignment_id"]: j["display"] for j in app.store.judgements()}
    finally:
        app.close()
    return out, generations, judged


def test_a_battle_streams_both_answers_then_takes_the_vote_and_a_failed_one_is_never_counted(
        tmp_path: Path, shared_data: Path) -> None:
    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=3, per_participant=6,
                             failing="Alpaca (7B)")
    recorded = {(r["model"], r["prompt"]): r["output"]
                for r in map(json.loads, (study.root / "recorded.jsonl").read_text().splitlines())}
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> dict:
        h = await aenter(c, "L1")
        seen: dict = {"ok": [], "failed": [], "refused": []}
        for _ in range(30):
            r = await c.get("/api/v1/next", headers=h)
            if r.status_code == 204:
                break
            a = r.json()
            assert a["outputs"] == ["", ""] and a["stream"] == f"/battle/stream?assignment={a['assignment_id']}"
            vote = {"assignment_id": a["assignment_id"], "idempotency_key": f"k-{a['assignment_id']}",
                    "values": {"vote": "A"}}
            early = await c.post("/api/v1/judgements", json=vote, headers=h)  # before the answers: refused
            assert early.status_code == 409 and early.json()["error"]["code"] == "generation_pending"
            got = events((await c.get(a["stream"], headers=h)).text)
            kinds = [k for k, _ in got]
            if kinds[-1] == "done":
                texts = ["", ""]
                for _, data in got[:-1]:
                    texts[data["side"]] += data["text"]
                assert kinds.count("piece") > 2  # in pieces, not at once
                r = await c.post("/api/v1/judgements", json=vote, headers=h)
                assert r.status_code == 201, r.text
                seen["ok"].append((a["assignment_id"], a["input"], texts))
            else:
                assert kinds[-1] == "failed" and got[-1][1] == {"reason": "too_long", "next": "/task"}
                r = await c.post("/api/v1/judgements", json=vote, headers=h)
                seen["refused"].append(r.json()["error"]["code"])
                seen["failed"].append(a["assignment_id"])
        seen["judgements"] = (await c.get("/api/v1/admin/judgements", headers=ADMIN_HEADERS)).json()
        seen["status"] = (await c.get("/api/v1/status", headers=h)).json()
        return seen

    try:
        seen = app.run(body)
        generations = app.store.generations()
        exported = app.store.judgement_rows()
    finally:
        app.close()
    assert len(exported) == len(seen["ok"])  # each vote on the data's prompt: the export names none
    assert {(r["prompt"], r["prompt_source"]) for r in exported} == {("", "")}
    judged = {j["assignment_id"]: j for j in seen["judgements"]}
    assert set(judged) == {aid for aid, _, _ in seen["ok"]} and seen["failed"]
    assert seen["refused"] == ["generation_failed"] * len(seen["failed"])
    for aid, prompt, texts in seen["ok"]:
        display = judged[aid]["display"]
        assert "failing" not in display
        assert texts == [recorded[(m, prompt)] for m in display]  # each side the model's answer, on its side
    by_aid: dict[str, list[dict]] = {}
    for g in generations:
        by_aid.setdefault(g["assignment_id"], []).append(g)
    for aid in seen["failed"]:
        (a, b) = sorted(by_aid[aid], key=lambda g: g["side"])
        assert "failing" in (a["model"], b["model"])
        assert {g["error"] for g in (a, b) if g["model"] == "failing"} == {"too_long"}
        assert all(g["error"] in ("too_long", "withdrawn") for g in (a, b))
    for aid, _, _ in seen["ok"]:
        records = [g["record"] for g in by_aid[aid]]
        assert all(not g["error"] for g in by_aid[aid])
        assert all(r["tokens_out"] > 0 and r["seconds"] >= 0 and r["prompt"] for r in records)
    # the session ends with its code as usual: the failed places are not the participant's to do again
    progress = seen["status"]["progress"]
    assert progress["completed"] and progress["done"] == len(seen["ok"]) == 6 - len(seen["failed"])
    assert seen["status"]["completion"]["code"] == "DONE-LIVE"


def test_a_battle_whose_answer_names_a_model_is_dropped_and_never_counted(tmp_path: Path, shared_data: Path) -> None:
    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=2, per_participant=6, naming="gpt-4")
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> list[tuple[list[str], str, int]]:
        h = await aenter(c, "I1")
        out = []
        for _ in range(20):
            r = await c.get("/api/v1/next", headers=h)
            if r.status_code == 204:
                break
            a = r.json()
            got = events((await c.get(a["stream"], headers=h)).text)
            vote = await c.post("/api/v1/judgements", headers=h, json={
                "assignment_id": a["assignment_id"], "idempotency_key": f"k-{a['assignment_id']}", "values": {"vote": "tie"}})
            out.append((a["assignment_id"], got[-1], vote.status_code))
        return out

    seen, generations, judged = served(app, body)
    models: dict[str, set[str]] = {}
    for g in generations:
        models.setdefault(g["assignment_id"], set()).add(g["model"])
    for aid, (kind, data), status in seen:
        if "gpt-4" in models[aid]:
            assert kind == "failed" and data["reason"] == "identity" and status == 409 and aid not in judged
        else:
            assert kind == "done" and status == 201 and aid in judged
    dropped = [g for g in generations if g["error"] == "identity"]
    assert dropped and all(g["record"]["identity"] == ["ChatGPT"] for g in dropped)
    assert len(judged) == sum(1 for _, (kind, _), _ in seen if kind == "done") > 0


def test_a_battle_whose_failure_would_come_again_is_not_served_again_in_its_round(
        tmp_path: Path, shared_data: Path) -> None:
    """Two judgements per battle: each battle of the fourth model (its recorded answers break ``max_chars: 20``) is in
    two lists, fails ``too_long`` the first time it is served and is closed then, so no second participant is served
    it; the other battles are voted on twice."""
    from humeval.store.sql import sql_of

    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=3, per_participant=6,
                             failing="Alpaca (7B)", per_item=2)
    places = Counter(t.task_id for pl in study.read_lists() for t in pl.tasks)
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        for p in range(len(study.read_lists())):
            h = await aenter(c, f"P{p}")
            await vote_on_each(c, h)

    try:
        app.run(body)
        generations = app.store.generations()
        closed = app.store.read(lambda conn: sql_of(conn).all("SELECT data FROM events WHERE kind = 'battle_closed'"))
    finally:
        app.close()
    failed = [g["task_id"] for g in generations if g["error"] == "too_long"]
    voted = [g["task_id"] for g in generations if not g["error"]]
    assert failed and all(places[t] == 2 for t in failed)  # each in two lists, served once
    assert sorted(failed) == sorted(set(failed))
    assert sorted(json.loads(d)["task_id"] for (d,) in closed) == sorted(failed)
    assert all(json.loads(d)["reason"] == "too_long" for (d,) in closed)
    assert sorted(set(voted)) == sorted(t for t in places if t not in failed) and len(voted) == 2 * 2 * len(set(voted))


def test_a_re_run_round_does_not_serve_again_a_battle_whose_failure_would_come_again(
        tmp_path: Path, shared_data: Path) -> None:
    """The fourth model's recorded answers break its ``max_chars: 20``: each battle it is in failed ``too_long`` and
    would fail so again. Re-run lists holding those tasks and others add only the others."""
    from humeval.design.tasks import ParticipantList
    from humeval.files import write_jsonl
    from humeval.store import Store
    from humeval.store.sql import sql_of

    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=3, per_participant=6,
                             failing="Alpaca (7B)")
    app = InProcess(study)

    async def body(c: httpx.AsyncClient) -> None:
        h = await aenter(c, "R1")
        await vote_on_each(c, h)

    try:
        app.run(body)
        generations = app.store.generations()
    finally:
        app.close()
    failed = {g["task_id"] for g in generations if g["error"] == "too_long"}
    voted = {g["task_id"] for g in generations if not g["error"]}
    assert failed and voted and failed.isdisjoint(voted)
    by_id = {t.task_id: t for t in study.read_tasks()}
    tasks = [by_id[t] for t in sorted(failed | voted)]
    path = tmp_path / "rerun-lists.jsonl"
    write_jsonl(path, [ParticipantList("R0001", 1, tasks[:3]), ParticipantList("R0002", 1, tasks[3:]),
                       ParticipantList("R0003", 1, [by_id[t] for t in sorted(failed)])])
    store = Store.open(study, None)  # as `humeval serve` adds them: before the server starts
    try:
        kept = store.rerun_lists(path)
        added = store.add_rerun(path)
        rows = store.read(lambda conn: sql_of(conn).all(
            "SELECT list_id, task_id FROM list_tasks WHERE list_id LIKE 'R0%' ORDER BY list_id, position"))
    finally:
        store.close()
    print(json.dumps({"failed": len(failed), "voted": len(voted), "lists_added": added}))
    assert added == len(kept) == 2  # R0003 held only failed battles: dropped
    assert [pl.list_id for pl in kept] == ["R0001", "R0002"]
    served = [t for _, t in rows]
    assert sorted(served) == sorted(voted) and [t.task_id for pl in kept for t in pl.tasks] == served
