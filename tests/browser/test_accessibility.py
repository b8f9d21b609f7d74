"""Every participant page and the admin page pass axe-core (0 serious or critical violations) at 1280 px
and 390 px, no page scrolls sideways, and at 390 px a 5-point scale fits one row and RankME puts its
question above its stacked outputs; the whole flow works with the keyboard alone (issue 12)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.axe import severe_violations
from tests.browser.test_participant import ARGS, CHROMIUM, SHOTS
from tests.integration.server.server import ADMIN, ServerProcess
from tests.integration.server.studies import all_types_study, rendering_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
WIDTHS = (1280, 390)


@pytest.fixture
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _check(page: Any, name: str, failures: list[str]) -> None:
    for v in severe_violations(page):
        failures.append(f"{name}: {v['impact']} {v['id']} ({v['help']}) at {v['targets']}")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    if overflow > 0:
        failures.append(f"{name}: the page scrolls sideways by {overflow} px")


def _answer(page: Any) -> None:
    for fieldset in page.locator("fieldset.criterion").all():
        kind = fieldset.get_attribute("data-type")
        if kind in ("2afc", "likert"):
            fieldset.locator("input[type=radio]").nth(1).check()
        elif kind == "slider":
            fieldset.locator("input[type=range]").fill("73")
        elif kind == "magnitude":
            fieldset.locator("input[type=number]").fill("120")
    for i, box in enumerate(page.locator("input.me-score").all()):
        box.fill(str(50 + 10 * i))


def _phone_layout(page: Any, kind: str, failures: list[str]) -> None:
    if kind == "likert":
        tops = page.locator("fieldset[data-type=likert] .scale input[type=radio]").evaluate_all(
            "els => els.map(e => Math.round(e.getBoundingClientRect().top))")
        if len(set(tops)) != 1:
            failures.append(f"likert at 390 px: the {len(tops)} points are on {len(set(tops))} rows")
    if kind == "rankme":
        legend = page.locator("fieldset[data-type=rankme] legend").bounding_box()
        cards = [c.bounding_box() for c in page.locator("fieldset[data-type=rankme] .output-card").all()]
        if not all(legend["y"] < c["y"] for c in cards):
            failures.append("rankme at 390 px: the question is not above the outputs")
        if len({round(c["x"]) for c in cards}) != 1 or sorted(c["y"] for c in cards) != [c["y"] for c in cards]:
            failures.append("rankme at 390 px: the outputs are not stacked")


@pytest.mark.parametrize("width", WIDTHS)
def test_axe_and_layout_on_every_page(tmp_path: Path, browser: Any, width: int) -> None:
    study = all_types_study(tmp_path / "study")
    server = ServerProcess(study.root, None).start()
    failures: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        page = browser.new_context(viewport={"width": width, "height": 800}).new_page()
        page.goto(f"{server.url}/")
        _check(page, "entry", failures)
        page.goto(f"{server.url}/?PROLIFIC_PID=A{width}&STUDY_ID=s1&SESSION_ID=x1")
        page.click("#continue")  # not ticked: the consent page with its error
        _check(page, "consent (error)", failures)
        page.check("#agree")
        page.click("#continue")
        _check(page, "instructions", failures)
        page.click("#begin")
        seen: set[str] = set()
        for _ in range(60):
            if "/task" not in page.url:
                break
            kind = page.locator("fieldset.criterion").first.get_attribute("data-type")
            if kind not in seen:
                seen.add(kind)
                _check(page, f"task {kind}", failures)
                page.screenshot(path=str(SHOTS / f"task-{kind}-{width}.png"), full_page=True)
                if width == 390:
                    _phone_layout(page, kind, failures)
            _answer(page)
            page.click("#submit")
            page.wait_for_load_state()
        assert seen == {"2afc", "likert", "magnitude", "rankme", "slider"}
        assert "/done" in page.url
        page.click("#stay")  # the timed return to the platform can be stopped
        _check(page, "done", failures)
        page.goto(f"{server.url}/no-such-page")
        _check(page, "error", failures)
        page.goto(f"{server.url}/admin?token={ADMIN}")
        _check(page, "admin", failures)
    finally:
        server.stop()
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("language", ["en", "ar"])
def test_axe_on_markdown_and_conversation_outputs(tmp_path: Path, browser: Any, language: str) -> None:
    study = rendering_study(tmp_path / "study", language=language)
    server = ServerProcess(study.root, None).start()
    failures: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for width in WIDTHS:
            page = browser.new_context(viewport={"width": width, "height": 800}).new_page()
            page.goto(f"{server.url}/?participant_id=M{width}")
            page.goto(f"{server.url}/task")
            _check(page, f"{language} markdown task at {width}", failures)
            page.screenshot(path=str(SHOTS / f"task-markdown-{language}-{width}.png"), full_page=True)
    finally:
        server.stop()
    assert not failures, "\n".join(failures)


def test_keyboard_only_flow(tmp_path: Path, browser: Any) -> None:
    """Consent, instructions and every task type with Tab, Space, arrow keys, digits and Enter only."""
    study = all_types_study(tmp_path / "study")
    server = ServerProcess(study.root, None).start()
    try:
        page = browser.new_context(viewport={"width": 390, "height": 800}).new_page()
        page.goto(f"{server.url}/?PROLIFIC_PID=K1&STUDY_ID=s1&SESSION_ID=x1")
        _tab_to(page, "#agree")
        page.keyboard.press("Space")
        _tab_to(page, "#continue")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "/instructions" in page.url
        _tab_to(page, "#begin")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "/task" in page.url
        for _ in range(60):
            if "/task" not in page.url:
                break
            url_before, progress = page.url, page.locator("#progress").inner_text()
            _fill_by_keyboard(page)
            page.wait_for_load_state()
            assert "/done" in page.url or page.locator("#progress").inner_text() != progress, f"stuck at {url_before}"
        assert "/done" in page.url
        with httpx.Client(base_url=server.url) as c:
            stored = c.get("/api/v1/admin/judgements", headers={"authorization": f"Bearer {ADMIN}"}).json()
        assert len(stored) == 26
    finally:
        server.stop()


def _active(page: Any) -> dict[str, Any]:
    return page.evaluate("""() => { const e = document.activeElement;
        return {id: e.id, tag: e.tagName, type: e.type || '', name: e.name || '', value: e.value ?? '',
                cls: e.className || '', checked: !!e.checked}; }""")


def _tab_to(page: Any, selector: str, limit: int = 60) -> None:
    target = page.locator(selector)
    for _ in range(limit):
        page.keyboard.press("Tab")
        if target.evaluate("e => e === document.activeElement"):
            return
    raise AssertionError(f"{selector} cannot be reached with Tab")


def _fill_by_keyboard(page: Any, limit: int = 80) -> None:
    """Tab through the task form; answer each control as a keyboard user would; press Enter on Submit."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        e = _active(page)
        if e["type"] == "radio" and not e["checked"]:
            page.keyboard.press("Space")  # checks the focused (first) option of the group
        elif e["type"] == "range":
            page.keyboard.press("ArrowRight")  # moves the slider: the number box gets its value
        elif e["type"] == "number" and e["value"] == "":
            page.keyboard.type("70")
        elif e["id"] == "submit":
            with page.expect_navigation():
                page.keyboard.press("Enter")
            return
    raise AssertionError("the Submit button cannot be reached with Tab")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_task_page_is_shaped_by_the_protocol(tmp_path: Path, browser: Any, width: int) -> None:
    """presentation.input_heading, input_font and output_labels at 1280 and 390 px: axe clean, no sideways scroll,
    a long question's legend inside its box, the input in the page's font."""
    from tests.integration.server.studies import shaped_study

    study = shaped_study(tmp_path / "study")
    server = ServerProcess(study.root, None).start()
    failures: list[str] = []
    seen: set[str] = set()
    try:
        page = browser.new_context(viewport={"width": width, "height": 800}).new_page()
        page.goto(f"{server.url}/?participant_id=S{width}")
        page.goto(f"{server.url}/task")
        for _ in range(12):
            if "/task" not in page.url:
                break
            kind = page.locator("fieldset.criterion").first.get_attribute("data-type")
            headings = page.locator("section.card h2").all_inner_texts()
            assert "Article" in headings and "Input" not in headings
            font = page.locator("#input").evaluate("e => getComputedStyle(e).fontFamily")
            assert "monospace" not in font, font
            labels = page.locator(".output-card h2").all_inner_texts()
            assert labels == (["Summary A"] if kind == "likert" else ["Summary A", "Summary B"]), labels
            box, legend = (page.locator("fieldset.criterion").first.bounding_box(),
                           page.locator("fieldset.criterion legend").first.bounding_box())
            if legend["x"] + legend["width"] > box["x"] + box["width"] + 0.5:
                failures.append(f"{kind} at {width} px: the legend runs across its box")
            if kind not in seen:
                seen.add(kind)
                _check(page, f"shaped {kind} at {width}", failures)
                page.screenshot(path=str(SHOTS / f"task-shaped-{kind}-{width}.png"), full_page=True)
            _answer(page)
            page.click("#submit")
            page.wait_for_load_state()
        assert seen == {"2afc", "likert"}
    finally:
        server.stop()
    assert not failures, "\n".join(failures)
