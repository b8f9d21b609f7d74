"""ESA in Chromium: spans marked by tap/click and by keyboard are stored as character offsets into the
text shown; the page passes axe-core at 1280 and 390 px and does not scroll sideways."""

from __future__ import annotations

import json
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


_MARKDOWN = "Use **slicing**: `xs[::-1]` returns a reversed copy.\n\n- keeps the original list\n- works on strings too"
_CHAT = json.dumps([{"role": "user", "content": "How do I reverse a list in Python?"},
                    {"role": "assistant", "content": "Use **slicing**: `xs[::-1]`.\n\n```python\nprint([1, 2, 3][::-1])\n```"}])
_LIKERT = '  - {name: helpful, type: likert, question: "How helpful is the answer?", points: 5}\n'


def _select(page: Any, first: int, last: int, from_block: bool = False) -> None:
    """Select with the browser's text selection from the start of word ``first`` (or of its paragraph, an
    element between words) to the end of word ``last``."""
    page.evaluate("""([first, last, fromBlock]) => {
        const toks = document.querySelectorAll('.esa-text .tok');
        const r = document.createRange();
        if (fromBlock) { r.setStart(toks[first].closest('p'), 0); } else { r.setStart(toks[first].firstChild, 0); }
        r.setEnd(toks[last].firstChild, toks[last].firstChild.length);
        const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(r);
    }""", [first, last, from_block])


def test_esa_on_rendered_markdown_and_chat_with_a_joint_likert(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    # item-0's outputs are Markdown, item-1's a chat; a Likert criterion shares the page (setup: joint)
    rows = [{"item_id": f"item-{i}", "system": s, "output": _MARKDOWN if i == 0 else _CHAT,
             "format": "markdown" if i == 0 else "conversation", "slots": 1}
            for i in range(2) for s in ("baseline", "candidate", "reference")]
    study = esa_study(tmp_path / "esa", items=2, per_item=2, per_participant=6, outputs=rows, setup="joint",
                      criteria_extra=_LIKERT)
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for width in (1280, 390):
            page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
            page.goto(f"{server.url}/?participant_id=R{width}")
            page.goto(f"{server.url}/task")
            expected: list[tuple[str, list[str]]] = []  # per page: the source, the texts marked
            seen: set[str] = set()
            while len(seen) < 2:
                out = page.locator(".esa-text")
                fmt = "markdown" if out.locator("strong").count() and not out.locator(".turn").count() else "chat"
                shown = out.inner_text()
                assert "**" not in shown and '"role"' not in shown  # rendered, not the source
                assert page.locator("fieldset[data-type=likert]").count() == 1  # the joint page ...
                assert page.locator(".output").count() == 1  # ... rates the one rendered output
                toks = out.locator(".tok")
                words = [t.strip() for t in toks.all_inner_texts()]
                if fmt not in seen:
                    assert not severe_violations(page)
                    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
                    slicing = words.index("slicing")
                    if fmt == "markdown":
                        _select(page, 0, slicing, from_block=True)  # "Use slicing", across the bold markup
                        page.click(".esa-mark[data-severity=major]")
                        toks.nth(words.index("reversed")).click()  # one word by tap
                        page.click(".esa-mark[data-severity=minor]")
                        expected.append((_MARKDOWN, ["Use **slicing", "reversed"]))
                    else:
                        toks.nth(slicing).click()  # in the assistant's turn
                        page.click(".esa-mark[data-severity=minor]")
                        last = len(words) - 1  # the last word of the code block: "print([1, 2, 3][::-1])" ends with ")"
                        _select(page, words.index("print"), last)
                        page.click(".esa-mark[data-severity=major]")
                        expected.append((_CHAT, ["slicing", "print([1, 2, 3][::-1])"]))
                    assert page.locator(".esa-list li").count() == 2
                    assert page.evaluate("CSS.highlights.get('esa-minor').size") == 1
                    page.fill("input[name='quality.score']", "70")
                    page.locator("fieldset[data-type=likert] input[type=radio]").nth(3).check()
                    page.screenshot(path=str(SHOTS / f"task-esa-{fmt}-{width}.png"))
                    seen.add(fmt)
                else:
                    expected.append(("", []))
                    page.fill("input[name='quality.score']", "50")
                    page.locator("fieldset[data-type=likert] input[type=radio]").nth(1).check()
                page.click("#submit")
                page.wait_for_load_state()
            judgements = [j for j in _stored(server) if j["participant_id"] == f"R{width}"]
            assert len(judgements) == len(expected)
            by_order = sorted(judgements, key=lambda j: j["submitted_at"])
            for (source, marked), j in zip(expected, by_order, strict=True):
                if not source:
                    continue
                spans = j["values"]["quality"]["spans"]
                got = [source[sp["start"]:sp["end"]] for sp in spans]
                if source is _CHAT:  # offsets into the JSON: the slice is the marked text, JSON-escaped
                    got = [json.loads(f'"{g}"') for g in got]
                assert got == marked
                assert j["values"]["helpful"] == 4
    finally:
        server.stop()
