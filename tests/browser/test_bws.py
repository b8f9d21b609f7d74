"""Best-worst scaling in Chromium: a radio group for the best and one for the worst output, answered by keyboard
alone and by click; the page passes axe-core at 1280 and 390 px and does not scroll sideways; the same output as best
and worst is refused beside the question and nothing is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.axe import severe_violations
from tests.browser.test_accessibility import browser  # noqa: F401  (the Chromium fixture)
from tests.browser.test_esa import _stored
from tests.browser.test_participant import SHOTS
from tests.integration.server.server import ServerProcess
from tests.integration.test_bws import bws_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_bws_by_keyboard_and_click(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    study = bws_study(tmp_path / "bws", items=2, per_item=1, per_participant=4)  # two lists: one per width
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for width in (1280, 390):
            page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
            page.goto(f"{server.url}/?participant_id=B{width}")
            page.goto(f"{server.url}/task")
            assert page.locator("input[name='quality.best']").count() == 3
            assert page.locator("input[name='quality.worst']").count() == 3
            assert not severe_violations(page)
            assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
            # the same output as best and worst: refused, nothing stored
            page.check("input[name='quality.best'][value='1']")
            page.check("input[name='quality.worst'][value='1']")
            page.click("#submit")
            page.wait_for_load_state()
            assert page.locator("#problem-quality").count() == 1
            assert not [j for j in _stored(server) if j["participant_id"] == f"B{width}"]
            assert not severe_violations(page)
            # by keyboard: focus the best group's first radio, arrow to the third; the worst group's first radio
            page.locator("input[name='quality.best']").first.focus()
            page.keyboard.press("Space")
            page.keyboard.press("ArrowDown")
            page.keyboard.press("ArrowDown")
            page.locator("input[name='quality.worst']").first.focus()
            page.keyboard.press("Space")
            assert page.locator("input[name='quality.best']:checked").get_attribute("value") == "2"
            assert page.locator("input[name='quality.worst']:checked").get_attribute("value") == "0"
            page.screenshot(path=str(SHOTS / f"task-bws-{width}.png"), full_page=True)
            page.click("#submit")
            page.wait_for_load_state()
            (judgement,) = [j for j in _stored(server) if j["participant_id"] == f"B{width}"]
            assert judgement["values"]["quality"] == {"best": 2, "worst": 0}
            # the next task by click
            page.click("input[name='quality.best'][value='0']")
            page.click("input[name='quality.worst'][value='2']")
            page.click("#submit")
            page.wait_for_load_state()
            values = [j["values"]["quality"] for j in _stored(server) if j["participant_id"] == f"B{width}"]
            assert {"best": 0, "worst": 2} in values and len(values) == 2
    finally:
        server.stop()
