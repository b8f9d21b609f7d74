"""The JSON API on SQLite and on PostgreSQL: in-process (httpx.ASGITransport) except the restart and the
multi-worker tests, which need a real ``humeval serve``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from humeval import logbook
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.store import schema as s
from humeval.study import StudyFolder
from tests.integration.server.inprocess import ADMIN_HEADERS, InProcess, assert_error
from tests.integration.server.inprocess import enter as aenter
from tests.integration.server.server import ADMIN, ServerProcess
from tests.integration.server.studies import pairwise_study

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def app(tmp_path: Path, db_url: str | None) -> Iterator[InProcess]:
    study = pairwise_study(tmp_path / "study", items=12, per_item=2, per_participant=4, stopping=False)
    srv = InProcess(study, db_url)
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture
def served(tmp_path: Path, db_url: str | None) -> Iterator[tuple[ServerProcess, StudyFolder]]:
    study = pairwise_study(tmp_path / "study", items=12, per_item=2, per_participant=4, stopping=False)
    server = ServerProcess(study.root, db_url).start()
    try:
        yield server, study
    finally:
        server.stop()


def enter(client: httpx.Client, pid: str) -> dict[str, str]:
    r = client.post("/api/v1/enter", json={"participant_id": pid})
    assert r.status_code == 200, r.text
    return {"authorization": f"Bearer {r.json()['token']}"}


def admin_judgements(client: httpx.Client) -> list[dict]:
    r = client.get("/api/v1/admin/judgements", headers={"authorization": f"Bearer {ADMIN}"})
    assert r.status_code == 200
    return r.json()


def item_of(srv: InProcess, aid: str) -> str:
    """The item an assignment shows (the API does not say: the store does)."""
    a, t = s.assignments.c, s.tasks.c
    return srv.store.read(lambda c: c.execute(select(t.item_id).select_from(s.assignments.join(
        s.tasks, a.task_id == t.task_id)).where(a.assignment_id == aid)).scalar_one())


def test_flow_idempotent_submit_and_admin_dump(app: InProcess) -> None:
    async def body(c: httpx.AsyncClient) -> None:
        h = await aenter(c, "P1")
        a = (await c.get("/api/v1/next", headers=h)).json()
        assert len(a["outputs"]) == 2 and a["criteria"][0]["options"] == ["A", "B", "tie"]
        assert "baseline" not in json.dumps(a) and "candidate" not in json.dumps(a)  # system names never shown
        sub = {"assignment_id": a["assignment_id"], "idempotency_key": "key-00000001", "values": {"quality": "B"}}
        first = await c.post("/api/v1/judgements", json=sub, headers=h)
        again = await c.post("/api/v1/judgements", json=sub, headers=h)
        assert first.status_code == 201 and again.status_code == 200
        assert first.json() == again.json()
        other = await c.post("/api/v1/judgements", json=sub | {"values": {"quality": "A"}}, headers=h)
        assert_error(other, 409, "idempotency_conflict", "idempotency_key")
        stored = (await c.get("/api/v1/admin/judgements", headers=ADMIN_HEADERS)).json()
        assert [j["idempotency_key"] for j in stored] == ["key-00000001"]
        assert stored[0]["participant_id"] == "P1" and stored[0]["values"] == {"quality": "B"}
        assert sorted(stored[0]["display"]) == ["baseline", "candidate"]
        # the next assignment is a different task; the resumed one is the same until submitted
        b = (await c.get("/api/v1/next", headers=h)).json()
        assert b["assignment_id"] != a["assignment_id"]
        assert item_of(app, b["assignment_id"]) != item_of(app, a["assignment_id"])
        assert (await c.get("/api/v1/next", headers=h)).json()["assignment_id"] == b["assignment_id"]
        spec = (await c.get("/api/v1/openapi.json")).json()
        assert spec["openapi"].startswith("3.") and "/api/v1/judgements" in spec["paths"]

    app.run(body)


def test_bad_requests_get_one_error_shape_and_store_nothing(app: InProcess) -> None:
    async def body(c: httpx.AsyncClient) -> None:
        h = await aenter(c, "P1")
        h2 = await aenter(c, "P2")
        a = (await c.get("/api/v1/next", headers=h)).json()
        ok = {"assignment_id": a["assignment_id"], "idempotency_key": "key-00000002", "values": {"quality": "A"}}

        def post(sub: dict, headers: dict = h) -> object:
            return c.post("/api/v1/judgements", json=sub, headers=headers)

        as_json = h | {"content-type": "application/json"}
        assert_error(await c.post("/api/v1/judgements", content=b"{not json", headers=as_json), 400, "malformed_json")
        assert_error(await c.post("/api/v1/judgements", content=b"[1, 2]", headers=as_json), 422, "invalid_value")
        assert_error(await c.post("/api/v1/judgements", content=b"x=1", headers=h | {"content-type": "text/plain"}),
                     415, "unsupported_media_type")
        assert_error(await post(ok | {"values": {"quality": 1}}), 422, "invalid_value", "values.quality")
        assert_error(await post(ok | {"values": {"quality": "C"}}), 422, "invalid_value", "values.quality")
        assert_error(await post(ok | {"values": {"quality": "both-good"}}), 422, "invalid_value", "values.quality")
        assert_error(await post(ok | {"values": {}}), 422, "invalid_value", "values")  # the contract: 1+ criteria
        assert_error(await post(ok | {"values": {"quality": "A", "other": 1}}), 422, "invalid_value", "values.other")
        assert_error(await post(ok | {"values": {"quality": "A" * (70 * 1024)}}), 413, "too_large")
        assert_error(await post(ok | {"idempotency_key": "short"}), 422, "invalid_value", "idempotency_key")
        assert_error(await post(ok | {"assignment_id": "nope"}), 404, "unknown_assignment", "assignment_id")
        assert_error(await post(ok, h2), 404, "unknown_assignment", "assignment_id")  # another participant's
        assert_error(await post(ok, {"authorization": "Bearer v1.UDE.x.forged"}), 401, "unauthorized")
        assert_error(await post(ok, {}), 401, "unauthorized")
        assert_error(await post(ok, h | {"origin": "https://evil.example"}), 403, "forbidden_origin")
        assert_error(await c.get("/api/v1/nope"), 404, "not_found")
        assert_error(await c.get("/api/v1/admin/judgements", headers=h), 401, "unauthorized")
        assert_error(await c.post("/api/v1/enter", json={"participant_id": "<script>"}), 422, "invalid_value",
                     "participant_id")
        assert (await c.get("/api/v1/admin/judgements", headers=ADMIN_HEADERS)).json() == []
        assert (await post(ok)).status_code == 201  # the same assignment still accepts a valid answer

    app.run(body)


def test_restart_keeps_sessions_and_assignment(served: tuple[ServerProcess, StudyFolder]) -> None:
    server, _ = served
    with httpx.Client(base_url=server.url) as c:
        h = enter(c, "P1")
        a = c.get("/api/v1/next", headers=h).json()
    server.kill()
    server.start()
    with httpx.Client(base_url=server.url) as c:
        assert c.get("/api/v1/next", headers=h).json()["assignment_id"] == a["assignment_id"]
        r = c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"], "idempotency_key": "key-restart-1", "values": {"quality": "tie"}})
        assert r.status_code == 201


def test_never_same_task_twice_and_list_completion(app: InProcess) -> None:
    async def body(c: httpx.AsyncClient) -> None:
        h = await aenter(c, "P1")
        seen = []
        while (r := await c.get("/api/v1/next", headers=h)).status_code == 200:
            a = r.json()
            seen.append(item_of(app, a["assignment_id"]))
            await c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                         "idempotency_key": f"k-{len(seen):08d}", "values": {"quality": "tie"}})
        assert r.status_code == 204
        assert len(seen) == len(set(seen)) == 4  # items_per_participant
        status = (await c.get("/api/v1/status", headers=h)).json()
        assert status["progress"]["completed"] and status["completion"]["code"] == "DONE-42"

    app.run(body)


def test_caps_exact_under_concurrency(tmp_path: Path, db_url: str | None) -> None:
    study = pairwise_study(tmp_path / "study", items=20, strategy="one", per_participant=3, stopping=False)
    server = ServerProcess(study.root, db_url, workers=2 if db_url else 1).start()  # SQLite takes one process
    try:
        def annotator(i: int) -> list[str]:
            with httpx.Client(base_url=server.url, timeout=30) as c:
                h = enter(c, f"W{i}")
                got = []
                while (r := c.get("/api/v1/next", headers=h)).status_code == 200:
                    a = r.json()
                    got.append(a["assignment_id"])
                    res = c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"], "idempotency_key": f"k-{i}-{len(got):04d}", "values": {"quality": "A"}})
                    assert res.status_code == 201
                return got

        with ThreadPoolExecutor(12) as pool:
            results = list(pool.map(annotator, range(12)))
        done = [t for r in results for t in r]
        assert len(done) == len(set(done)) == 20
        with httpx.Client(base_url=server.url) as c:
            items = [j["item_id"] for j in admin_judgements(c)]
        assert len(items) == len(set(items)) == 20  # strategy one: each task exactly once, all 20 served
    finally:
        server.stop()


@pytest.mark.parametrize("flow", ["page", "next"])
def test_live_stopping_decides_and_stops_pair_items(tmp_path: Path, db_url: str | None, flow: str) -> None:
    """The same decision, logged once, whether each task is asked for (page) or comes with the last answer (next)."""
    study = pairwise_study(tmp_path / "study", items=60, strategy="one", per_participant=100, delta=0.05)
    srv = InProcess(study, db_url)

    async def body(c: httpx.AsyncClient) -> int:
        n = 0
        for i in range(60):  # each participant is settled (and fed) once nothing is left for them
            h = await aenter(c, f"P{i}")
            r = await c.get("/api/v1/next", headers=h)
            a = r.json() if r.status_code == 200 else None
            while a is not None:
                pick = "A" if a["outputs"][0].startswith("In the") else "B"  # always the candidate
                n += 1
                answer = await c.post("/api/v1/judgements", headers=h, json={
                    "assignment_id": a["assignment_id"], "idempotency_key": f"k-{n:08d}", "values": {"quality": pick},
                    "next": flow == "next"})
                assert answer.status_code == 201
                if flow == "next":
                    a = answer.json()["next"]
                else:
                    r = await c.get("/api/v1/next", headers=h)
                    a = r.json() if r.status_code == 200 else None
            if (await c.get("/api/v1/admin/status", headers=ADMIN_HEADERS)).json()["stopping"][0]["outcome"] != "continue":
                break
        assert 3 < n < 60  # decided before the items ran out
        st = (await c.get("/api/v1/admin/status", headers=ADMIN_HEADERS)).json()["stopping"][0]
        assert st["outcome"] == "B" and st["n"] == n and st["system_b"] == "candidate"
        assert len(st["curve"]) == n and st["curve"][-1]["estimate"] <= st["curve"][-1]["threshold_b"]
        assert (await c.get("/api/v1/next", headers=await aenter(c, "Q2"))).status_code == 204  # no more pair items
        page = await c.get(f"/admin?token={srv.config.admin_token}", follow_redirects=True)
        assert "decided: candidate is better" in page.text and "<svg" in page.text
        return n

    try:
        n = srv.run(body)
    finally:
        srv.close()
    entries = [e for e in logbook.read(study) if e.get("stage") == "stopping"]
    assert len(entries) == 1 and entries[0]["decision"] == "B" and entries[0]["n"] == n
    expected_store = "study.db" if db_url is None else db_url.split("://", 1)[1]
    assert entries[0]["store"].endswith(expected_store)


def test_max3_adds_a_third_worker_only_on_disagreement(tmp_path: Path, db_url: str | None) -> None:
    study = pairwise_study(tmp_path / "study", items=2, strategy="max3", per_participant=10, stopping=False)
    srv = InProcess(study, db_url)

    async def answer(c: httpx.AsyncClient, pid: str, first_task_choice: str) -> list[str]:
        h = await aenter(c, pid)
        got = []
        while (r := await c.get("/api/v1/next", headers=h)).status_code == 200:
            a = r.json()
            item = item_of(srv, a["assignment_id"])
            win_candidate = "A" if a["outputs"][0].startswith("In the") else "B"
            lose = "B" if win_candidate == "A" else "A"
            choice = win_candidate if (first_task_choice == "cand" or item != "item-0001") else lose
            got.append(item)
            await c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                         "idempotency_key": f"{pid}-{len(got):06d}", "values": {"quality": choice}})
        return got

    async def body(c: httpx.AsyncClient) -> None:
        assert await answer(c, "W1", "cand") == ["item-0001", "item-0002"]
        assert await answer(c, "W2", "base") == ["item-0001", "item-0002"]  # disagrees on item 1
        assert await answer(c, "W3", "cand") == ["item-0001"]  # only the disputed task gets a third worker
        assert await answer(c, "W4", "cand") == []

    try:
        srv.run(body)
    finally:
        srv.close()


def test_export_cli_writes_the_canonical_table(app: InProcess, tmp_path: Path) -> None:
    import pandas as pd

    from tests.cli import humeval

    async def body(c: httpx.AsyncClient) -> dict:
        h = await aenter(c, "P1")
        a = (await c.get("/api/v1/next", headers=h)).json()
        await c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                     "idempotency_key": "key-export-1", "values": {"quality": "A"}})
        c.cookies.set("humeval_admin", "forged")
        assert (await c.get("/admin/export.csv")).status_code == 401
        c.cookies.clear()
        assert (await c.get(f"/admin?token={app.config.admin_token}", follow_redirects=True)).status_code == 200
        exported = await c.get("/admin/export.csv")
        assert exported.status_code == 200 and exported.text.splitlines()[0] == ",".join(JUDGEMENT_COLUMNS)
        return a

    a = app.run(body)
    db = [] if app.config.db is None else ["--db", app.config.db]
    for fmt in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"j.{fmt}"
        humeval("export", app.study.root, "-f", fmt, "-o", out, *db, expect=0)
        frame = pd.read_csv(out) if fmt == "csv" else pd.read_parquet(out) if fmt == "parquet" else pd.read_json(out, lines=True)
        assert list(frame.columns) == JUDGEMENT_COLUMNS
        assert len(frame) == 1 and frame.loc[0, "choice"] == "A" and frame.loc[0, "system"] == a_system(a)


def a_system(a: dict) -> str:
    return "candidate" if a["outputs"][0].startswith("In the") else "baseline"


def test_a_submit_with_next_returns_the_next_assignment_in_the_same_request(app: InProcess) -> None:
    """``next: true``: the answer carries what ``GET /api/v1/next`` would give next; the list ends with null."""
    async def body(c: httpx.AsyncClient) -> None:
        h = await aenter(c, "P1")
        a = (await c.get("/api/v1/next", headers=h)).json()
        seen, answers = [], []
        while a is not None:
            seen.append(item_of(app, a["assignment_id"]))
            sub = {"assignment_id": a["assignment_id"], "idempotency_key": f"next-{len(seen):04d}",
                   "values": {"quality": "A"}, "next": True}
            r = await c.post("/api/v1/judgements", json=sub, headers=h)
            assert r.status_code == 201, r.text
            answers.append((sub, r.json()))
            a = r.json()["next"]
            if a is not None:  # the very assignment the page would have given, and the progress after the submit
                assert (await c.get("/api/v1/next", headers=h)).json() == a
                assert a["progress"]["done"] == len(seen)
            if len(seen) == 1:  # a retry (the answer was lost on the way) repeats the judgement and the same next one
                again = await c.post("/api/v1/judgements", json=sub, headers=h)
                assert again.status_code == 200 and again.json() == r.json()
        assert len(seen) == len(set(seen)) == 4  # items_per_participant, never the same item twice
        assert (await c.get("/api/v1/next", headers=h)).status_code == 204
        status = (await c.get("/api/v1/status", headers=h)).json()
        assert status["progress"]["completed"] and status["completion"]["code"] == "DONE-42"
        # without ``next`` the answer is the judgement alone, as before
        sub, first = answers[1]
        keys = {k for k in first if k != "next"}
        plain = await c.post("/api/v1/judgements", json={k: v for k, v in sub.items() if k != "next"}, headers=h)
        assert plain.status_code == 200 and set(plain.json()) == keys
        # a refused answer stores nothing and leases nothing
        h2 = await aenter(c, "P2")
        b = (await c.get("/api/v1/next", headers=h2)).json()
        bad = {"assignment_id": b["assignment_id"], "idempotency_key": "next-bad-0001", "values": {"quality": "C"},
               "next": True}
        assert_error(await c.post("/api/v1/judgements", json=bad, headers=h2), 422, "invalid_value", "values.quality")
        assert_error(await c.post("/api/v1/judgements", json=bad | {"next": "yes"}, headers=h2), 422, "invalid_value",
                     "next")
        assert (await c.get("/api/v1/next", headers=h2)).json() == b
        stored = (await c.get("/api/v1/admin/judgements", headers=ADMIN_HEADERS)).json()
        assert sorted(j["idempotency_key"] for j in stored) == [f"next-{i:04d}" for i in range(1, 5)]
        spec = (await c.get("/api/v1/openapi.json")).json()["components"]["schemas"]
        assert spec["JudgementIn"]["properties"]["next"]["type"] == "boolean"
        assert "next" in spec["Judgement"]["properties"]

    app.run(body)


def test_a_server_process_moves_what_it_loaded_out_of_the_collectors_reach(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """uvicorn's factory freezes the objects a worker made at start (its task and text caches among them): a full
    collection then no longer walks them, and no request waits for that walk."""
    import gc

    from humeval.server.app import app_from_env
    from humeval.server.config import CONFIG_FILE_ENV, ServerConfig
    from humeval.store.store import Store

    study = pairwise_study(tmp_path / "study", items=12, per_item=2, per_participant=4, stopping=False)
    seeded = Store.open(study)
    seeded.prepare()
    seeded.close()
    monkeypatch.setenv(CONFIG_FILE_ENV, str(ServerConfig(study_dir=str(study.root), admin_token=ADMIN).write(tmp_path)))
    loaded: list[bool] = []  # at each freeze: were the caches loaded already?
    monkeypatch.setattr(gc, "freeze", lambda: loaded.append(bool(app_store) and app_store[0]._ctx is not None))
    app_store: list[Store] = []
    real_init = Store.__init__

    def remember(self: Store, *args: object, **kw: object) -> None:
        real_init(self, *args, **kw)  # type: ignore[arg-type]
        app_store.append(self)

    monkeypatch.setattr(Store, "__init__", remember)
    app = app_from_env()
    try:
        assert loaded == [True] and app.state.store is app_store[0]  # once, with the caches loaded
    finally:
        app.state.store.close()


def test_the_task_form_leases_the_next_task_with_its_answer(app: InProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    """The participant page's answer (``POST /task``) leases the next task in the operation that stores it, so the
    page the browser is redirected to only reads it: on PostgreSQL two round trips per task (the answer with the
    lease, the next page's state read; the form's task comes from its assignment id, not from a store operation)
    instead of four; the tasks are those of the list, each once, and the list ends on the completion page."""
    from humeval.store import sql

    trips = [0]
    batch = sql.Sql.batch

    def counted(self, steps, **kw):  # type: ignore[no-untyped-def]
        trips[0] += 1
        return batch(self, steps, **kw)

    monkeypatch.setattr(sql.Sql, "batch", counted)
    pg = hasattr(app.store.writer, "group")  # the PostgreSQL pool

    async def body(c: httpx.AsyncClient) -> None:
        await c.get("/?participant_id=H1")
        page = (await c.get("/task")).text
        seen, per_task = [], []
        while 'name="assignment_id"' in page:
            form = dict(re.findall(r'name="(assignment_id|idempotency_key)" value="([^"]+)"', page))
            seen.append(item_of(app, form["assignment_id"]))
            trips[0] = 0
            r = await c.post("/task", data=form | {"quality": "A", "seconds": "2"}, follow_redirects=True)
            per_task.append(trips[0])
            assert r.status_code == 200, r.text
            page = r.text
        assert len(seen) == len(set(seen)) == 4 and "DONE-42" in page
        if pg:
            assert per_task[:3] == [2, 2, 2], per_task  # the last answer finishes the list: the participant's completion

    app.run(body)
