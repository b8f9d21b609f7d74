"""A first entry from Prolific is checked against the study's active submissions (the fake API)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from humeval.platforms.prolific.client import ProlificClient
from humeval.platforms.prolific.entry_check import SubmissionCheck
from tests.fake_prolific import TOKEN, FakeProlific

STUDY = "study-aaaaaaaaaaaaaaaaaaaaaaa"


@pytest.fixture
def fake() -> Iterator[FakeProlific]:
    with FakeProlific() as f:
        f.state.studies[STUDY] = {"id": STUDY, "status": "ACTIVE", "total_available_places": 4}
        f.state.add_submission(STUDY, "P1", "S1")
        f.state.add_submission(STUDY, "P2", "S2", status="RETURNED")
        f.state.add_submission("another-study", "P3", "S3")
        yield f


def link(session: str, study: str = STUDY) -> dict[str, str]:
    return {"STUDY_ID": study, "SESSION_ID": session}


def test_only_an_active_submission_of_this_study_by_this_participant_enters(fake: FakeProlific) -> None:
    now = [0.0]
    check = SubmissionCheck(STUDY, lambda: ProlificClient(TOKEN, base_url=fake.url, retries=0, timeout=5),
                            clock=lambda: now[0])
    assert check.check("P1", link("S1")).allowed
    assert check.check("P1", link("S1")).allowed and check.asked == 1  # cached: Prolific asked once
    assert not check.check("P9", link("S1")).allowed  # knows a session id, not its participant
    assert "RETURNED" in check.check("P2", link("S2")).reason  # returned: no longer active
    assert not check.check("P3", link("S3", "another-study")).allowed  # another study's link
    assert not check.check("P3", link("S3")).allowed  # another study's submission under this study's id
    assert "404" in check.check("P1", link("S404")).reason
    asked = check.asked
    assert not check.check("P1", link("../studies")).allowed and check.asked == asked  # never sent in a path
    assert not check.check("P1", {"STUDY_ID": STUDY}).allowed
    # a refusal is remembered for a minute, then asked again
    fake.state.add_submission(STUDY, "P1", "S404")
    assert not check.check("P1", link("S404")).allowed
    now[0] = 61.0
    assert check.check("P1", link("S404")).allowed


def test_unreachable_prolific_lets_the_entry_in_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    check = SubmissionCheck(STUDY, lambda: ProlificClient(TOKEN, base_url="http://127.0.0.1:9", retries=0, timeout=2))
    with caplog.at_level(logging.WARNING, logger="humeval.server"):
        verdict = check.check("P1", link("S1"))
    assert verdict.allowed and not verdict.checked and "unreachable" in verdict.reason
    assert "could not be asked" in caplog.text and "P1" in caplog.text
    assert check.check("P1", link("S1")).allowed and check.asked == 1  # the outage is remembered for 30 s


def test_a_failing_prolific_lets_the_entry_in_and_a_missing_token_too(fake: FakeProlific,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    fake.state.fail("GET", r"/submissions/S1/$", "500")
    check = SubmissionCheck(STUDY, lambda: ProlificClient(TOKEN, base_url=fake.url, retries=0, timeout=5))
    with caplog.at_level(logging.WARNING, logger="humeval.server"):
        assert check.check("P1", link("S1")).checked is False

    def no_token() -> ProlificClient:
        from humeval.errors import PlatformError

        raise PlatformError("no Prolific API token")

    with caplog.at_level(logging.WARNING, logger="humeval.server"):
        verdict = SubmissionCheck(STUDY, no_token).check("P1", link("S1"))
    assert verdict.allowed and not verdict.checked and "no Prolific API token" in caplog.text
