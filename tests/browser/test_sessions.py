"""Sessions in a browser: a Prolific participant with no place is told before starting, in an accessible page, or
waits on the waitlist page, which moves on to the study when a place opens and releases them with Prolific's route
when the wait ends; a participant whose session the decision cut finishes with the code and is told they are paid
in full."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from humeval.files import write_jsonl
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.browser.axe import severe_violations
from tests.browser.test_accessibility import browser  # noqa: F401 (the fixture)
from tests.browser.test_participant import SHOTS
from tests.integration.server.server import ADMIN, ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PROTOCOL = """
version: 1
study: {{name: sessions, seed: 5}}
data: {{files: [data/outputs.jsonl]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?"}}
presentation: {{setup: separate}}
design: {{judgements_per_item: 1, items_per_participant: 10, counterbalancing: none}}
stopping: {{rule: anytime, delta: 0.05, systems: [baseline, candidate], min_in_flight: {floor}, waitlist_seconds: {wait}}}
platform: {{kind: prolific, completion_code: C0DE-55}}
"""


def _study(root: Path, floor: int, wait: float = 0) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(120, seed=5))
    (root / "humeval.yaml").write_text(PROTOCOL.format(floor=floor, wait=wait), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


def _api_participant(client: httpx.Client, pid: str) -> dict[str, str]:
    r = client.post("/api/v1/enter", json={"PROLIFIC_PID": pid, "STUDY_ID": "s1", "SESSION_ID": f"S-{pid}"})
    assert r.status_code == 200, r.text
    return {"authorization": f"Bearer {r.json()['token']}"}


def _work(client: httpx.Client, h: dict[str, str], prefer: str = "candidate") -> int:
    """Answer every task of the participant's list for ``prefer``."""
    done = 0
    while (r := client.get("/api/v1/next", headers=h)).status_code == 200:
        a = r.json()
        first = a["outputs"][0]
        first = first if isinstance(first, str) else str(first.get("output", first))
        choice = "A" if first.startswith("In the") == (prefer == "candidate") else "B"  # the candidate's descriptions
        # (templates.generate_outputs)
        s = client.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                                                               "idempotency_key": f"k-{a['assignment_id']}",
                                                               "values": {"quality": choice}})
        assert s.status_code == 201, s.text
        done += 1
    return done


def _accessible(page: Any, name: str) -> None:
    bad = severe_violations(page)
    assert not bad, f"{name}: {bad}"
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0


def test_no_place_is_said_before_starting(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    study = _study(tmp_path / "study", floor=1)
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with httpx.Client(base_url=server.url) as client:
            for pid in ("A" * 24, "B" * 24):  # the two sessions the rule admits at the start
                h = _api_participant(client, pid)
                assert client.get("/api/v1/next", headers=h).status_code == 200
        for width in (1280, 390):
            page = browser.new_context(viewport={"width": width, "height": 800}).new_page()
            page.goto(f"{server.url}/?PROLIFIC_PID={'C' * 23}{width % 10}&STUDY_ID=s1&SESSION_ID=S-c{width}")
            assert page.locator("#nothing-left").get_attribute("data-reason") == "wait"
            assert "No place is open right now" in page.locator("h1").inner_text()
            assert "return the study" in page.locator("#return-prolific").inner_text()
            _accessible(page, f"wait page at {width}")
            page.screenshot(path=str(SHOTS / f"no-place-{width}.png"), full_page=True)
    finally:
        server.stop()


def test_the_waitlist_moves_on_when_a_place_opens(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    study = _study(tmp_path / "study", floor=1, wait=8)  # 8 s: asks every 0.25 s
    server = ServerProcess(study.root, None).start()
    try:
        with httpx.Client(base_url=server.url) as client:
            heads = [_api_participant(client, pid) for pid in ("H" * 24, "I" * 24)]  # the two sessions admitted
            assert all(client.get("/api/v1/next", headers=h).status_code == 200 for h in heads)
            page = browser.new_context(viewport={"width": 390, "height": 800}).new_page()
            page.goto(f"{server.url}/?PROLIFIC_PID={'J' * 24}&STUDY_ID=s1&SESSION_ID=S-j")
            assert page.locator("#waitlist").is_visible() and not page.locator("#waitlist-ended").is_visible()
            assert "Please wait for a place" in page.locator("h1").first.inner_text()
            _accessible(page, "waitlist page")
            page.screenshot(path=str(SHOTS / "waitlist-390.png"), full_page=True)
            for h, prefer in zip(heads, ("candidate", "baseline"), strict=True):  # 10 each way: undecided, a place
                _work(client, h, prefer)
        page.wait_for_url(lambda url: "/task" in url or "/consent" in url or "/instructions" in url, timeout=6000)
        assert page.locator("#waitlist").count() == 0
    finally:
        server.stop()


def test_the_waitlist_ends_with_the_platform_route(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    study = _study(tmp_path / "study", floor=1, wait=1)
    server = ServerProcess(study.root, None).start()
    try:
        with httpx.Client(base_url=server.url) as client:
            for pid in ("K" * 24, "L" * 24):
                assert client.get("/api/v1/next", headers=_api_participant(client, pid)).status_code == 200
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.goto(f"{server.url}/?PROLIFIC_PID={'M' * 24}&STUDY_ID=s1&SESSION_ID=S-m")
        page.locator("#waitlist-ended").wait_for(state="visible", timeout=5000)
        assert not page.locator("#waitlist").is_visible()
        assert "No place opened" in page.locator("#waitlist-ended h1").inner_text()
        assert page.locator("#nothing-left").get_attribute("data-reason") == "wait"
        assert "return the study" in page.locator("#return-prolific").inner_text()
        _accessible(page, "waitlist ended")
        page.screenshot(path=str(SHOTS / "waitlist-ended-1280.png"), full_page=True)
    finally:
        server.stop()


def test_a_session_cut_by_the_decision_ends_with_the_code(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    study = _study(tmp_path / "study", floor=30)  # a floor of 30: three sessions at once
    server = ServerProcess(study.root, None).start()
    try:
        page = browser.new_context(viewport={"width": 390, "height": 800}).new_page()
        page.goto(f"{server.url}/?PROLIFIC_PID={'D' * 24}&STUDY_ID=s1&SESSION_ID=S-d")
        page.goto(f"{server.url}/task")
        page.locator("fieldset.criterion input[type=radio]").first.check()
        page.click("#submit")
        page.wait_for_load_state()
        assert "/task" in page.url  # one answered, the next shown
        with httpx.Client(base_url=server.url) as client:  # two others decide the comparison meanwhile
            for pid in ("E" * 24, "F" * 24):
                _work(client, _api_participant(client, pid))
            status = client.get("/api/v1/admin/status", headers={"authorization": f"Bearer {ADMIN}"})
        page.locator("fieldset.criterion input[type=radio]").first.check()
        page.click("#submit")
        page.wait_for_load_state()
        assert "/done" in page.url, (page.url, status.text[:300])
        assert "C0DE-55" in page.locator("#completion-code").inner_text()
        assert "paid in full" in page.locator("#ended-early").inner_text()
        page.click("#stay")
        _accessible(page, "done page of a cut session")
        page.screenshot(path=str(SHOTS / "session-cut-390.png"), full_page=True)
        late = browser.new_context(viewport={"width": 390, "height": 800}).new_page()
        late.goto(f"{server.url}/?PROLIFIC_PID={'G' * 24}&STUDY_ID=s1&SESSION_ID=S-g")
        assert late.locator("#nothing-left").get_attribute("data-reason") == "closed"
        _accessible(late, "closed page")
    finally:
        server.stop()
