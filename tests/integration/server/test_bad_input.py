"""Every bad input of issue 10 → its status and error code, in the one error shape, with nothing stored.

In-process (httpx.ASGITransport) on SQLite; the full disk also on PostgreSQL. Each row of
``CASES`` is one request; the test checks the status, the error shape and code, and that the
participants, sessions and judgements tables did not change.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from humeval.store import schema as s
from tests.integration.server.inprocess import ADMIN_HEADERS, InProcess, assert_error
from tests.integration.server.test_entry import RATINGS, make_study

pytestmark = pytest.mark.timeout(120)

NESTED = b"[" * 2000 + b"]" * 2000  # 4 KB, 2000 levels deep
SURROGATE = "\ud800x"
JSON = {"content-type": "application/json"}


def raw(obj: Any) -> bytes:
    """``obj`` as JSON the way a client can send it: a lone surrogate becomes the escape ``\\ud800``."""
    return json.dumps(obj).encode()


# (id, method, path, auth: participant|admin|none, headers, body (bytes; {aid} is the current assignment), status, code)
CASES: list[tuple[str, str, str, str, dict[str, str], bytes, int, str]] = [
    ("nested-enter", "POST", "/api/v1/enter", "none", JSON, NESTED, 400, "too_deep"),
    ("nested-judgements", "POST", "/api/v1/judgements", "participant", JSON, NESTED, 400, "too_deep"),
    ("nested-invites", "POST", "/api/v1/admin/invites", "admin", JSON, NESTED, 400, "too_deep"),
    ("nested-consent", "POST", "/api/v1/consent", "participant", JSON, NESTED, 400, "too_deep"),
    ("surrogate-consent", "POST", "/api/v1/consent", "participant", JSON, raw({SURROGATE: True}), 400,
     "invalid_unicode"),
    ("consent-text-plain", "POST", "/api/v1/consent", "participant", {"content-type": "text/plain"}, b"yes", 415,
     "unsupported_media_type"),
    ("nested-in-values", "POST", "/api/v1/judgements", "participant", JSON,
     b'{"assignment_id": "{aid}", "idempotency_key": "key-nested-1", "values": {"fluency": ' + b"[" * 900
     + b"]" * 900 + b"}}", 400, "too_deep"),
    ("surrogate-field-enter", "POST", "/api/v1/enter", "none", JSON, raw({SURROGATE: "x"}), 400, "invalid_unicode"),
    ("surrogate-field-judgements", "POST", "/api/v1/judgements", "participant", JSON,
     raw({SURROGATE: 1, "assignment_id": "{aid}"}), 400, "invalid_unicode"),
    ("surrogate-values-key", "POST", "/api/v1/judgements", "participant", JSON,
     raw({"assignment_id": "{aid}", "idempotency_key": "key-surrogate", "values": {SURROGATE: 3}}), 400,
     "invalid_unicode"),
    ("surrogate-invites", "POST", "/api/v1/admin/invites", "admin", JSON, raw({"participant_ids": [SURROGATE]}), 400,
     "invalid_unicode"),
    ("text-plain-charset-json", "POST", "/api/v1/enter", "none", {"content-type": "text/plain; charset=json"},
     raw({"participant_id": "p9"}), 415, "unsupported_media_type"),
    ("json-utf16", "POST", "/api/v1/enter", "none", {"content-type": "application/json; charset=utf-16"},
     raw({"participant_id": "p9"}), 415, "unsupported_media_type"),
    ("jsonx", "POST", "/api/v1/enter", "none", {"content-type": "application/jsonx"}, raw({"participant_id": "p9"}),
     415, "unsupported_media_type"),
    ("no-content-type", "POST", "/api/v1/judgements", "participant", {}, raw({"assignment_id": "{aid}"}), 415,
     "unsupported_media_type"),
    ("enter-empty", "POST", "/api/v1/enter", "none", JSON, b"{}", 422, "invalid_value"),
    ("enter-consent-only", "POST", "/api/v1/enter", "none", JSON, raw({"consent": True}), 422, "invalid_value"),
    ("enter-invite-null", "POST", "/api/v1/enter", "none", JSON, raw({"invite": None, "participant_id": "p9"}), 422,
     "invalid_value"),
    ("enter-id-null", "POST", "/api/v1/enter", "none", JSON, raw({"participant_id": None}), 422, "invalid_value"),
    ("enter-invite-on-open-study", "POST", "/api/v1/enter", "none", JSON, raw({"invite": "not-an-invite"}), 403,
     "route_not_accepted"),
    ("values-empty", "POST", "/api/v1/judgements", "participant", JSON,
     raw({"assignment_id": "{aid}", "idempotency_key": "key-empty-1", "values": {}}), 422, "invalid_value"),
    ("seconds-nan", "POST", "/api/v1/judgements", "participant", JSON,
     b'{"assignment_id": "{aid}", "idempotency_key": "key-nan-0001", "values": {"fluency": 3}, "seconds": NaN}', 422,
     "invalid_value"),
    ("invites-empty", "POST", "/api/v1/admin/invites", "admin", JSON, raw({"participant_ids": []}), 422,
     "invalid_value"),
    ("get-on-post-only", "GET", "/api/v1/judgements", "participant", {}, b"", 405, "method_not_allowed"),
    ("put-on-enter", "PUT", "/api/v1/enter", "none", JSON, b"{}", 405, "method_not_allowed"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    study = make_study(tmp_path_factory.mktemp("bad") / "study", criteria=RATINGS, setup="joint", items=6)
    srv = InProcess(study)
    try:
        yield srv
    finally:
        srv.close()


def consented(srv: InProcess) -> list[object]:
    p = s.participants.c
    return srv.store.read(lambda c: c.execute(select(p.participant_id, p.consented_at).order_by(p.participant_id)).all())


def _participant(srv: InProcess, pid: str) -> tuple[dict[str, str], str]:
    async def body(c: httpx.AsyncClient) -> tuple[dict[str, str], str]:
        r = await c.post("/api/v1/enter", json={"participant_id": pid})
        h = {"authorization": f"Bearer {r.json()['token']}"}
        return h, (await c.get("/api/v1/next", headers=h)).json()["assignment_id"]

    return srv.run(body)


@pytest.mark.parametrize(("method", "path", "auth", "headers", "body", "status", "code"),
                         [pytest.param(*case[1:], id=case[0]) for case in CASES])
def test_bad_input_is_refused_in_the_error_shape_and_stores_nothing(
        app: InProcess, method: str, path: str, auth: str, headers: dict[str, str], body: bytes, status: int,
        code: str) -> None:
    h, aid = _participant(app, "table-participant")
    before, consent_before = app.counts(), consented(app)
    auth_headers = {"participant": h, "admin": ADMIN_HEADERS, "none": {}}[auth]

    async def send(c: httpx.AsyncClient) -> httpx.Response:
        return await c.request(method, path, content=body.replace(b"{aid}", aid.encode()),
                               headers=headers | auth_headers)

    r = app.run(send)
    assert_error(r, status, code)
    if status == 405:
        assert r.headers["allow"] and method not in r.headers["allow"]
    assert app.counts() == before
    assert consented(app) == consent_before  # a refused consent records nothing either


def test_a_likert_value_that_is_a_digit_but_not_a_number(app: InProcess) -> None:
    """``"²".isdigit()`` is true and ``int("²")`` fails: the form comes back with 422, nothing stored."""
    async def body(c: httpx.AsyncClient) -> None:
        await c.get("/", params={"participant_id": "form-participant"})
        page = (await c.get("/task")).text
        aid = re.search(r'name="assignment_id" value="([^"]+)"', page).group(1)
        before = app.counts()
        for bad in ("²", "٣", "3.0", "99999999999999999999"):
            r = await c.post("/task", data={"assignment_id": aid, "idempotency_key": f"form-{aid}-x", "fluency": bad,
                                            "adequacy": "50", "naturalness": "10"})
            assert r.status_code == 422 and "fluency" in r.text, (bad, r.status_code)
        assert app.counts() == before

    app.run(body)


def test_json_with_a_charset_is_accepted(app: InProcess) -> None:
    async def body(c: httpx.AsyncClient) -> None:
        for ctype in ("application/json; charset=utf-8", "Application/JSON;charset=\"UTF-8\""):
            r = await c.post("/api/v1/enter", content=raw({"participant_id": "charset-ok"}), headers={"content-type": ctype})
            assert r.status_code == 200, r.text

    app.run(body)


# -- a full disk -----------------------------------------------------------------------------------------------
def _fill(srv: InProcess, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the store's writes fail as on a full disk: SQLite's own error (the database may not grow) or ENOSPC."""
    if how == "sqlite-full":
        pages = srv.store.write(lambda conn: conn.exec_driver_sql("PRAGMA page_count").scalar())
        srv.store.write(lambda conn: conn.exec_driver_sql(f"PRAGMA max_page_count = {pages}"))
        return
    import humeval.store.store as store_module

    def full(*args: Any, **kwargs: Any) -> Any:
        if how == "enospc":
            raise OSError(errno.ENOSPC, "No space left on device")
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store_module, "submit_judgement", full)


@pytest.mark.parametrize("how", ["sqlite-full", "operational-error", "enospc"])
def test_a_full_disk_answers_503_and_healthz_says_unwritable(tmp_path: Path, how: str, db_url: str | None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    if how == "sqlite-full" and db_url is not None:
        pytest.skip("SQLite's own limit on the database size")
    study = make_study(tmp_path / "study", criteria=RATINGS, setup="joint", items=40, per_participant=20)
    srv = InProcess(study, db_url)
    try:
        async def body(c: httpx.AsyncClient) -> None:
            h = {"authorization": f"Bearer {(await c.post('/api/v1/enter', json={'participant_id': 'p1'})).json()['token']}"}
            aid = (await c.get("/api/v1/next", headers=h)).json()["assignment_id"]
            assert (await c.get("/healthz")).json() == {"status": "ok", "store": "writable", "process": os.getpid()}
            _fill(srv, how, monkeypatch)
            values = {"fluency": 3, "adequacy": 50.0, "naturalness": 10.0}
            for i in range(2000):  # edits of one assignment add rows until the database may not grow
                before = srv.counts()
                r = await c.post("/api/v1/judgements", headers=h, json={
                    "assignment_id": aid, "idempotency_key": f"key-full-{i:04d}", "values": values, "seconds": 1.0})
                if r.status_code != 201:
                    break
            assert_error(r, 503, "store_unwritable")
            assert int(r.headers["retry-after"]) > 0
            assert f"store ({srv.store.where})" in r.json()["error"]["message"]  # named, without secrets
            assert srv.store.where == "study.db" if db_url is None else srv.store.where.startswith("postgresql")
            health = await c.get("/healthz")
            assert health.status_code == 503 and health.json()["store"] == "unwritable"
            assert int(health.headers["retry-after"]) > 0
            assert srv.counts() == before
        srv.run(body)
    finally:
        srv.close()
