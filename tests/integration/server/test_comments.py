"""Optional free-text comments (presentation.comments): stored with the judgement, shown escaped on the
admin page, exported in the ``comment`` column; refused when the study does not collect them."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from humeval.judgements import read_judgements
from humeval.stages.export import write_store_judgements
from tests.integration.server.server import ADMIN, ServerProcess
from tests.integration.server.studies import rendering_study

pytestmark = pytest.mark.timeout(120)
HOSTILE = "Output B repeats itself <script>window.__pwned = 1</script>"


def _form(page: str) -> dict[str, str]:
    fields = dict(re.findall(r'name="(assignment_id|idempotency_key)" value="([^"]+)"', page))
    return fields | {"quality": "A", "seconds": "3"}


def test_comment_stored_escaped_and_exported(tmp_path: Path) -> None:
    study = rendering_study(tmp_path / "s", comments=True)
    server = ServerProcess(study.root, None).start()
    try:
        with httpx.Client(base_url=server.url, follow_redirects=True) as c:
            c.get("/?participant_id=C1")
            page = c.get("/task").text
            assert 'name="comment"' in page and 'dir="auto"' in page
            done = c.post("/task", data=_form(page) | {"comment": HOSTILE})
            assert done.status_code == 200
            page = done.text
            c.post("/task", data=_form(page))  # a comment is optional
            admin = c.get(f"/admin?token={ADMIN}").text
            assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in admin and "<script>window.__pwned" not in admin
        export = tmp_path / "judgements.jsonl"
        write_store_judgements(study, export)
        frame = read_judgements(export)
        assert sorted(frame["comment"]) == ["", HOSTILE]
    finally:
        server.stop()


def test_comment_refused_when_the_study_does_not_collect_them(tmp_path: Path) -> None:
    study = rendering_study(tmp_path / "s")
    server = ServerProcess(study.root, None).start()
    try:
        with httpx.Client(base_url=server.url) as c:
            token = c.post("/api/v1/enter", json={"participant_id": "C2"}).json()["token"]
            h = {"authorization": f"Bearer {token}"}
            a = c.get("/api/v1/next", headers=h).json()
            r = c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"], "idempotency_key": "k-12345678",
                                                              "values": {"quality": "A"}, "comment": "hello"})
            assert r.status_code == 422 and r.json()["error"]["field"] == "comment"
            assert "presentation.comments is off" in r.json()["error"]["message"]
            assert a["formats"] and set(a["formats"]) <= {"markdown", "conversation"}
    finally:
        server.stop()
