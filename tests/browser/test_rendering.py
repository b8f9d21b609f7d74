"""Markdown and conversation outputs in Chromium: bold, highlighted code and a table are shown,
raw HTML is text and never runs, a conversation is a chat (issue 12 acceptance)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.test_participant import SHOTS, page  # noqa: F401  (the Chromium page fixture)
from tests.integration.server.server import ServerProcess
from tests.integration.server.studies import rendering_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def test_markdown_and_conversation_outputs(tmp_path: Path, page) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    study = rendering_study(tmp_path / "study", language="en")
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        page.goto(f"{server.url}/?participant_id=R1")
        page.goto(f"{server.url}/task")
        md = page.locator(".output-markdown")
        chat = page.locator(".output-conversation")
        assert md.count() == 1 and chat.count() == 1
        assert md.locator("strong").inner_text() == "bold"
        assert md.locator("pre.hl code.language-python span.k").first.inner_text() == "def"  # highlighted keyword
        assert md.locator("pre.hl span.k").first.evaluate("e => getComputedStyle(e).fontWeight") == "700"
        assert md.locator("table th").all_inner_texts() == ["system", "score"]
        text = md.inner_text()
        assert "<script>window.__pwned = 1</script>" in text and '<img src=x onerror="window.__pwned = 2">' in text
        assert md.locator("script, img").count() == 0
        assert page.evaluate("window.__pwned") is None
        turns = chat.locator(".turn")
        assert turns.count() == 2 and "turn-user" in (turns.nth(0).get_attribute("class") or "")
        assert chat.locator(".turn-assistant strong").inner_text() == "4"
        assert turns.nth(0).get_attribute("dir") == "auto" and md.get_attribute("dir") == "auto"
        page.screenshot(path=str(SHOTS / "markdown-conversation.png"), full_page=True)
    finally:
        server.stop()
