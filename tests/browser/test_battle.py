"""An arena battle in Debian Chromium: the two anonymous answers, a vote from the keyboard alone, the models named
after the vote (``arena.reveal``), each page axe-clean (0 serious or critical violations) at 1280 and 390 px with no
sideways scroll."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.test_accessibility import WIDTHS, _check, browser  # noqa: F401 (the fixture)
from tests.browser.test_participant import SHOTS
from tests.integration.server.server import ADMIN, ServerProcess
from tests.integration.server.studies import ARENA_MODELS, arena_study

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_a_battle_is_voted_with_the_keyboard_and_axe_clean(tmp_path: Path, browser: Any, shared_data: Path) -> None:  # noqa: F811
    study = arena_study(tmp_path / "arena", shared_data / "arena", per_participant=4, arena="arena: {reveal: true}\n")
    failures: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    with ServerProcess(study.root, None) as server:
        for width in WIDTHS:
            page = browser.new_context(viewport={"width": width, "height": 800}).new_page()
            page.goto(f"{server.url}/?participant_id=K{width}")
            page.goto(f"{server.url}/task")
            assert page.locator("fieldset[data-type=battle] input[type=radio]").count() == 4
            assert page.locator(".output-card").count() == 2
            text = page.inner_text("main")
            assert not any(m in text for m in ARENA_MODELS)
            _check(page, f"battle at {width}", failures)
            page.screenshot(path=str(SHOTS / f"task-battle-{width}.png"), full_page=True)
            first = page.input_value("input[name=assignment_id]")
            page.keyboard.press("x")  # both bad, from the keyboard
            assert page.locator("input[name=vote][value=both-bad]").is_checked()
            assert page.evaluate("document.activeElement.value") == "both-bad"
            page.keyboard.press("2")
            assert page.locator("input[name=vote][value=B]").is_checked()
            page.keyboard.press("Enter")  # submits the form: the vote is stored, then the models are named
            page.wait_for_url("**/reveal?assignment=*")
            assert "You voted: B is better." in page.inner_text("#your-vote")
            names = page.locator(".model-name").all_inner_texts()
            assert len(names) == 2 and set(names) <= set(ARENA_MODELS) and names[0] != names[1]
            _check(page, f"reveal at {width}", failures)
            page.screenshot(path=str(SHOTS / f"reveal-battle-{width}.png"), full_page=True)
            page.locator("#next").focus()  # the next battle, from the keyboard
            page.keyboard.press("Enter")
            page.wait_for_url("**/task")
            assert page.input_value("input[name=assignment_id]") != first
    assert not failures, "\n".join(failures)


def test_the_admin_leaderboard_of_a_battle_criterion_is_axe_clean(tmp_path: Path, browser: Any,  # noqa: F811
                                                                  shared_data: Path) -> None:
    """The admin page's leaderboard (scores, rank sets, votes per pair, decision) of three models after 57 votes,
    axe-clean at 1280 and 390 px with no sideways scroll (its wide tables scroll inside their region)."""
    study = arena_study(tmp_path / "arena", shared_data / "arena", per_participant=19)
    failures: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    with ServerProcess(study.root, None) as server, httpx.Client(base_url=server.url) as c:
        for p in range(3):
            h = {"authorization": f"Bearer {c.post('/api/v1/enter', json={'participant_id': f'L{p}'}).json()['token']}"}
            n = 0
            while (r := c.get("/api/v1/next", headers=h)).status_code == 200:
                a = r.json()
                r = c.post("/api/v1/judgements", headers=h, json={"assignment_id": a["assignment_id"],
                           "idempotency_key": f"k-{a['assignment_id']}", "values": {"vote": "AB"[n % 2] if n % 7 else "tie"}})
                assert r.status_code == 201, r.text
                n += 1
        for width in WIDTHS:
            page = browser.new_context(viewport={"width": width, "height": 800}).new_page()
            page.goto(f"{server.url}/admin?token={ADMIN}")
            assert page.locator("#leaderboard-vote table.arena-board tr[data-system]").count() == len(ARENA_MODELS)
            assert page.locator("#pair-votes-vote tr[data-system]").count() == len(ARENA_MODELS)
            assert page.locator("#decision-vote").count() == 1
            _check(page, f"admin leaderboard at {width}", failures)
            page.locator("#leaderboard-vote").screenshot(path=str(SHOTS / f"admin-leaderboard-{width}.png"))
    assert not failures, "\n".join(failures)
