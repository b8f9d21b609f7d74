"""A participant completes every task type in Chromium (Playwright), outputs are escaped.

Debian's Chromium at /usr/bin/chromium, headless; screenshots of each task type are
saved under test-output/screenshots/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.server.server import ADMIN, ServerProcess
from tests.integration.server.studies import SCRIPT, all_types_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


@pytest.fixture
def page() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def _answer(page, types: list[str]) -> None:  # type: ignore[no-untyped-def]
    for fieldset in page.locator("fieldset.criterion").all():
        kind = fieldset.get_attribute("data-type")
        types.append(kind)
        if kind in ("2afc", "likert"):
            fieldset.locator("input[type=radio]").nth(1).check()
        elif kind == "slider":
            fieldset.locator("input[type=range]").fill("73")
        elif kind == "magnitude":
            fieldset.locator("input[type=number]").fill("120")
    for i, box in enumerate(page.locator("input.me-score[name*='.']").all()):
        box.fill(str(50 + 10 * i))


def test_participant_completes_every_task_type(tmp_path: Path, page) -> None:  # type: ignore[no-untyped-def]
    study = all_types_study(tmp_path / "study", code="C0DE-777")
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        page.goto(f"{server.url}/?PROLIFIC_PID=5f0c0ffee0ddba11c0ffee00&STUDY_ID=s1&SESSION_ID=x1")
        assert "/consent" in page.url
        page.click("#continue")
        assert page.locator(".error").is_visible()  # consent not ticked
        page.check("#agree")
        page.click("#continue")
        assert "/instructions" in page.url
        page.click("#begin")
        shot_types: set[str] = set()
        seen_script = False
        answered: list[str] = []
        for _ in range(100):
            if "/task" not in page.url:
                break
            ctype = page.locator("fieldset.criterion").first.get_attribute("data-type")
            texts = page.locator(".output[data-position]").all_inner_texts()
            if SCRIPT in texts:
                seen_script = True
                page.screenshot(path=str(SHOTS / "escaped-script.png"), full_page=True)
            assert page.evaluate("window.__pwned") is None
            if ctype not in shot_types:
                shot_types.add(ctype)
                page.screenshot(path=str(SHOTS / f"task-{ctype}.png"), full_page=True)
            if ctype in ("magnitude", "rankme"):
                assert page.locator("#standard .modulus").inner_text() == "100"
            assert "baseline" not in page.content() and "candidate" not in page.content()
            progress = page.locator("#progress").inner_text()
            assert f"of {26}" in progress, progress
            _answer(page, answered)
            page.click("#submit")
            page.wait_for_load_state()
        assert "/done" in page.url
        assert page.locator("#completion-code").inner_text() == "C0DE-777"
        assert page.locator("#completion-link").get_attribute("href").endswith("cc=C0DE-777")
        page.screenshot(path=str(SHOTS / "done.png"))
        assert shot_types == {"2afc", "likert", "magnitude", "rankme", "slider"}
        assert seen_script
        with httpx.Client(base_url=server.url) as c:
            stored = c.get("/api/v1/admin/judgements", headers={"authorization": f"Bearer {ADMIN}"}).json()
        assert len(stored) == 26
        slider = [j for j in stored if "adequacy" in j["values"]]
        assert all(j["values"]["adequacy"] == 73 for j in slider)
        rank = [j for j in stored if "overall" in j["values"]]
        assert rank and all(j["values"]["overall"] == [50, 60, 70] for j in rank)
        # resume: a new tab with the same cookie lands on the completion page
        page.goto(f"{server.url}/task")
        assert "/done" in page.url
        page.goto(f"{server.url}/admin?token={ADMIN}")
        assert page.locator("#participants").inner_text().count("5f0c0ffee0ddba11c0ffee00") == 1
        page.screenshot(path=str(SHOTS / "admin.png"), full_page=True)
    finally:
        server.stop()


def test_magnitude_warning_when_every_score_equals_the_modulus(tmp_path: Path, page) -> None:  # type: ignore[no-untyped-def]
    study = all_types_study(tmp_path / "study")
    server = ServerProcess(study.root, None).start()
    try:
        page.goto(f"{server.url}/?PROLIFIC_PID=M1&STUDY_ID=s1&SESSION_ID=x1")  # the study takes Prolific entries only
        page.check("#agree")
        page.click("#continue")
        page.click("#begin")
        for _ in range(30):
            if page.locator("fieldset.criterion").first.get_attribute("data-type") == "magnitude":
                break
            _answer(page, [])
            page.click("#submit")
            page.wait_for_load_state()
        page.locator("fieldset.criterion input[type=number]").fill("100")
        url = page.url
        page.click("#submit")
        assert page.locator("#me-warning").is_visible() and page.url == url
        page.screenshot(path=str(SHOTS / "magnitude-warning.png"))
        page.click("#submit")  # confirmed: submitted
        page.wait_for_load_state()
        assert not page.locator("#me-warning").is_visible()
    finally:
        server.stop()
