"""The report of an incomplete study in Chromium at a phone's and a desktop's width: the banner comes first, wide
tables scroll inside their own box, and the page is never wider than the screen."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from humeval.analysis.plan import analyze
from humeval.judgements.exclusion import EXCLUDED_COLUMNS
from humeval.report.build import build_report
from humeval.report.document import render_html
from tests.browser.axe import severe_violations
from tests.browser.test_participant import SHOTS, page  # noqa: F401  (the Chromium page fixture)
from tests.unit.analysis.conftest import make_protocol, rows

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def _incomplete_report(tmp_path: Path) -> Path:
    """A rating study with 4 answers per system of the 48 its design asks for, reported as the stage does."""
    protocol = make_protocol(analysis={"bootstrap": 200, "rankings": ["mean", "bootstrap"]})
    rng = np.random.default_rng(5)
    frame = rows([{"participant_id": f"p{p}", "item_id": f"i{i}", "system": s,
                   "value": float(np.clip(round({"A": 2, "B": 3, "C": 4}[s] + rng.normal()), 1, 5))}
                  for p in range(2) for i in range(2) for s in "ABC"])
    results = analyze(frame, pd.DataFrame(columns=EXCLUDED_COLUMNS), protocol, protocol_sha256="ab" * 32)
    collation = {"complete": False, "required_per_task": 2, "tasks": 72, "tasks_complete": 0, "tasks_decided": 0,
                 "tasks_incomplete": 72, "judgements_missing": 132, "invalid_rows": 0, "unknown_task_rows": 0}
    report = build_report(protocol, results, design={"tasks": 72}, collation=collation, exclusion=None)
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    return path


def test_report_fits_the_screen_and_opens_with_the_warning(tmp_path: Path, page) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    path = _incomplete_report(tmp_path)
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(path.as_uri())
        # the page is never wider than the screen: a wide table scrolls in its own box
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        boxes = page.locator("div.scroll")
        assert boxes.count() >= 3 and page.locator("table").count() == boxes.count()  # every table in a box
        if width == 390:  # the significance table (9 columns) is wider than a phone: it scrolls, the page does not
            assert any(b.evaluate("e => e.scrollWidth > e.clientWidth") for b in boxes.all())
        # the first thing after the title is the warning, above Key results
        first = page.locator("h1 + p")
        assert "banner" in (first.get_attribute("class") or "") and first.inner_text().startswith("INCOMPLETE")
        assert first.bounding_box()["y"] < page.locator("h2", has_text="Key results").bounding_box()["y"]
        assert severe_violations(page) == []
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"report-incomplete-{width}.png"), full_page=True)
