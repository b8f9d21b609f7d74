"""Markable words of rendered outputs (ESA): every word shown carries offsets into the source text,
checked against the source itself (a slice for plain words, the JSON decoder for a chat's escapes)."""

from __future__ import annotations

import html
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from humeval.render import render_output
from humeval.render.spans import content_maps, word_tokens

_TOK = re.compile(r'<span class="tok" data-s="(\d+)" data-e="(\d+)">([^<]*)</span>')


def _toks(src: str, fmt: str) -> list[tuple[int, int, str]]:
    shown = str(render_output(src, fmt, markable=True).html)
    return [(int(s), int(e), html.unescape(w)) for s, e, w in _TOK.findall(shown)]


def _visible_words(src: str, fmt: str) -> list[str]:
    shown = re.sub(r"<[^>]+>", " ", str(render_output(src, fmt).html))
    return html.unescape(shown).split()


def _subsequence(word: str, text: str) -> bool:
    it = iter(text)
    return all(ch in it for ch in word)


def test_word_tokens_offsets() -> None:
    text = "Ein Test 中文 ok."
    toks = word_tokens(text)
    assert [t[0] for t in toks if t[3]] == ["Ein", "Test", "中", "文", "ok."]
    assert all(text[s:e] == piece for piece, s, e, _ in toks)
    assert "".join(t[0] for t in toks) == text


MARKDOWN = """Use **slicing**: `xs[::-1]` or foo\\_bar &amp; see [the docs](http://to.example) to learn.

> a *quoted* line

1. first item
2. second item

| name | value |
|:-----|------:|
| to   | 1     |

```python
def rev(xs):
    return xs[::-1]  # to
```
"""


def test_markdown_words_point_into_the_source() -> None:
    toks = _toks(MARKDOWN, "markdown")
    # exactly the words a reader sees (markup, link targets and fences are not words), in reading order
    assert "".join(w for _, _, w in toks) == "".join(_visible_words(MARKDOWN, "markdown"))
    assert "**" not in "".join(w for _, _, w in toks)
    starts = [s for s, _, _ in toks]
    assert starts == sorted(starts) and all(e <= s2 for (_, e, _), s2 in zip(toks, starts[1:], strict=False))
    for s, e, w in toks:
        assert MARKDOWN[s:e] == w or (w == "foo_bar" and MARKDOWN[s:e] == "foo\\_bar") or (w == "&" and MARKDOWN[s:e] == "&")
    marked = {w: MARKDOWN[s:e] for s, e, w in toks}
    assert marked["slicing"] == "slicing" and MARKDOWN[MARKDOWN.index("**slicing**") + 2:][:7] == "slicing"
    # "to" in the link's text and after it: the link target (http://to.example) is never taken for a word
    to = [s for s, _, w in toks if w == "to"]
    assert to[0] > MARKDOWN.index("](http") + 10 or to[0] < MARKDOWN.index("](http")
    assert all(not (MARKDOWN.index("(http") < s < MARKDOWN.index(") to")) for s in to)


def test_code_stays_highlighted_when_markable() -> None:
    shown = str(render_output(MARKDOWN, "markdown", markable=True).html)
    plain = str(render_output(MARKDOWN, "markdown").html)
    assert '<pre class="hl"><code class="language-python">' in shown
    def classes(page: str) -> list[str]:  # the highlighting classes in order (Pygments merges equal neighbours)
        found = re.findall(r'<span class="(\w+)">', re.sub(r'<span class="tok"[^>]*>', "", page).split("<pre")[1])
        found = [c for c in found if c != "w"]  # whitespace has no colour
        return [c for i, c in enumerate(found) if i == 0 or c != found[i - 1]]

    assert classes(shown) == classes(plain) and "k" in classes(shown)


def test_conversation_words_point_into_the_json() -> None:
    turns = [{"role": "user", "content": "Reverse \"xs\", s'il vous plaît 😀"},
             {"role": "assistant", "content": "Use **slicing**:\n```python\nxs[::-1]\n```", "meta": {"content": "no"}},
             {"role": "assistant", "content": "plain\ttext", "format": "text"}]
    for src in (json.dumps(turns), json.dumps(turns, ensure_ascii=False, indent=2)):
        toks = _toks(src, "conversation")
        words = [w for _, _, w in toks]
        assert words == ["Reverse", '"xs",', "s'il", "vous", "plaît", "😀", "Use", "slicing", ":",
                         "xs", "[", ":", ":", "-", "1", "]", "plain", "text"]
        for s, e, w in toks:  # the JSON decoder is the reference: the slice is the word, escaped
            assert json.loads(f'"{src[s:e]}"') == w


def test_content_maps_follow_only_the_turns() -> None:
    src = '[{"content": "a\\u00e9b", "role": "x", "meta": {"content": "no"}}, {"role": "y", "content": "c"}]'
    maps = content_maps(src)
    assert maps is not None and [m[0] for m in maps] == ["aéb", "c"]
    _, where = maps[0]
    assert [src[a:b] for a, b in zip(where.starts, where.ends, strict=True)] == ["a", "\\u00e9", "b"]


def test_plain_text_offsets_are_the_text_itself() -> None:
    text = "Le café 😀 était naïvement délicieux, 中文."
    assert all(text[s:e] == w for s, e, w in _toks(text, "text"))
    assert [w for _, _, w in _toks(text, "text")] == [t[0] for t in word_tokens(text) if t[3]]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab *_`#[]()\\&;>-|\n1.", max_size=60))
def test_any_markdown_maps_to_its_source(src: str) -> None:
    toks = _toks(src, "markdown")
    prev = 0
    for s, e, w in toks:
        assert prev <= s < e <= len(src)
        assert src[s] == w[0] and src[e - 1] == w[-1] and _subsequence(w, src[s:e])
        prev = e
