"""Fonts for the report figures, chosen at run time for the scripts in the labels.

matplotlib's default font (DejaVu Sans) has Latin, Greek, Cyrillic, Arabic and Hebrew letters
but no Chinese, Japanese or Korean; a system name in those scripts is drawn as empty boxes
with a "Glyph missing" warning per character. :func:`use_fonts` gives every text of a figure
a fallback list of font families: DejaVu Sans first, then, for the characters it lacks, the
installed fonts that cover them, fewest fonts first (greedy): matplotlib's font list, and the
system's font files when that list (a cache) predates a font's installation. Per
figure, never through ``rcParams``: the user's matplotlib settings are left alone.

Only characters that no installed font has still warn; on Debian ``fonts-wqy-microhei``
(or ``fonts-noto-cjk``) covers Chinese, Japanese and Korean (``make.py`` installs it with
Chromium). Joining Arabic letters and ordering right-to-left text is matplotlib's own text
layout (with matplotlib 3.11 Arabic system names were drawn joined, right to left; older
versions draw the letters unjoined).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from matplotlib import font_manager
from matplotlib.figure import Figure
from matplotlib.ft2font import FT2Font
from matplotlib.text import Text

__all__ = ["font_families", "use_fonts"]

BASE = "DejaVu Sans"


@cache
def _charmap(path: str) -> frozenset[int]:
    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError):
        return frozenset()


@cache
def _register_new_fonts() -> int:
    """Add the system's font files that matplotlib's font cache does not list yet (fonts installed
    after the cache was built); return how many were added. Done once per process, only when a
    label has characters that the known fonts lack."""
    known = {f.fname for f in font_manager.fontManager.ttflist}
    added = 0
    for path in font_manager.findSystemFonts():
        if path not in known and _charmap(path):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):
                continue
            added += 1
    if added:
        _fonts.cache_clear()
    return added


@cache
def _fonts() -> tuple[tuple[str, str], ...]:
    """(family, file) of every installed font matplotlib knows, regular weights first."""
    entries = sorted(font_manager.fontManager.ttflist, key=lambda f: (f.style != "normal", f.weight != 400, f.name))
    seen: dict[str, str] = {}
    for f in entries:
        seen.setdefault(f.name, f.fname)
    return tuple(seen.items())


def font_families(texts: Iterable[str]) -> list[str]:
    """The font families to draw ``texts`` with: :data:`BASE`, then fonts for the characters it lacks."""
    wanted = {ord(ch) for text in texts for ch in text if ord(ch) > 0x7F and not ch.isspace()}
    families = [BASE]
    fonts = dict(_fonts())
    if BASE in fonts:
        wanted -= _charmap(fonts[BASE])
    while wanted:
        best, covered = "", frozenset[int]()
        for family, path in fonts.items():
            if family in families or family.startswith("Last Resort"):  # its "glyphs" are boxes
                continue
            hit = _charmap(path) & wanted
            if len(hit) > len(covered):
                best, covered = family, frozenset(hit)
        if not covered and _register_new_fonts():
            fonts = dict(_fonts())
            continue
        if not covered:
            break  # no installed font has the rest: matplotlib warns about those characters
        families.append(best)
        wanted -= covered
    return families


def use_fonts(fig: Figure) -> None:
    """Give every text of ``fig`` the families that cover its characters (one list for the figure)."""
    texts = [t for t in fig.findobj(Text) if isinstance(t, Text)]
    families = font_families(t.get_text() for t in texts)
    if families == [BASE]:
        return
    for t in texts:
        t.set_fontfamily(families)
