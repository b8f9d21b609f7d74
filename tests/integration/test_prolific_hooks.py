"""Prolific's hooks as Prolific runs them (the fake API): secret, subscription, confirmation, signed delivery.

A subscription is disabled until confirmed with the ``X-Hook-Secret`` of its answer; only an
enabled one is delivered to. The one-POST subscription humeval sent before never gets a delivery.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette

from humeval.platforms.prolific.client import DryRun, ProlificClient, ProlificError
from humeval.platforms.prolific.hooks import (
    create_secret,
    delete_subscription,
    list_subscriptions,
    subscribe,
)
from humeval.platforms.prolific.webhooks import webhook_routes
from tests.cli import humeval
from tests.fake_prolific import TOKEN, FakeProlific
from tests.threaded import ThreadedServer

pytestmark = pytest.mark.timeout(240)

WS = "63519c1d5b139662f8cde482"
PUBLIC = "https://eval.example.org/prolific/hook"


class HookServer(ThreadedServer):
    """``webhook_routes`` in a real server (uvicorn in a thread): counts the syncs a verified hook runs."""

    def __init__(self, secret: str) -> None:
        self.synced = 0
        super().__init__(Starlette(routes=webhook_routes(self._sync, secret)), "/prolific/hook")

    def _sync(self) -> None:
        self.synced += 1


@pytest.fixture
def fake() -> Iterator[FakeProlific]:
    with FakeProlific() as f:
        yield f


def _client(fake: FakeProlific) -> ProlificClient:
    return ProlificClient(TOKEN, base_url=fake.url, timeout=5, retries=0)


def old_subscribe(client: ProlificClient, workspace_id: str, target_url: str) -> list[Any]:
    """humeval's subscribe() before the confirmation step: one POST per event type, nothing after."""
    return [client.post("/api/v1/hooks/subscriptions/",
                        {"event_type": e, "target_url": target_url, "workspace_id": workspace_id})
            for e in ("submission.status.change",)]


def test_the_old_one_post_subscription_is_never_delivered_to(fake: FakeProlific) -> None:
    with _client(fake) as client:
        made = create_secret(client, WS)
        assert made is not None
        with HookServer(made.value) as hook:
            answers = old_subscribe(client, WS, PUBLIC)
            assert answers[0]["is_enabled"] is False  # Prolific waits for the confirmation
            assert fake.state.deliver("submission.status.change", {"resource_id": "S1", "status": "RETURNED"},
                                      rewrite=lambda url: hook.url) == []
            assert hook.synced == 0 and fake.state.deliveries == []
            assert [s.is_enabled for s in list_subscriptions(client, WS)] == [False]


def test_subscribe_confirms_and_the_signed_delivery_is_verified(fake: FakeProlific) -> None:
    with _client(fake) as client:
        made = create_secret(client, WS)
        assert made is not None and made.value == fake.state.secrets[WS]["value"]
        with HookServer(made.value) as hook:
            subs = subscribe(client, WS, PUBLIC)
            assert [(s.event_type, s.target_url, s.is_enabled) for s in subs] == [
                ("submission.status.change", PUBLIC, True)]
            codes = fake.state.deliver("submission.status.change", {"resource_id": "S1", "status": "RETURNED"},
                                       rewrite=lambda url: hook.url)
            assert codes == [204] and hook.synced == 1  # signed with the workspace secret: verified, synced
            assert fake.state.deliver("study.status.change", {}, rewrite=lambda url: hook.url) == []  # not subscribed
        confirms = [p for m, p, _ in fake.state.log if m == "POST" and p == f"/api/v1/hooks/subscriptions/{subs[0].id}/"]
        assert len(confirms) == 1
        listed = list_subscriptions(client, WS)
        assert [(s.id, s.is_enabled) for s in listed] == [(subs[0].id, True)]
        delete_subscription(client, subs[0].id)
        assert list_subscriptions(client, WS) == []
        with pytest.raises(ProlificError, match="404"):
            delete_subscription(client, subs[0].id)


def test_a_wrong_confirmation_and_a_missing_secret_are_refused(fake: FakeProlific) -> None:
    with _client(fake) as client:
        with pytest.raises(ProlificError, match="secret"):
            subscribe(client, WS, PUBLIC)  # no workspace secret yet: Prolific refuses the subscription
        create_secret(client, WS)
        made = client.send("POST", "/api/v1/hooks/subscriptions/",
                           body={"workspace_id": WS, "event_type": "submission.status.change", "target_url": PUBLIC})
        with pytest.raises(ProlificError, match="400"):
            client.post(f"/api/v1/hooks/subscriptions/{made.body['id']}/", {"secret": "not-the-header"})
        assert fake.state.subscriptions[made.body["id"]]["is_enabled"] is False
        with pytest.raises(ProlificError, match="has a hook secret already"):
            create_secret(client, WS)  # a second secret would silently break a running server
        old = fake.state.secrets[WS]["value"]
        assert create_secret(client, WS, replace=True).value != old  # type: ignore[union-attr]
        with pytest.raises(ProlificError, match="https"):
            subscribe(client, WS, "http://eval.example.org/prolific/hook")
        with pytest.raises(ProlificError, match="workspace id"):
            subscribe(client, "../studies", PUBLIC)


def test_a_dry_run_prints_the_subscription_and_its_confirmation(fake: FakeProlific) -> None:
    dry = DryRun(stream=open(os.devnull, "w"))  # noqa: SIM115
    try:
        with ProlificClient("", base_url=fake.url, dry_run=dry) as client:
            assert subscribe(client, WS, PUBLIC) == []
            assert create_secret(client, WS) is None
    finally:
        dry.stream.close()
    assert [(r["method"], r["url"].removeprefix(fake.url)) for r in dry.requests] == [
        ("POST", "/api/v1/hooks/subscriptions/"),
        ("POST", "/api/v1/hooks/subscriptions/<subscription id from the answer>/"),
        ("POST", "/api/v1/hooks/secrets/")]
    assert fake.state.log == []


def _cli(fake: FakeProlific, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PROLIFIC_TOKEN": TOKEN, "PROLIFIC_API_URL": fake.url, "PROLIFIC_TIMEOUT": "2"}
    return humeval("prolific", "hooks", *args, env=env, cwd=root)


def test_the_hooks_commands(tmp_path: Path, fake: FakeProlific) -> None:
    secret = _cli(fake, tmp_path, "secret", "--workspace", WS)
    assert secret.returncode == 0, secret.stderr
    assert secret.stdout.strip() == fake.state.secrets[WS]["value"] and "PROLIFIC_HOOK_SECRET" in secret.stderr
    again = _cli(fake, tmp_path, "secret", "--workspace", WS)
    assert again.returncode == 1 and "--replace" in again.stderr and "Traceback" not in again.stderr
    made = _cli(fake, tmp_path, "subscribe", "--url", PUBLIC, "--workspace", WS, "--format", "json")
    assert made.returncode == 0, made.stderr
    assert [s["is_enabled"] for s in fake.state.subscriptions.values()] == [True]
    sid = next(iter(fake.state.subscriptions))
    listed = _cli(fake, tmp_path, "list", "--workspace", WS, "--format", "json")
    assert listed.returncode == 0 and sid in listed.stdout
    assert _cli(fake, tmp_path, "delete", sid).returncode == 0 and fake.state.subscriptions == {}
    for bad in (["subscribe", "--url", "https://eval.example.org/", "--workspace", WS],
                ["subscribe", "--url", PUBLIC, "--workspace", "a/b"],
                ["subscribe", "--url", PUBLIC, "--workspace", WS, "--event", "no.such.event"],
                ["delete", sid]):
        done = _cli(fake, tmp_path, *bad)
        assert done.returncode == 1 and "Traceback" not in done.stderr and done.stderr.strip(), (bad, done.stderr)
