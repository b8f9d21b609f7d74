"""Who can enter a study: entry routes, invites as credentials, the new-participant throttle, the
confirmation of a link entry in a browser that has a session, and the participant's side of the form.

In-process (httpx.ASGITransport) on SQLite. Every refused case checks the status, the one error
shape, and that nothing was stored (participants, sessions, judgements).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from humeval.files import write_jsonl
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.server.app import create_app
from humeval.server.config import ServerConfig
from humeval.server.tokens import make_invite
from humeval.store import schema as s
from humeval.store.context import LIST_HOLD_SLACK
from humeval.store.store import Store
from humeval.study import StudyFolder
from humeval.templates import generate_outputs

pytestmark = pytest.mark.timeout(120)
ADMIN = "admin-token-for-entry-tests-0000"
PEER = "203.0.113.7"

PROTOCOL = """
version: 1
study: {{name: internal-study-name-7f3, seed: 5}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate]
criteria:
{criteria}
presentation: {{setup: {setup}, title: A study of restaurant texts{consent}}}
design: {{judgements_per_item: 1, items_per_participant: {per_participant}, counterbalancing: none, attention_checks: {checks}}}
assignment: {{strategy: list, lease_seconds: 1800}}
{exclusion}
platform: {platform}
"""
PAIR = '  - {name: quality, type: 2afc, question: "Which is better?"}'
RATINGS = """  - {name: fluency, type: likert, question: "How fluent is it?", points: 5}
  - {name: adequacy, type: slider, question: "How adequate is it?", min: 0, max: 100}
  - name: naturalness
    type: magnitude
    question: "How natural is it?"
    standard: {text: Aromi is a restaurant.}"""


def make_study(root: Path, platform: str = "{kind: local}", *, criteria: str = PAIR, setup: str = "separate",
               items: int = 12, per_participant: int = 2, checks: int = 0, exclusion: str = "", consent: str = "") -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(items, seed=5))
    (root / "humeval.yaml").write_text(PROTOCOL.format(
        criteria=criteria, setup=setup, per_participant=per_participant, checks=checks, exclusion=exclusion,
        platform=platform, consent=f", consent: {consent}" if consent else ""), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


@dataclass
class Server:
    study: StudyFolder
    store: Store
    config: ServerConfig

    def __post_init__(self) -> None:
        self.app = create_app(self.config, self.store)

    def client(self, peer: str = PEER, **kw: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app, client=(peer, 4321)),
                                 base_url="http://test", **kw)

    def count(self, table: Any) -> int:
        return self.store.read(lambda c: c.execute(select(func.count()).select_from(table)).scalar_one())

    def counts(self) -> tuple[int, int, int]:
        return self.count(s.participants), self.count(s.sessions), self.count(s.judgements)

    def invite(self, pid: str) -> str:
        return make_invite(self.store.context.secret, pid)


def serve(study: StudyFolder, **config: Any) -> Server:
    store = Store.open(study)
    store.prepare()
    return Server(study, store, ServerConfig(study_dir=str(study.root), admin_token=ADMIN, **config))


def go(server: Server, body: Callable[[httpx.AsyncClient], Awaitable[Any]], peer: str = PEER) -> Any:
    async def main() -> Any:
        async with server.client(peer) as c:
            return await body(c)

    try:
        return asyncio.run(main())
    finally:
        server.store.close()


def assert_error(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) <= {"code", "message", "field"}
    assert body["error"]["code"] == code and body["error"]["message"]


async def enter(c: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, str]:
    r = await c.post("/api/v1/enter", json=body)
    assert r.status_code == 200, r.text
    return {"authorization": f"Bearer {r.json()['token']}"}


# -- the bad-entry table: (platform, what is stored first, the request, status, code) ---------------------------
INVITE_ONLY = "{kind: local, entry: [invite]}"
MIXED = "{kind: local, entry: [invite, open]}"
PROLIFIC = "{kind: prolific, completion_code: C0DE}"
CONNECT = "{kind: connect, completion_url: 'https://connect.cloudresearch.com/participant/project/ABC/complete'}"
PANEL = "{kind: panel, id_parameter: pid, completion_url: 'https://panel.example/done?p={participant_id}'}"
OK = "ok"
CASES = [
    # (id, platform, set-up entries (json bodies; "invite:X" = X's invite), request, status, code)
    ("invited-by-id", MIXED, ["invite:alice"], ("POST", {"participant_id": "alice"}), 403, "entry_route_mismatch"),
    ("invited-by-id-link", MIXED, ["invite:alice"], ("GET", {"participant_id": "alice"}), 403, "entry_route_mismatch"),
    ("invite-only-open-id", INVITE_ONLY, [], ("POST", {"participant_id": "bob"}), 403, "route_not_accepted"),
    ("invite-only-open-link", INVITE_ONLY, [], ("GET", {"participant_id": "bob"}), 403, "route_not_accepted"),
    ("invite-only-start-form", INVITE_ONLY, [], ("FORM", {"participant_id": "bob"}), 403, "route_not_accepted"),
    ("open-then-invite", MIXED, [{"participant_id": "carol"}], ("POST", "invite:carol"), 403, "entry_route_mismatch"),
    ("forged-invite", INVITE_ONLY, [], ("POST", {"invite": "i1.YWxpY2U.forgedsignature"}), 401, "invalid_invite"),
    ("prolific-open-id", PROLIFIC, [], ("POST", {"participant_id": "P1"}), 403, "route_not_accepted"),
    ("prolific-open-link", PROLIFIC, [], ("GET", {"participant_id": "P1"}), 403, "route_not_accepted"),
    ("prolific-invite", PROLIFIC, [], ("POST", "invite:P1"), 403, "route_not_accepted"),
    ("prolific-pid-as-open", PROLIFIC, [{"PROLIFIC_PID": "P1"}], ("POST", {"participant_id": "P1"}), 403, "route_not_accepted"),
    ("connect-with-prolific-fields", CONNECT, [], ("POST", {"PROLIFIC_PID": "P1"}), 422, "invalid_value"),
    ("two-routes", MIXED, [], ("POST", {"participant_id": "dan", "invite": "x"}), 422, "invalid_value"),
    ("panel-bad-id", PANEL, [], ("POST", {"pid": "<script>"}), 422, "invalid_value"),
    ("panel-no-id", PANEL, [], ("POST", {}), 422, "invalid_value"),
    ("mturk-fields", PROLIFIC, [], ("POST", {"workerId": "W1", "assignmentId": "A1", "hitId": "H1"}), 422, "invalid_value"),
    # a known PROLIFIC_PID is not a credential: the participant is pinned to the session of their first entry
    ("prolific-other-session", PROLIFIC, [{"PROLIFIC_PID": "P1", "STUDY_ID": "st", "SESSION_ID": "S1"}],
     ("POST", {"PROLIFIC_PID": "P1", "STUDY_ID": "st", "SESSION_ID": "S2"}), 403, "entry_session_mismatch"),
    ("prolific-other-session-link", PROLIFIC, [{"PROLIFIC_PID": "P1", "STUDY_ID": "st", "SESSION_ID": "S1"}],
     ("GET", {"PROLIFIC_PID": "P1", "STUDY_ID": "st", "SESSION_ID": "S2"}), 403, "entry_session_mismatch"),
    ("prolific-other-study", PROLIFIC, [{"PROLIFIC_PID": "P1", "STUDY_ID": "st", "SESSION_ID": "S1"}],
     ("POST", {"PROLIFIC_PID": "P1", "STUDY_ID": "other", "SESSION_ID": "S1"}), 403, "entry_session_mismatch"),
    ("prolific-pid-alone", PROLIFIC, [{"PROLIFIC_PID": "P1", "STUDY_ID": "st", "SESSION_ID": "S1"}],
     ("POST", {"PROLIFIC_PID": "P1"}), 403, "entry_session_mismatch"),
    ("connect-other-assignment", CONNECT, [{"participantId": "C1", "assignmentId": "A1", "projectId": "X"}],
     ("POST", {"participantId": "C1", "assignmentId": "A2", "projectId": "X"}), 403, "entry_session_mismatch"),
]


def _body(server: Server, spec: Any) -> dict[str, Any]:
    if isinstance(spec, str) and spec.startswith("invite:"):
        return {"invite": server.invite(spec.split(":", 1)[1])}
    return dict(spec)


@pytest.mark.parametrize(("platform", "setup", "request_", "status", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_entries_are_refused_and_store_nothing(tmp_path: Path, platform: str, setup: list[Any],
                                                   request_: tuple[str, Any], status: int, code: str) -> None:
    server = serve(make_study(tmp_path / "study", platform))

    async def body(c: httpx.AsyncClient) -> None:
        for spec in setup:
            await enter(c, _body(server, spec))
        before = server.counts()
        method, spec = request_
        data = _body(server, spec)
        if method == "POST":
            assert_error(await c.post("/api/v1/enter", json=data), status, code)
        elif method == "GET":  # the entry link: an HTML error page with the code
            r = await c.get("/", params=data)
            assert r.status_code == status and f'data-code="{code}"' in r.text, r.text
            assert "humeval_token" not in r.headers.get("set-cookie", "")
        else:
            r = await c.post("/start", data=data)
            assert r.status_code == status and f'data-code="{code}"' in r.text, r.text
        assert server.counts() == before

    go(server, body)


def test_invited_participant_enters_with_the_invite_and_keeps_her_work(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study", INVITE_ONLY))

    async def body(c: httpx.AsyncClient) -> None:
        made = await c.post("/api/v1/admin/invites", json={"participant_ids": ["alice"]},
                            headers={"authorization": f"Bearer {ADMIN}"})
        invite = made.json()["invites"][0]["url"].split("invite=", 1)[1]
        h = await enter(c, {"invite": invite})
        a = (await c.get("/api/v1/next", headers=h)).json()
        h2 = await enter(c, {"invite": invite})  # a second device: the same participant, the same task
        assert (await c.get("/api/v1/next", headers=h2)).json()["assignment_id"] == a["assignment_id"]
        assert_error(await c.post("/api/v1/enter", json={"participant_id": "alice"}), 403, "route_not_accepted")

    go(server, body)


def test_invites_are_refused_where_the_study_takes_none(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study", PROLIFIC))

    async def body(c: httpx.AsyncClient) -> None:
        r = await c.post("/api/v1/admin/invites", json={"participant_ids": ["x1"]}, headers={"authorization": f"Bearer {ADMIN}"})
        assert_error(r, 409, "route_not_accepted")

    go(server, body)


# -- pool starvation -------------------------------------------------------------------------------------------
def _held_lists(server: Server) -> int:
    now = time.time()
    lt = s.lists.c
    return server.store.read(lambda c: c.execute(select(func.count()).select_from(s.lists).where(
        lt.participant_id.is_not(None), lt.expires_at > now)).scalar_one())


async def burst(c: httpx.AsyncClient, n: int, prefix: str) -> list[int]:
    """``n`` scripted new participants, each entering and asking for a task, all at once."""
    async def one(i: int) -> int:
        r = await c.post("/api/v1/enter", json={"participant_id": f"{prefix}{i:04d}"})
        if r.status_code != 200:
            return r.status_code
        await c.get("/api/v1/next", headers={"authorization": f"Bearer {r.json()['token']}"})
        return 200

    return list(await asyncio.gather(*(one(i) for i in range(n))))


def test_a_burst_from_one_address_gets_429_and_a_participant_with_work_keeps_it(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", items=120, per_participant=1)  # 120 lists of one task
    server = serve(study, new_per_address=20, new_per_wide_network=40)

    async def body(c: httpx.AsyncClient) -> None:
        async with server.client("198.51.100.1") as real:
            h = await enter(real, {"participant_id": "real-1"})
            mine = (await real.get("/api/v1/next", headers=h)).json()["assignment_id"]
        statuses = await burst(c, 250, "bot")
        assert statuses.count(200) == 20 and statuses.count(429) == 230
        r = await c.post("/api/v1/enter", json={"participant_id": "bot-late"})
        assert_error(r, 429, "too_many_new_participants")
        assert 1 <= int(r.headers["retry-after"]) <= 300  # the first-lease window
        assert server.count(s.participants) == 21  # the real participant and 20 bots; the refused stored nothing
        assert _held_lists(server) == 21
        async with server.client("198.51.100.1") as real:  # the real participant still has their task
            assert (await real.get("/api/v1/next", headers=h)).json()["assignment_id"] == mine
            assert (await real.post("/api/v1/enter", json={"participant_id": "real-1"})).status_code == 200
        # a returning bot (already admitted) is not throttled: it keeps its session
        assert (await c.post("/api/v1/enter", json={"participant_id": "bot0000"})).status_code in (200,)

    go(server, body)


def test_x_forwarded_for_counts_only_behind_a_trusted_proxy(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study"), new_per_address=1, trusted_proxies=["10.0.0.0/8"])

    async def body(c: httpx.AsyncClient) -> None:
        async with server.client("10.1.2.3") as proxy:  # the proxy says who the clients are
            for i, client in enumerate(["192.0.2.1", "192.0.2.2"]):
                r = await proxy.post("/api/v1/enter", json={"participant_id": f"p{i}"},
                                     headers={"x-forwarded-for": f"{client}, 10.9.9.9"})
                assert r.status_code == 200, r.text
            r = await proxy.post("/api/v1/enter", json={"participant_id": "p9"}, headers={"x-forwarded-for": "192.0.2.1"})
            assert_error(r, 429, "too_many_new_participants")
        # anyone else's X-Forwarded-For is ignored: the peer address counts
        assert (await c.post("/api/v1/enter", json={"participant_id": "q1"}, headers={"x-forwarded-for": "192.0.2.50"})).status_code == 200
        r = await c.post("/api/v1/enter", json={"participant_id": "q2"}, headers={"x-forwarded-for": "192.0.2.51"})
        assert_error(r, 429, "too_many_new_participants")

    go(server, body)


def test_unfinished_participants_are_capped(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study"), new_per_address=-1, max_active=3)

    async def body(c: httpx.AsyncClient) -> None:
        for i in range(3):
            await enter(c, {"participant_id": f"p{i}"})
        before = server.counts()
        r = await c.post("/api/v1/enter", json={"participant_id": "p3"})
        assert_error(r, 503, "study_full")
        assert int(r.headers["retry-after"]) > 0 and server.counts() == before
        assert (await c.post("/api/v1/enter", json={"participant_id": "p0"})).status_code == 200  # returning: in

    go(server, body)


def test_a_list_is_held_briefly_until_the_first_submit(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study"), first_lease_seconds=60)
    lt = s.lists.c

    def held_for() -> float:
        exp = server.store.read(lambda c: c.execute(select(lt.expires_at).where(lt.participant_id == "p1")).scalar_one())
        return exp - time.time()

    async def body(c: httpx.AsyncClient) -> None:
        h = await enter(c, {"participant_id": "p1"})
        a = (await c.get("/api/v1/next", headers=h)).json()
        assert 55 <= held_for() <= 60
        r = await c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                                                                "idempotency_key": "key-first-1", "values": {"quality": "A"}})
        assert r.status_code == 201
        await c.get("/api/v1/next", headers=h)
        assert 1790 <= held_for() <= 1800 + LIST_HOLD_SLACK  # after the first submit: a whole lease (and a minute)

    go(server, body)


def test_one_list_per_participant(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study", per_participant=3), new_per_address=-1)

    async def body(c: httpx.AsyncClient) -> None:
        h = await enter(c, {"participant_id": "p1"})
        a = (await c.get("/api/v1/next", headers=h)).json()
        await c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                                                           "idempotency_key": "key-one-list", "values": {"quality": "B"}})
        await c.get("/api/v1/next", headers=h)
        # p1 goes idle beyond the lease: their list and lease expire, and the next participant takes the list over
        server.store.write(lambda conn: (conn.execute(s.lists.update().values(expires_at=1.0)),
                                         conn.execute(s.assignments.update().where(s.assignments.c.status == "leased")
                                                      .values(expires_at=0.0))))
        server.store.context.last_reap = 0.0
        h2 = await enter(c, {"participant_id": "p2"})
        assert (await c.get("/api/v1/next", headers=h2)).status_code == 200
        p = s.participants.c
        lists = dict(server.store.read(lambda conn: conn.execute(select(p.participant_id, p.list_id)).all()))
        assert lists["p1"] == lists["p2"]
        r = await c.get("/api/v1/next", headers=h)  # p1 is back: no second list
        assert r.status_code == 204
        status = (await c.get("/api/v1/status", headers=h)).json()
        assert status["progress"]["done"] == 1
        assert server.store.read(lambda conn: conn.execute(select(p.list_id).where(p.participant_id == "p1")).scalar()) == lists["p1"]

    go(server, body)


# -- login CSRF: a link never silently replaces a session ----------------------------------------------------------
def test_a_link_does_not_replace_an_existing_session(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study"))

    async def body(c: httpx.AsyncClient) -> None:
        first = await c.get("/", params={"participant_id": "victim"})
        assert first.status_code == 303
        cookie = c.cookies["humeval_token"]
        before = server.counts()
        same = await c.get("/", params={"participant_id": "victim"})  # the participant's own link: resume
        assert same.status_code == 303 and same.headers["location"] == "/task" and "set-cookie" not in same.headers
        r = await c.get("/", params={"participant_id": "attacker"})  # e.g. from a cross-site <img> or link
        assert r.status_code == 200 and 'id="switch-notice"' in r.text and "set-cookie" not in r.headers
        assert server.counts() == before and c.cookies["humeval_token"] == cookie
        token = re.search(r'name="token" value="([^"]+)"', r.text).group(1)
        forged = await c.post("/switch", data={"participant_id": "attacker", "token": "x" * len(token)})
        assert forged.status_code == 403 and 'data-code="invalid_confirmation"' in forged.text
        other = await c.post("/switch", data={"participant_id": "someone-else", "token": token})  # token bound to the link
        assert other.status_code == 403
        assert server.counts() == before and c.cookies["humeval_token"] == cookie
        async with server.client() as fresh:  # the token is bound to the session: another browser cannot use it
            fresh.cookies.set("humeval_token", "v1.eA.y.z")
            assert (await fresh.post("/switch", data={"participant_id": "attacker", "token": token})).status_code == 403
        ok = await c.post("/switch", data={"participant_id": "attacker", "token": token})  # the participant confirmed
        assert ok.status_code == 303 and c.cookies["humeval_token"] != cookie

    go(server, body)


def test_a_cross_site_switch_post_is_refused(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study"))

    async def body(c: httpx.AsyncClient) -> None:
        await c.get("/", params={"participant_id": "victim"})
        r = await c.post("/switch", data={"participant_id": "attacker", "token": "t"}, headers={"origin": "https://evil.example"})
        assert r.status_code == 403

    go(server, body)


# -- completion and screen-out links -------------------------------------------------------------------------------
def _kind(server: Server, aid: str) -> tuple[str, Any]:
    a, t = s.assignments.c, s.tasks.c
    row = server.store.read(lambda c: c.execute(select(t.kind, t.expected).select_from(
        s.assignments.join(s.tasks, a.task_id == t.task_id)).where(a.assignment_id == aid)).one())
    return row.kind, json.loads(row.expected)


@pytest.mark.parametrize("fail", [False, True], ids=["passed", "failed-attention"])
def test_panel_participants_get_their_completion_or_screen_out_link(tmp_path: Path, fail: bool) -> None:
    platform = ("{kind: sona, completion_url: 'https://uni.sona-systems.com/webstudy_credit.aspx?experiment_id=12"
                "&credit_token=abc&survey_code=XXXX', screenout_url: 'https://uni.example/screened?code={participant_id}'}")
    server = serve(make_study(tmp_path / "study", platform, checks=1, per_participant=2,
                              exclusion="exclusion: [{rule: attention, max_failures: 0}]"))

    async def body(c: httpx.AsyncClient) -> None:
        h = await enter(c, {"id": "48213"})
        for i in range(10):
            r = await c.get("/api/v1/next", headers=h)
            if r.status_code == 204:
                break
            a = r.json()
            kind, expected = _kind(server, a["assignment_id"])
            choice = ("B" if expected == "A" else "A") if kind == "attention" and fail else (expected if kind == "attention" else "A")
            r = await c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                                                                    "idempotency_key": f"key-sona-{i:03d}", "values": {"quality": choice}})
            assert r.status_code == 201, r.text
        completion = (await c.get("/api/v1/status", headers=h)).json()["completion"]
        if fail:
            assert completion == {"code": "", "url": "https://uni.example/screened?code=48213", "screened_out": True}
        else:
            assert completion["screened_out"] is False
            assert completion["url"] == ("https://uni.sona-systems.com/webstudy_credit.aspx?experiment_id=12"
                                         "&credit_token=abc&survey_code=48213")
        c.cookies.set("humeval_token", h["authorization"][7:])
        page = await c.get("/done")
        assert completion["url"].replace("&", "&amp;") in page.text

    go(server, body)


# -- the participant's side: pages ---------------------------------------------------------------------------------
def _page_cookie(c: httpx.AsyncClient) -> None:
    assert "humeval_token" in c.cookies


def test_a_refused_form_comes_back_with_every_answer(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study", criteria=RATINGS, setup="joint"))

    async def body(c: httpx.AsyncClient) -> None:
        await c.get("/", params={"participant_id": "p1"})
        _page_cookie(c)
        page = (await c.get("/task")).text
        assert "internal-study-name-7f3" not in page and "A study of restaurant texts" in page
        assert re.search(r'<input type="range"[^>]*>', page) and 'name="adequacy"' in page
        assert 'name="adequacy" min="0.0" max="100.0" step="any" required' in page
        aid = re.search(r'name="assignment_id" value="([^"]+)"', page).group(1)
        key = re.search(r'name="idempotency_key" value="([^"]+)"', page).group(1)
        form = {"assignment_id": aid, "idempotency_key": key, "fluency": "4", "adequacy": "80", "naturalness": "0"}
        r = await c.post("/task", data=form)
        assert r.status_code == 422 and "naturalness" in r.text
        assert re.search(r'value="4" required checked', r.text)
        assert re.search(r'name="adequacy"[^>]*value="80"', r.text)
        assert re.search(r'name="naturalness"[^>]*value="0"', r.text)
        untouched = await c.post("/task", data=form | {"adequacy": "", "naturalness": "120"})  # slider never moved
        assert untouched.status_code == 422 and "Please answer this question: How adequate is it?" in untouched.text
        assert server.count(s.judgements) == 0
        ok = await c.post("/task", data=form | {"naturalness": "120"})
        assert ok.status_code == 303 and server.count(s.judgements) == 1

    go(server, body)


def test_consent_can_be_declined_with_the_platform_return_link(tmp_path: Path) -> None:
    platform = "{kind: prolific, completion_code: C0DE, return_url: 'https://app.prolific.com/submissions/complete?cc=NOCONSENT'}"
    server = serve(make_study(tmp_path / "study", platform, consent="I agree that my answers are stored."))

    async def body(c: httpx.AsyncClient) -> None:
        r = await c.get("/", params={"PROLIFIC_PID": "5f0c0ffee0ddba11c0ffee00", "STUDY_ID": "s", "SESSION_ID": "x"})
        assert r.headers["location"] == "/consent"
        page = (await c.get("/consent")).text
        assert 'id="decline"' in page and "internal-study-name-7f3" not in page
        r = await c.post("/consent", data={"decline": "yes"})
        assert r.status_code == 200 and 'href="https://app.prolific.com/submissions/complete?cc=NOCONSENT"' in r.text
        assert server.store.event_count("declined") == 1 and server.count(s.assignments) == 0
        assert "humeval_token" not in c.cookies

    go(server, body)


def test_link_only_studies_show_no_id_form(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study", PROLIFIC))

    async def body(c: httpx.AsyncClient) -> None:
        page = (await c.get("/")).text
        assert 'id="link-only"' in page and 'action="/start"' not in page

    go(server, body)


def test_defaults_are_documented_in_the_config() -> None:
    config = ServerConfig(study_dir=".", admin_token="x" * 20)
    assert (config.new_per_address, config.new_per_wide_network, config.first_lease_seconds, config.max_active) == (0, 0, 300, 0)
    assert (config.throttle_prefix_v4, config.throttle_prefix_v6, config.wide_prefix_v4, config.wide_prefix_v6) == (32, 64, 24, 48)
    assert replace(config, trusted_proxies=["10.0.0.0/8"]).trusted_proxies == ["10.0.0.0/8"]


def test_the_servers_own_machine_is_not_throttled(tmp_path: Path) -> None:
    server = serve(make_study(tmp_path / "study"), new_per_address=1)

    async def body(c: httpx.AsyncClient) -> None:
        for i in range(3):  # rehearsals and tests run on loopback
            await enter(c, {"participant_id": f"local-{i}"})
        async with server.client("10.9.8.7") as proxy:  # another machine (an untrusted proxy): throttled
            await enter(proxy, {"participant_id": "remote-1"})
            assert_error(await proxy.post("/api/v1/enter", json={"participant_id": "remote-2"}), 429, "too_many_new_participants")

    go(server, body, peer="127.0.0.1")
