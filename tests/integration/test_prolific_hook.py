"""The server of a Prolific study answers Prolific's hook: a signed request runs `prolific status` (fake Prolific)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from humeval import logbook
from humeval.platforms.prolific.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from humeval.server.app import create_app
from humeval.server.config import ServerConfig
from humeval.store.store import Store
from tests.fake_prolific import TOKEN, FakeProlific
from tests.integration.test_prolific_acceptance import cli, make_study

ADMIN = "admin-token-for-tests-000000"


@pytest.fixture
def fake():
    with FakeProlific() as f:
        yield f


def test_a_signed_hook_syncs_the_submissions(tmp_path: Path, fake: FakeProlific, monkeypatch: pytest.MonkeyPatch) -> None:
    study = make_study(tmp_path / "study")
    cli(study, fake, "create")
    monkeypatch.setenv("PROLIFIC_TOKEN", TOKEN)
    monkeypatch.setenv("PROLIFIC_API_URL", fake.url)
    store = Store.open(study)
    store.prepare()
    body = b'{"event_type": "submission.status.change"}'

    async def post(app, headers: dict[str, str]) -> int:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return (await client.post("/prolific/hook", content=body, headers=headers)).status_code

    try:
        plain = create_app(ServerConfig(study_dir=str(study.root), admin_token=ADMIN), store)
        assert asyncio.run(post(plain, {})) in (404, 405)  # no secret configured: no hook route
        app = create_app(ServerConfig(study_dir=str(study.root), admin_token=ADMIN, hook_secret="s3cret"), store)
        ts = str(int(time.time()))
        assert asyncio.run(post(app, {TIMESTAMP_HEADER: ts, SIGNATURE_HEADER: "forged"})) == 401
        before = len(fake.state.log)
        assert asyncio.run(post(app, {TIMESTAMP_HEADER: ts, SIGNATURE_HEADER: sign("s3cret", ts, body)})) == 204
        asked = [path for method, path, _ in fake.state.log[before:] if method == "GET"]
        assert any("submissions" in path for path in asked), asked  # it asked Prolific, never trusting the payload
        assert any("prolific-status" in str(e) for e in logbook.read(study))  # the sync is in the logbook
    finally:
        store.close()
