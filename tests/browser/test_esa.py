"""ESA in Chromium: spans marked by tap/click and by keyboard are stored as character offsets into the
text shown; the page passes axe-core at 1280 and 390 px and does not scroll sideways."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.axe import severe_violations
from tests.browser.test_accessibility import browser  # noqa: F401  (the Chromium fixture)
from tests.browser.test_participant import SHOTS
from tests.integration.server.server import ADMIN, ServerProcess
from tests.integration.server.studies import esa_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _stored(server: ServerProcess) -> list[dict]:
    with httpx.Client(base_url=server.url) as c:
        return c.get("/api/v1/admin/judgements", headers={"authorization": f"Bearer {ADMIN}"}).json()


def test_esa_marking_by_click_and_keyboard(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    study = esa_study(tmp_path / "esa", items=2, per_item=2, per_participant=6)  # two lists: one per width
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for width in (1280, 390):
            page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
            page.goto(f"{server.url}/?participant_id=E{width}")
            page.goto(f"{server.url}/task")
            assert not severe_violations(page)
            assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
            text = page.locator(".esa-text").inner_text()
            toks = page.locator(".esa-text .tok")
            # by tap/click: first word, then third word -> one span over words 0..2, minor
            toks.nth(0).click()
            toks.nth(2).click()
            page.click(".esa-mark[data-severity=minor]")
            # by keyboard: focus the text, move to word 4, extend one word, mark major with Enter on the button
            page.locator(".esa-text").focus()
            for _ in range(4):
                page.keyboard.press("ArrowRight")
            page.keyboard.press("Shift+ArrowRight")
            page.locator(".esa-mark[data-severity=major]").focus()
            page.keyboard.press("Enter")
            assert page.locator(".esa-list li").count() == 2
            page.fill("input[name='quality.score']", "62")
            page.screenshot(path=str(SHOTS / f"task-esa-{width}.png"), full_page=True)
            page.click("#submit")
            page.wait_for_load_state()
            judgement = [j for j in _stored(server) if j["participant_id"] == f"E{width}"][0]
            spans = judgement["values"]["quality"]["spans"]
            assert judgement["values"]["quality"]["score"] == 62
            words = [(s, e) for s, e in _word_offsets(text)]
            assert spans == [{"start": words[0][0], "end": words[2][1], "severity": "minor"},
                             {"start": words[3][0], "end": words[4][1], "severity": "major"}]
    finally:
        server.stop()


def _word_offsets(text: str) -> list[tuple[int, int]]:
    import re

    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


_TEXT = "Le café 😀 était naïvement délicieux, wirklich schön."


def test_esa_marks_any_characters_by_selection(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    # a selection inside words (and across an emoji, one code point but two UTF-16 units) is stored exactly,
    # in code points as the server counts them
    rows = [{"item_id": f"item-{i}", "system": s, "output": _TEXT, "slots": 1}
            for i in range(2) for s in ("baseline", "candidate", "reference")]
    study = esa_study(tmp_path / "esa", items=2, per_item=1, per_participant=6, outputs=rows)
    server = ServerProcess(study.root, None).start()
    try:
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(f"{server.url}/?participant_id=SEL")
        page.goto(f"{server.url}/task")
        # select "fé 😀 ét" (from inside "café" to inside "était") as a user does with the mouse
        start, end = _TEXT.index("fé"), _TEXT.index("ait ")
        page.evaluate("""([start, end]) => {
            const text = document.querySelector('.esa-text');
            const at = (cp) => { for (const t of text.querySelectorAll('.tok')) {
                const s = Number(t.dataset.s), e = Number(t.dataset.e);
                if (cp >= s && cp <= e) { return [t.firstChild, Array.from(t.textContent).slice(0, cp - s).join('').length]; } } };
            const r = document.createRange(); r.setStart(...at(start)); r.setEnd(...at(end));
            const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(r);
        }""", [start, end])
        page.click(".esa-mark[data-severity=major]")  # a real click: the selection must survive it
        assert page.locator(".esa-list li").first.inner_text().startswith("\u201cfé 😀 ét\u201d")
        # a whole word by tap still works beside it
        page.locator(".esa-text .tok").last.click()
        page.click(".esa-mark[data-severity=minor]")
        assert page.evaluate("CSS.highlights.get('esa-major').size") == 1
        page.fill("input[name='quality.score']", "40")
        page.click("#submit")
        page.wait_for_load_state()
        spans = [j for j in _stored(server) if j["participant_id"] == "SEL"][0]["values"]["quality"]["spans"]
        assert spans == [{"start": start, "end": end, "severity": "major"},
                         {"start": _TEXT.index("schön."), "end": len(_TEXT), "severity": "minor"}]
        assert _TEXT[spans[0]["start"]:spans[0]["end"]] == "fé 😀 ét"
    finally:
        server.stop()
