"""MQM in Chromium: errors marked by tap/click and by keyboard only, each with the category chosen in the list and
its severity, are stored as character offsets into the text shown; the page passes axe-core at 1280 and 390 px
and does not scroll sideways."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from humeval.templates import generate_outputs
from tests.browser.axe import severe_violations
from tests.browser.test_accessibility import browser  # noqa: F401  (the Chromium fixture)
from tests.browser.test_participant import SHOTS
from tests.integration.server.server import ADMIN, ServerProcess
from tests.integration.test_mqm import mqm_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _stored(server: ServerProcess) -> list[dict]:
    with httpx.Client(base_url=server.url) as c:
        return c.get("/api/v1/admin/judgements", headers={"authorization": f"Bearer {ADMIN}"}).json()


def test_mqm_marking_by_click_and_keyboard(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    study = mqm_study(tmp_path / "mqm", generate_outputs(2, seed=6), per_participant=6)
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for width in (1280, 390):
            page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
            page.goto(f"{server.url}/?participant_id=M{width}")
            page.goto(f"{server.url}/task")
            assert not severe_violations(page)
            assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
            assert page.locator(".esa-mark").count() == 2  # minor and major: WMT's severities by default
            text = page.locator(".esa-text").inner_text()
            words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
            toks = page.locator(".esa-text .tok")
            # by tap/click: the first to the third word, category Fluency/Grammar, minor
            toks.nth(0).click()
            toks.nth(2).click()
            page.select_option(".esa-category", "Fluency/Grammar")
            page.click(".esa-mark[data-severity=minor]")
            # by keyboard only: the fourth and fifth words, the next category in the list by arrow key, major by Enter
            page.locator(".esa-text").focus()
            for _ in range(4):
                page.keyboard.press("ArrowRight")
            page.keyboard.press("Shift+ArrowRight")
            page.locator(".esa-category").focus()
            page.keyboard.press("ArrowDown")  # Fluency/Grammar -> Fluency/Spelling
            page.locator(".esa-mark[data-severity=major]").focus()
            page.keyboard.press("Enter")
            items = page.locator(".esa-list li")
            assert items.count() == 2
            assert "(Fluency/Grammar)" in items.nth(0).inner_text() and "(Fluency/Spelling)" in items.nth(1).inner_text()
            assert not severe_violations(page)
            page.screenshot(path=str(SHOTS / f"task-mqm-{width}.png"), full_page=True)
            page.click("#submit")
            page.wait_for_load_state()
            judgement = [j for j in _stored(server) if j["participant_id"] == f"M{width}"][0]
            assert judgement["values"]["quality"]["spans"] == [
                {"start": words[0][0], "end": words[2][1], "severity": "minor", "category": "Fluency/Grammar"},
                {"start": words[3][0], "end": words[4][1], "severity": "major", "category": "Fluency/Spelling"}]
    finally:
        server.stop()
