"""Details of the task page in Chromium at 1280 and 390 px: an untouched slider shows a neutral track,
a 7-point scale never breaks a word of its labels, a refused answer is explained at its field, and no
request of the participant's pages ends in a 404 (the icon)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.browser.axe import severe_violations
from tests.browser.test_accessibility import browser  # noqa: F401  (the Chromium fixture)
from tests.browser.test_participant import SHOTS
from tests.integration.server.server import ServerProcess
from tests.integration.server.test_entry import make_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

SEVEN = ["extremely bad", "very bad", "bad", "neither good nor bad", "good", "very good", "extremely good"]
CRITERIA = f"""  - {{name: fluency, type: likert, question: "How fluent is it?", points: 7, labels: {SEVEN}}}
  - {{name: adequacy, type: slider, question: "How adequate is it?", min: 0, max: 100, low_label: poor, high_label: perfect}}
  - name: naturalness
    type: magnitude
    question: "How natural is it?"
    standard: {{text: Aromi is a restaurant.}}"""

#: the words of the scale's labels that the page breaks over two lines
_BROKEN_WORDS = """() => {
  const broken = [];
  document.querySelectorAll('.scale .label').forEach((label) => {
    const node = label.firstChild, re = /\\S+/g;
    let m;
    while ((m = re.exec(node.data))) {
      const r = document.createRange();
      r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      const tops = new Set(Array.from(r.getClientRects()).filter((x) => x.width > 0).map((x) => Math.round(x.top)));
      if (tops.size > 1) { broken.push(m[0]); }
    }
  });
  return broken;
}"""


def _track(page: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The slider track's colour a fifth from its start and a twentieth from its end."""
    shot = Image.open(io.BytesIO(page.locator(".slider-input").screenshot())).convert("RGB")
    y = shot.height // 2
    return shot.getpixel((shot.width // 5, y)), shot.getpixel((shot.width * 19 // 20, y))


def test_slider_scale_labels_field_errors_and_no_404(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    study = make_study(tmp_path / "study", criteria=CRITERIA, setup="joint", per_participant=2)
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for width in (1280, 390):
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            missing: list[str] = []
            page.on("response", lambda r, missing=missing: missing.append(r.url) if r.status == 404 else None)
            page.goto(f"{server.url}/")
            page.goto(f"{server.url}/?participant_id=D{width}")
            assert "/task" in page.url
            # an untouched slider: one neutral colour over the whole track; set, it is filled up to the thumb
            start, end = _track(page)
            assert start == end, (start, end)
            page.locator(".slider-input").fill("80")
            start, end = _track(page)
            assert start != end and sum(start) < sum(end)  # dark fill before the thumb, the neutral track after
            # the 7-point labels: no word broken over two lines, no sideways scrolling
            assert page.evaluate(_BROKEN_WORDS) == []
            assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
            stacked = "stacked" in (page.locator(".scale").get_attribute("class") or "")
            assert stacked == (width == 390)  # a row where the labels fit, one point a row where they do not
            page.locator("fieldset[data-type=likert] input[type=radio]").nth(5).check()
            # a zero magnitude sent past the browser's check: the server's message is at the field
            page.locator("fieldset[data-type=magnitude] input[type=number]").fill("0")
            page.evaluate("document.getElementById('task-form').noValidate = true")
            page.click("#submit")
            page.wait_for_load_state()
            message = page.locator("#problem-naturalness")
            assert message.is_visible() and "greater than 0" in message.inner_text()
            field, box = page.locator("#criterion-naturalness").bounding_box(), message.bounding_box()
            assert field is not None and box is not None
            assert field["y"] <= box["y"] and box["y"] + box["height"] <= field["y"] + field["height"]
            assert not severe_violations(page)
            page.screenshot(path=str(SHOTS / f"task-details-{width}.png"), full_page=True)
            assert missing == []
            context.close()
    finally:
        server.stop()
