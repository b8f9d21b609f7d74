"""The task form in Chromium: a slider has no value until it is moved, magnitude scores are positive
in the browser as on the server, and a form the server refuses comes back with every answer given."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.browser.test_participant import SHOTS, page  # noqa: F401  (the Chromium page fixture)
from tests.integration.server.server import ADMIN, ServerProcess
from tests.integration.server.test_entry import RATINGS, make_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def _stored(server: ServerProcess) -> list[dict]:
    with httpx.Client(base_url=server.url) as c:
        return c.get("/api/v1/admin/judgements", headers={"authorization": f"Bearer {ADMIN}"}).json()


def test_slider_and_magnitude_constraints_and_answers_kept(tmp_path: Path, page) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    study = make_study(tmp_path / "study", criteria=RATINGS, setup="joint")
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        page.goto(f"{server.url}/?participant_id=B1")
        assert "/task" in page.url
        assert "internal-study-name-7f3" not in page.content() and "A study of restaurant texts" in page.title()
        slider = page.locator("fieldset[data-type=slider]")
        box = slider.locator("input[type=number]")
        assert box.input_value() == "" and "untouched" in slider.locator("input[type=range]").get_attribute("class")
        page.locator("fieldset[data-type=likert] input[type=radio]").nth(3).check()
        page.locator("fieldset[data-type=magnitude] input[type=number]").fill("120")
        url = page.url
        page.click("#submit")  # the slider was never touched: the browser refuses, nothing is sent
        assert page.url == url and box.evaluate("e => !e.validity.valid") and _stored(server) == []
        magnitude = page.locator("fieldset[data-type=magnitude] input[type=number]")
        magnitude.fill("0")  # zero is not a positive number: refused in the browser too
        slider.locator("input[type=range]").fill("80")
        assert box.input_value() == "80" and "untouched" not in slider.locator("input[type=range]").get_attribute("class")
        assert magnitude.evaluate("e => !e.validity.valid")
        page.click("#submit")
        assert page.url == url and _stored(server) == []
        # a form the server refuses (browser checks switched off, as an old browser would) keeps every answer
        page.evaluate("document.getElementById('task-form').noValidate = true")
        page.click("#submit")
        page.wait_for_load_state()
        assert page.locator("#error").is_visible() and "How natural is it?" in page.locator("#error").inner_text()  # the question, not the internal name
        page.screenshot(path=str(SHOTS / "refused-form-keeps-answers.png"), full_page=True)
        assert page.locator("fieldset[data-type=likert] input[type=radio]").nth(3).is_checked()
        assert page.locator("fieldset[data-type=slider] input[type=number]").input_value() == "80"
        assert page.locator("fieldset[data-type=slider] input[type=range]").input_value() == "80"
        assert page.locator("fieldset[data-type=magnitude] input[type=number]").input_value() == "0"
        page.locator("fieldset[data-type=magnitude] input[type=number]").fill("150")
        page.click("#submit")
        page.wait_for_load_state()
        stored = _stored(server)
        assert len(stored) == 1 and stored[0]["values"] == {"fluency": 4, "adequacy": 80, "naturalness": 150}
    finally:
        server.stop()
