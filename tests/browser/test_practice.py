"""Practice items in a browser (``design.practice``): the page says it is practice, shows the protocol's outputs in
its order, and after the answer shows the feedback (right or not, the answer expected, the explanation) in an
accessible page at 390 and 1280 px, in English and in German; Continue opens the next item, then the first task."""

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
from tests.browser.test_qualification import _answer, _enter
from tests.browser.test_sessions import _accessible
from tests.integration.server.server import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

EXPLAINED = "The first output is a grammatical sentence; the second is its words reversed."
PROTOCOL = """
version: 1
study: {{name: practice, seed: 5}}
data: {{files: [data/outputs.jsonl]}}
systems: [baseline, candidate]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?"}}
presentation: {{setup: separate, language: {language}}}
design:
  judgements_per_item: 1
  items_per_participant: 4
  counterbalancing: none
  practice:
    - {{criterion: quality, outputs: ["The cat sat on the mat.", "Mat the on sat cat the."], answer: A,
       explanation: "{explained}"}}
    - {{criterion: quality, outputs: ["Hello!", "Hi there!"], explanation: "Both greet; either answer is fine."}}
platform: {{kind: prolific, completion_code: C0DE-PRAC}}
"""


def _study(root: Path, language: str) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(20, seed=5))
    (root / "humeval.yaml").write_text(PROTOCOL.format(language=language, explained=EXPLAINED), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


@pytest.mark.parametrize("language", ["en", "de"])
def test_practice_shows_feedback_then_the_tasks(tmp_path: Path, browser: Any, language: str) -> None:  # noqa: F811
    study = _study(tmp_path / "study", language)
    server = ServerProcess(study.root, None).start()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for i, width in enumerate((1280, 390)):
            page = _enter(browser, server.url, f"{'P' * 23}{i}", width)
            assert page.locator("#practice").is_visible()
            outputs = page.locator(".output[data-position]").all_inner_texts()
            assert outputs == ["The cat sat on the mat.", "Mat the on sat cat the."]  # never shuffled
            _accessible(page, f"practice item at {width} ({language})")
            _answer(page, "B")
            assert "/feedback" in page.url, page.url
            verdict = page.locator("#verdict").inner_text()
            assert ("the answer we expected is A" if language == "en" else "Die erwartete Antwort ist A") in verdict
            assert page.locator("#explanation").inner_text().strip().endswith(EXPLAINED)
            _accessible(page, f"feedback at {width} ({language})")
            page.screenshot(path=str(SHOTS / f"practice-feedback-{language}-{width}.png"), full_page=True)
            page.click("#next")
            page.wait_for_load_state()
            assert page.locator("#practice").is_visible()  # the second item
            _answer(page, "A")
            assert "/feedback" in page.url and page.locator("#verdict").count() == 0  # it names no answer
            page.click("#next")
            page.wait_for_load_state()
            assert page.url.endswith("/task") and page.locator("#practice").count() == 0  # the first real task
    finally:
        server.stop()
