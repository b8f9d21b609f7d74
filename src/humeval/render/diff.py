"""Word-level differences between two outputs shown side by side.

Tokens are words and the whitespace between them; the longest matching blocks
(:class:`difflib.SequenceMatcher`, no junk heuristic) are kept as they are and every other
token is wrapped in ``<mark class="diff">``. Used for plain-text outputs only: the
difference of two Markdown documents is not a difference of what the reader sees.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from markupsafe import Markup, escape

__all__ = ["word_diff"]

_TOKENS = re.compile(r"\s+|[^\s]+")


def _marked(tokens: list[str]) -> str:
    return "".join(str(escape(t)) if t.isspace() else f'<mark class="diff">{escape(t)}</mark>' for t in tokens)


def word_diff(left: str, right: str) -> tuple[Markup, Markup]:
    """``left`` and ``right`` as escaped HTML with the words not shared by both marked."""
    a, b = _TOKENS.findall(left), _TOKENS.findall(right)
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    out_a: list[str] = []
    out_b: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out_a.append(str(escape("".join(a[i1:i2]))))
            out_b.append(str(escape("".join(b[j1:j2]))))
        else:
            out_a.append(_marked(a[i1:i2]))
            out_b.append(_marked(b[j1:j2]))
    return Markup("".join(out_a)), Markup("".join(out_b))
