"""Report figures draw Chinese and Arabic system names with a font that has their glyphs, with no warning."""

from __future__ import annotations

import logging

import pytest

from humeval.report.figures import distribution_figure, ranking_figure
from humeval.report.fonts import BASE, _charmap, _fonts, font_families

NAMES = ["系统甲", "نظام ب", "Système C"]


def test_families_cover_the_characters() -> None:
    families = font_families(NAMES)
    assert families[0] == BASE and font_families(["plain ASCII", "Système"]) == [BASE]
    if len(families) == 1:
        pytest.fail("no installed font has Chinese glyphs: apt-get install fonts-wqy-microhei (python make.py does)")
    by_name = dict(_fonts())  # the file each family is drawn from (its regular face; an oblique one may lack Arabic)
    covered = set().union(*(_charmap(by_name[f]) for f in families))
    assert {ord(c) for name in NAMES for c in name if not c.isspace()} <= covered


def test_figures_with_cjk_and_arabic_names_warn_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="matplotlib"):  # warnings are errors (pytest config)
        distribution_figure({n: {"1": 2, "2": 3} for n in NAMES}, "质量 / جودة")
        ranking_figure([{"system": n, "estimate": 0.5 + i / 10, "ci_low": 0.4, "ci_high": 0.8} for i, n in enumerate(NAMES)],
                       "质量", "score")
    assert not [r for r in caplog.records if "Glyph" in r.getMessage()]
