"""The Prolific client against the local fake API: token, 401, 404, 429, 5xx, timeouts, pages, dry run."""

from __future__ import annotations

import io
import itertools
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from humeval.errors import PlatformError
from humeval.platforms.prolific.client import (
    DryRun,
    ProlificClient,
    ProlificError,
    UncertainOutcome,
    read_token,
)
from tests.fake_prolific import TOKEN, FakeProlific

BODY = {"name": "n", "description": "d", "external_study_url": "https://x", "completion_codes": [],
        "total_available_places": 1, "estimated_completion_time": 1, "reward": 100}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProlific]:
    with FakeProlific() as f:
        yield f


_OPEN: list[ProlificClient] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _client(fake: FakeProlific, sleeps: list[float], **kw: object) -> ProlificClient:
    client = ProlificClient(TOKEN, base_url=fake.url, timeout=5.0, sleep=sleeps.append, rng=random.Random(0), **kw)  # type: ignore[arg-type]
    _OPEN.append(client)
    return client


def test_401_names_the_token_variable_and_never_the_token(fake: FakeProlific) -> None:
    client = ProlificClient("wrong-token-123", base_url=fake.url, timeout=5.0)
    _OPEN.append(client)
    with pytest.raises(ProlificError) as info:
        client.post("/api/v1/studies/", BODY)
    assert info.value.status == 401 and "PROLIFIC_TOKEN" in str(info.value)
    assert "wrong-token-123" not in str(info.value) and "wrong-token-123" not in repr(client)


def test_404_for_an_unknown_study(fake: FakeProlific) -> None:
    with pytest.raises(ProlificError) as info:
        _client(fake, []).post("/api/v1/studies/nope/transition/", {"action": "PUBLISH"})
    assert info.value.status == 404


def test_429_waits_retry_after_and_sends_again(fake: FakeProlific) -> None:
    sleeps: list[float] = []
    fake.state.fail("POST", r"^/api/v1/studies/$", "429")
    made = _client(fake, sleeps).post("/api/v1/studies/", BODY)
    assert made["status"] == "UNPUBLISHED" and sleeps == [0.0]  # Retry-After: 0


def test_an_unreadable_retry_after_waits_the_backoff(fake: FakeProlific) -> None:
    sleeps: list[float] = []
    try:
        for value in ("nan", "-5", "inf"):  # nan used to mean no wait (float('nan') compares false with every bound)
            fake.state.retry_after = value
            fake.state.fail("POST", r"^/api/v1/studies/$", "429")
            _client(fake, sleeps).post("/api/v1/studies/", BODY)
    finally:
        fake.state.retry_after = "0"
    assert len(sleeps) == 3 and all(0.25 <= s <= 0.5 for s in sleeps)  # backoff 0.5 * 2**0 with jitter in [0.5, 1]


def test_5xx_is_retried_with_a_growing_backoff_then_gives_up(fake: FakeProlific) -> None:
    sleeps: list[float] = []
    study = _client(fake, []).post("/api/v1/studies/", BODY)["id"]
    fake.state.fail("GET", f"/studies/{study}/submissions/", "500")
    assert _client(fake, sleeps).get(f"/api/v1/studies/{study}/submissions/")["results"] == []
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5  # backoff 0.5 * 2**0 with jitter in [0.5, 1]
    sleeps.clear()
    before = len(fake.state.log)
    for _ in range(5):
        fake.state.fail("GET", f"/studies/{study}/submissions/", "500")
    with pytest.raises(ProlificError) as info:
        _client(fake, sleeps, retries=4).get(f"/api/v1/studies/{study}/submissions/")
    assert info.value.status == 500 and len(fake.state.log) - before == 5  # bounded: 1 + 4 retries
    assert len(sleeps) == 4 and all(b > a for a, b in itertools.pairwise(sleeps))


def test_a_timeout_is_retried_for_a_read_but_never_for_a_payment(fake: FakeProlific) -> None:
    client = _client(fake, [])
    study = client.post("/api/v1/studies/", BODY)["id"]
    fake.state.add_submission(study, "P1", "S1", "APPROVED")
    fake.state.fail("GET", "/submissions/S1/", "timeout")
    assert client.get("/api/v1/submissions/S1/")["participant"] == "P1"  # "Retrieve a submission" names it `participant`
    bulk = client.post("/api/v1/submissions/bonus-payments/", {"study_id": study, "csv_bonuses": "P1,0.50\n"})["id"]
    fake.state.fail("POST", f"/bulk-bonus-payments/{bulk}/pay/", "timeout")
    with pytest.raises(UncertainOutcome):
        client.post(f"/api/v1/bulk-bonus-payments/{bulk}/pay/", None, safe=False)
    assert fake.state.payments.count(("P1", 50)) == 1  # carried out once, not sent again


def test_pages_follow_the_next_link(fake: FakeProlific) -> None:
    client = _client(fake, [])
    study = client.post("/api/v1/studies/", BODY)["id"]
    for i in range(5):
        fake.state.add_submission(study, f"P{i}", f"X{study}{i}")
    assert [s["participant_id"] for s in client.pages(f"/api/v1/studies/{study}/submissions/")] == [f"P{i}" for i in range(5)]


def test_dry_run_sends_nothing_and_hides_the_token(fake: FakeProlific) -> None:
    out = io.StringIO()
    before = len(fake.state.log)
    client = ProlificClient(TOKEN, base_url=fake.url, dry_run=DryRun(out))
    assert client.post("/api/v1/studies/", BODY) is None
    assert len(fake.state.log) == before
    line = json.loads(out.getvalue())
    assert line == {"method": "POST", "url": f"{fake.url}/api/v1/studies/", "headers": {"Authorization": "Token ***"},
                    "json": BODY}
    assert TOKEN not in out.getvalue()


def test_token_from_the_environment_or_a_file_outside_the_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = tmp_path / "study"
    study.mkdir()
    monkeypatch.delenv("PROLIFIC_TOKEN", raising=False)
    monkeypatch.delenv("PROLIFIC_TOKEN_FILE", raising=False)
    with pytest.raises(PlatformError, match="no Prolific API token"):
        read_token(study)
    inside = study / "token.txt"
    inside.write_text("abc\n")
    with pytest.raises(PlatformError, match="inside the study folder"):
        read_token(study, inside)
    outside = tmp_path / "token.txt"
    outside.write_text("from-file\n")
    assert read_token(study, outside) == "from-file"
    monkeypatch.setenv("PROLIFIC_TOKEN", "from-env")
    assert read_token(study, outside) == "from-env"
