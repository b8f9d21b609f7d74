"""A live battle in Debian Chromium through the real server: the two answers appear while they stream (recorded
LLMFAO answers in pieces of 40 characters, 0.6 s apart, so the streaming page lasts long enough to be checked on a
loaded machine), the vote is taken only once both are shown, then the models are named; the page axe-clean at 390
and 1280 px while streaming and after."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_accessibility import WIDTHS, _check, browser  # noqa: F401 (the fixture)
from tests.browser.test_participant import SHOTS
from tests.integration.server.server import ServerProcess
from tests.integration.server.studies import LIVE_MODELS, live_arena_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

STREAMING = ("document.getElementById('submit') && document.getElementById('submit').disabled && "
             "document.querySelector('.output[data-position=\"0\"]').textContent.length > 0")
STORED = "document.getElementById('submit') && !document.getElementById('submit').disabled"


def _until(page: Any, expression: str, seconds: float) -> None:
    """Poll ``expression`` (the pages' CSP allows no string eval, so no ``wait_for_function``)."""
    from playwright.sync_api import Error

    deadline = time.monotonic() + seconds
    while True:
        try:
            if page.evaluate(expression):
                return
        except Error:  # the page reloading (the answers stored): asked again on the new page
            pass
        assert time.monotonic() < deadline, f"not within {seconds} s: {expression}"
        page.wait_for_timeout(50)


def test_the_answers_stream_in_then_the_vote_and_the_reveal(tmp_path: Path, browser: Any, shared_data: Path) -> None:  # noqa: F811
    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=3, per_participant=3, reveal=True,
                             chunk_seconds=0.6)
    failures: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    with ServerProcess(study.root, None) as server:
        for width in WIDTHS:
            page = browser.new_context(viewport={"width": width, "height": 800}).new_page()
            page.goto(f"{server.url}/?participant_id=S{width}")
            page.goto(f"{server.url}/task")
            assert page.locator("#submit").is_disabled()
            # part of an answer is on the page while the vote is not open yet: streamed, not shown at the end
            _until(page, STREAMING, 20)
            _check(page, f"streaming battle at {width}", failures)
            page.screenshot(path=str(SHOTS / f"task-live-battle-{width}.png"), full_page=True)
            _until(page, STORED, 60)  # both stored, the page shown again from the store
            assert page.locator("#battle-status").count() == 0
            texts = page.locator(".output[data-position]").all_inner_texts()
            assert len(texts) == 2 and all(t.strip() for t in texts)
            assert not any(m in page.inner_text("main") for m in LIVE_MODELS)
            _check(page, f"streamed battle at {width}", failures)
            page.keyboard.press("t")  # a tie, from the keyboard
            page.keyboard.press("Enter")
            page.wait_for_url("**/reveal?assignment=*")
            assert "You voted: a tie." in page.inner_text("#your-vote")
            assert set(page.locator(".model-name").all_inner_texts()) <= set(LIVE_MODELS)
    assert not failures, "\n".join(failures)


def test_typing_a_prompt_then_the_answers_to_it_and_the_vote(tmp_path: Path, browser: Any, shared_data: Path) -> None:  # noqa: F811
    """The page asks for the prompt first (its limits shown, from the keyboard); a blocked one is refused beside the
    field; an accepted one (an LLMFAO prompt that is no item of the study) is answered by the models' recorded
    answers to it, then the vote."""
    import json

    study = live_arena_study(tmp_path / "live", shared_data / "arena", prompts=2, per_participant=2, spare=2,
                             prompt_rules="{typed: true, min_chars: 10, max_chars: 2000, blocklist: [forbidden]}")
    spare = [json.loads(line)["text"] for line in (study.root / "spare-prompts.jsonl").read_text().splitlines()]
    recorded = {(r["model"], r["prompt"]): r["output"]
                for r in map(json.loads, (study.root / "recorded.jsonl").read_text().splitlines())}
    failures: list[str] = []
    with ServerProcess(study.root, None) as server:
        for width, typed in zip(WIDTHS, spare, strict=False):
            page = browser.new_context(viewport={"width": width, "height": 800}).new_page()
            page.goto(f"{server.url}/?participant_id=P{width}")
            page.goto(f"{server.url}/task")
            assert "Between 10 and 2000 characters." in page.inner_text("#prompt-help")
            _check(page, f"prompt entry at {width}", failures)
            page.keyboard.press("Tab")
            while page.evaluate("document.activeElement.id") != "prompt":
                page.keyboard.press("Tab")
            page.keyboard.type("Please use a forbidden word")
            page.keyboard.press("Tab")
            page.keyboard.press("Enter")  # the button, from the keyboard
            page.wait_for_selector("#prompt-error")
            assert "cannot be used" in page.inner_text("#prompt-error")
            assert page.get_attribute("#prompt", "aria-invalid") == "true"
            _check(page, f"refused prompt at {width}", failures)
            page.fill("#prompt", typed)
            page.click("#prompt-submit")
            _until(page, STORED, 60)
            assert typed.strip() in page.inner_text("#input")
            texts = page.locator(".output[data-position]").all_inner_texts()
            answers = {recorded[(m, typed)].strip() for m in LIVE_MODELS if (m, typed) in recorded}
            assert len(texts) == 2 and all(t.strip() for t in texts)
            assert all(any(t.strip()[:40] in a for a in answers) for t in texts)
            _check(page, f"battle on a typed prompt at {width}", failures)
            page.keyboard.press("a")
            page.keyboard.press("Enter")
            page.wait_for_url("**/task")
    assert not failures, "\n".join(failures)
