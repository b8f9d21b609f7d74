"""What a public study link shows and sets: no marker of checks or repeats, Secure cookies over HTTPS,
an admin session that rotates and expires. In-process (httpx.ASGITransport)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
from markupsafe import escape
from sqlalchemy import select

from humeval.server.tokens import admin_cookie
from humeval.store import schema as s
from tests.integration.server.inprocess import ADMIN, InProcess
from tests.integration.server.test_entry import make_study

PAYLOAD = {"assignment_id", "task", "criteria", "outputs", "formats", "input", "references", "progress", "expires_at"}


def _kind(srv: InProcess, aid: str) -> str:
    a, t = s.assignments.c, s.tasks.c
    return srv.store.read(lambda c: c.execute(select(t.kind).select_from(s.assignments.join(
        s.tasks, a.task_id == t.task_id)).where(a.assignment_id == aid)).scalar_one())


def test_next_does_not_tell_checks_or_repeats_from_tasks(tmp_path: Path) -> None:
    srv = InProcess(make_study(tmp_path / "study", items=6, per_participant=4, checks="2, repeated_items: 1"))

    async def body(c: httpx.AsyncClient) -> list[str]:
        await c.get("/", params={"participant_id": "p1"})
        h = {"authorization": f"Bearer {c.cookies['humeval_token']}"}
        kinds = []
        for n in range(20):
            r = await c.get("/api/v1/next", headers=h)
            if r.status_code == 204:
                break
            a = r.json()
            kinds.append(_kind(srv, a["assignment_id"]))
            assert set(a) == PAYLOAD and set(a["task"]) == {"family"}
            # the outputs are the check's own text ("please choose A"): what it is, but nothing around it may say so
            text = json.dumps({k: v for k, v in a.items() if k != "outputs"}).lower()
            assert "attention" not in text and "repeat" not in text and "item-" not in text
            page = (await c.get("/task")).text
            for output in a["outputs"]:
                page = page.replace(str(escape(output)), "")
            page = page.lower()
            # no markup tells a check apart; its wording (from the study language's catalogue) is an instruction
            assert "attention-notice" not in page and "repeat" not in page and 'class="notice"' not in page
            assert re.search(r'name="assignment_id" value="([^"]+)"', page).group(1) == a["assignment_id"]
            await c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                         "idempotency_key": f"key-{n:06d}", "values": {"quality": "A"}})
        return kinds

    try:
        kinds = srv.run(body)
    finally:
        srv.close()
    assert {"attention", "repeat", "task"} <= set(kinds), kinds  # all three were served, none told apart


def test_showing_the_task_page_again_only_reads(tmp_path: Path) -> None:
    """``GET /task`` leases a task only for a participant who holds none; shown again (a reload, the redirect after
    an answer that leased the next task) it reads the lease and writes nothing: no lease, no ``last_seen``."""
    srv = InProcess(make_study(tmp_path / "study", items=6, per_participant=4))
    p, a = s.participants.c, s.assignments.c

    def rows() -> tuple[float, list[tuple[str, str]]]:
        return srv.store.read(lambda c: (
            c.execute(select(p.last_seen).where(p.participant_id == "p1")).scalar_one(),
            sorted(c.execute(select(a.assignment_id, a.status).where(a.participant_id == "p1")).all())))

    async def body(c: httpx.AsyncClient) -> None:
        await c.get("/", params={"participant_id": "p1"})
        first = (await c.get("/task")).text  # nothing held: the page leases one
        seen, leased = rows()
        assert [status for _, status in leased] == ["leased"]
        for _ in range(3):
            assert (await c.get("/task")).text.count(leased[0][0]) == first.count(leased[0][0]) > 0
        assert rows() == (seen, leased)  # shown three more times: nothing written

    try:
        srv.run(body)
    finally:
        srv.close()


def _set_cookie(r: httpx.Response, name: str) -> str:
    return next(v for v in r.headers.get_list("set-cookie") if v.startswith(name + "="))


def test_cookies_are_secure_over_https_directly_or_behind_a_trusted_proxy(tmp_path: Path) -> None:
    srv = InProcess(make_study(tmp_path / "study"), trusted_proxies=["10.0.0.0/8"])

    async def entry(c: httpx.AsyncClient, pid: str, headers: dict[str, str] | None = None) -> str:
        r = await c.get("/", params={"participant_id": pid}, headers=headers or {})
        assert r.status_code == 303, r.text
        return _set_cookie(r, "humeval_token").lower()

    try:
        assert "; secure" in srv.run(lambda c: entry(c, "p1"), scheme="https")
        assert "; secure" not in srv.run(lambda c: entry(c, "p2"))
        proto = {"x-forwarded-proto": "https", "x-forwarded-for": "198.51.100.4"}
        assert "; secure" in srv.run(lambda c: entry(c, "p3", proto), peer="10.0.0.2")
        assert "; secure" not in srv.run(lambda c: entry(c, "p4", proto))  # not from a trusted proxy: ignored

        async def admin(c: httpx.AsyncClient) -> list[str]:
            cookies = []
            for _ in range(2):
                r = await c.get("/admin", params={"token": ADMIN})
                assert r.status_code == 303
                cookies.append(_set_cookie(r, "humeval_admin"))
            return cookies

        first, second = srv.run(admin, scheme="https")
        assert first != second  # every login a new session value
        assert "secure" in first.lower() and "max-age=28800" in first.lower() and "samesite=strict" in first.lower()

        async def expired(c: httpx.AsyncClient) -> int:
            old = admin_cookie(srv.store.context.secret, ADMIN, now=1_000_000)  # issued long ago
            c.cookies.set("humeval_admin", old)
            return (await c.get("/admin/export.csv")).status_code

        assert srv.run(expired) == 401
    finally:
        srv.close()
