"""Markable words for error spans (ESA) in rendered outputs, each mapped back to the output's source.

A participant marks errors on what they read: rendered Markdown, a chat. What is stored is a
span of character offsets (Python string indices, i.e. Unicode code points, end exclusive)
into the output's **source**, the text exactly as the data gives it: the Markdown source, or
the conversation's JSON. Source offsets stay meaningful when the renderer changes (a newer
Markdown parser, another stylesheet) and can be checked against the data file alone:
``output[start:end]`` is what was marked, with any markup inside it (``**slicing**``).

Each word shown (a run of non-space characters, or one CJK character) is wrapped in
``<span class="tok" data-s="S" data-e="E">``: ``[S, E)`` is where the word is in the source.
A piece of text (the run between two marks of markup) is looked for as a whole, and a word alone
where that fails, after the previous word and within its own block
(paragraph, list item, table row, code block); a word whose characters are interrupted in
the source (``foo\\_bar``, an entity ``&amp;``, a JSON escape ``\\"``) is found as a
subsequence with short gaps, and covers the source from its first to its last character. A
word that cannot be found (an entity such as ``&copy;`` whose character is not in the
source, an image's alt text) is shown but cannot be marked. In the browser, a word whose
source is exactly as long as the word shown can be marked character by character; any other
word is marked whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import escape

__all__ = ["Locator", "SourceMap", "content_maps", "word_tokens"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
#: most source characters skipped between two characters of one word (an escape, an entity's rest)
_GAP = 8


def word_tokens(text: str) -> list[tuple[str, int, int, bool]]:
    """``text`` as ``(piece, start, end, is_word)``: words, each CJK character alone, and the whitespace
    between them (``is_word`` false); ``start``/``end`` are offsets into ``text``."""
    out: list[tuple[str, int, int, bool]] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() > pos:
            out.append((text[pos:m.start()], pos, m.start(), False))
        out.append((m.group(), m.start(), m.end(), True))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], pos, len(text), False))
    return out


@dataclass(frozen=True)
class SourceMap:
    """Where each character of a decoded string lies in its source: character ``i`` of the decoded
    string is ``source[starts[i]:ends[i]]`` (one character, or an escape such as ``\\n`` or ``\\u00e9``)."""

    starts: Sequence[int]
    ends: Sequence[int]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Decoded ``[start, end)`` (``end > start``) as source offsets."""
        return self.starts[start], self.ends[end - 1]


class Locator:
    """Finds the words of rendered pieces in ``source``, in reading order, and writes them as HTML.

    ``seek(start, limit)`` starts a block: words are looked for from ``start`` (or where the last
    word ended, if later) up to ``limit``. ``mapping`` turns offsets into ``source`` into offsets into
    the stored output (a conversation turn's content into the conversation's JSON).
    """

    def __init__(self, source: str, mapping: SourceMap | None = None) -> None:
        self.source = source
        self.mapping = mapping
        self.cursor = 0
        self.limit = len(source)

    def seek(self, start: int, limit: int | None = None) -> None:
        self.cursor = max(self.cursor, start)
        self.limit = len(self.source) if limit is None else max(limit, self.cursor)

    def _find(self, word: str) -> tuple[int, int] | None:
        src, lo, hi = self.source, self.cursor, self.limit
        at = src.find(word, lo, hi)
        if at >= 0:
            return at, at + len(word)
        first = src.find(word[0], lo, hi)
        while first >= 0:  # the word's characters in order, each within _GAP of the previous one
            pos, ok = first + 1, True
            for ch in word[1:]:
                nxt = src.find(ch, pos, min(hi, pos + _GAP + 1))
                if nxt < 0:
                    ok = False
                    break
                pos = nxt + 1
            if ok:
                return first, pos
            first = src.find(word[0], first + 1, hi)
        return None

    def html(self, text: str) -> str:
        """``text`` escaped, each word found in the source wrapped in a ``tok`` span with its source offsets."""
        parts: list[str] = []
        whole = self.source.find(text, self.cursor, self.limit) if text.strip() else -1
        for piece, s, e, is_word in word_tokens(text):
            if not is_word:
                found = None
            elif whole >= 0:  # the piece is in the source as shown: its words are where they are in it
                found = (whole + s, whole + e)
            else:
                found = self._find(piece)
            if found is None:
                parts.append(str(escape(piece)))
                continue
            self.cursor = found[1]
            s, e = self.mapping.span(*found) if self.mapping is not None else found
            parts.append(f'<span class="tok" data-s="{s}" data-e="{e}">{escape(piece)}</span>')
        return "".join(parts)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _decode(literal: str, at: int) -> tuple[str, SourceMap]:
    """A JSON string literal (with its quotes) found at offset ``at`` of its source, decoded, with the
    source offsets of each decoded character."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 1, len(literal) - 1
    while i < n:
        if literal[i] != "\\":
            chars.append(literal[i])
            starts.append(at + i)
            ends.append(at + i + 1)
            i += 1
            continue
        if literal[i + 1] != "u":
            width = 2
            ch = json.loads(f'"{literal[i:i + 2]}"')
        else:
            width = 6
            code = int(literal[i + 2:i + 6], 16)
            if 0xD800 <= code < 0xDC00 and literal[i + 6:i + 8] == "\\u" and 0xDC00 <= int(literal[i + 8:i + 12], 16) < 0xE000:
                width = 12
            ch = json.loads(f'"{literal[i:i + width]}"')
        chars.append(ch)
        starts.append(at + i)
        ends.append(at + i + width)
        i += width
    return "".join(chars), SourceMap(starts, ends)


def content_maps(source: str) -> list[tuple[str, SourceMap]] | None:
    """For a conversation's JSON (a list of turn objects), each turn's ``content`` decoded, with where its
    characters are in ``source``; None when the JSON is not laid out as such a list."""
    out: list[tuple[str, SourceMap]] = []
    depth, key, i = 0, None, 0
    while i < len(source):
        ch = source[i]
        if ch == '"':
            m = _STRING.match(source, i)
            if m is None:
                return None
            rest = source[m.end():].lstrip()
            if depth == 2 and rest.startswith(":"):
                key = json.loads(m.group())
            elif depth == 2:
                if key == "content":
                    out.append(_decode(m.group(), m.start()))
                key = None
            i = m.end()
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            key = None
        i += 1
    return out
