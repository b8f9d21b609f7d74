"""The qualification in a browser (``design.qualification_attempts: 2``): a participant who answers a qualification
check otherwise than it asks is shown it again with the reason, in an accessible page, and qualifies with the second
attempt; one who fails both attempts ends at once on the completion page with the screen-out code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from humeval.files import write_jsonl
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.browser.test_accessibility import browser  # noqa: F401 (the fixture)
from tests.browser.test_participant import SHOTS
from tests.browser.test_sessions import _accessible
from tests.integration.server.server import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CODE, SCREENOUT = "C0DE-QUAL", "SCREEN-QUAL"
PROTOCOL = f"""
version: 1
study: {{name: qualification, seed: 5}}
data: {{files: [data/outputs.jsonl]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?"}}
presentation: {{setup: separate}}
design: {{judgements_per_item: 1, items_per_participant: 6, counterbalancing: none, attention_checks: 2,
         qualification: 2, qualification_attempts: 2}}
stopping: {{rule: anytime, delta: 0.05, systems: [baseline, candidate], feed: judgement}}
exclusion:
  - {{rule: attention, max_failures: 0}}
platform: {{kind: prolific, completion_code: {CODE}, screenout_code: {SCREENOUT}}}
"""


def _study(root: Path) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(60, seed=5))
    (root / "humeval.yaml").write_text(PROTOCOL, encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


def _asked(page: Any) -> str:
    """The answer the check on the page asks for (its instruction names the output)."""
    text = page.locator(".output[data-position]").first.inner_text()
    assert "attention check" in text, text
    return "A" if "(A)" in text else "B"


def _answer(page: Any, choice: str) -> None:
    page.check(f"input[name=quality][value={choice}]")
    page.click("#submit")
    page.wait_for_load_state()


def _enter(browser: Any, url: str, pid: str, width: int = 1280) -> Any:  # noqa: F811
    page = browser.new_context(viewport={"width": width, "height": 800}).new_page()
    page.goto(f"{url}/?PROLIFIC_PID={pid}&STUDY_ID=s1&SESSION_ID=S-{pid[:4]}")
    if "/instructions" in page.url:
        page.click("#begin")
    assert "/task" in page.url, page.url
    return page


def test_a_failed_check_is_asked_again_and_two_failures_screen_out(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    study = _study(tmp_path / "study")
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for i, width in enumerate((1280, 390)):
            page = _enter(browser, server.url, f"{'Q' * 23}{i}", width)
            right = _asked(page)
            _answer(page, "B" if right == "A" else "A")
            assert "/task/again" in page.url, page.url
            assert "answer once more (1 attempt left)" in page.locator("#again").inner_text()
            assert _asked(page) == right  # the same check, shown again
            _accessible(page, f"second attempt at {width}")
            page.screenshot(path=str(SHOTS / f"qualification-again-{width}.png"), full_page=True)
            _answer(page, right)
            assert page.url.endswith("/task") and page.locator("#again").count() == 0
            _answer(page, _asked(page))  # the second check, as it asks: qualified
            assert "attention check" not in page.locator(".output[data-position]").first.inner_text()
            assert "/task" in page.url
        page = _enter(browser, server.url, "S" * 24, 390)
        right = _asked(page)
        _answer(page, "B" if right == "A" else "A")
        _answer(page, "B" if right == "A" else "A")  # the second attempt fails too
        _answer(page, _asked(page))  # the rest of the qualification, as it asks: screened out at once
        assert "/done" in page.url, page.url
        assert page.locator("#screened-out").is_visible()
        assert page.locator("#completion-code").inner_text() == SCREENOUT
        _accessible(page, "screen-out page")
        page.screenshot(path=str(SHOTS / "qualification-screened-out.png"), full_page=True)
    finally:
        server.stop()
