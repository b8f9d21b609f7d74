"""Outputs rendered as safe HTML: hand-written expected HTML for each construct, and the
sanitiser's promises (no raw HTML, no remote image, no script link, links open safely)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from humeval.errors import DataError
from humeval.render import highlight_css, parse_conversation, render_output, word_diff

HOSTILE = "<script>window.__pwned=1</script> <img src=x onerror=\"window.__pwned=2\">"


def test_text_is_escaped() -> None:
    r = render_output("a < b & <b>c</b>\nline", "text")
    assert r.format == "text" and str(r.html) == "a &lt; b &amp; &lt;b&gt;c&lt;/b&gt;\nline"


def test_markdown_bold_table_and_highlighted_code() -> None:
    html = str(render_output("**bold**\n\n```python\nx = 1\n```\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n", "markdown").html)
    assert "<p><strong>bold</strong></p>" in html
    # Pygments tokens of `x = 1`: name, operator, integer (whitespace left bare)
    assert ('<pre class="hl"><code class="language-python"><span class="n">x</span> '
            '<span class="o">=</span> <span class="mi">1</span>') in html
    assert "<th>a</th>" in html and '<th class="align-center">b</th>' in html and '<td class="align-center">2</td>' in html
    assert "style=" not in html  # the pages' CSP refuses inline styles


def test_markdown_raw_html_is_text() -> None:
    html = str(render_output(HOSTILE, "markdown").html)
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html and "&lt;img src=x onerror=" in html


def test_markdown_images_links_and_schemes() -> None:
    html = str(render_output("![a cat](https://example.org/cat.png) [site](https://example.org) "
                             "[bad](javascript:alert(1)) <https://example.org/x>", "markdown").html)
    assert "<img" not in html and "[a cat]" in html
    assert '<a href="https://example.org" target="_blank" rel="noopener noreferrer nofollow">site</a>' in html
    assert "javascript:" not in html.split("href=")[-1] and 'href="javascript' not in html


def test_unknown_code_language_is_escaped_plain_code() -> None:
    html = str(render_output("```nolang\n<b>x</b>\n```", "markdown").html)
    assert "<pre><code" in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_conversation_as_chat() -> None:
    turns = [{"role": "user", "content": "Hi *there*"}, {"role": "assistant", "content": "<b>no</b>", "format": "text"}]
    html = str(render_output(json.dumps(turns), "conversation").html)
    assert html.startswith('<div class="chat"><div class="turn turn-user" dir="auto"><p class="role">user</p>')
    assert "<em>there</em>" in html and "&lt;b&gt;no&lt;/b&gt;" in html and "turn-assistant" in html


def test_conversation_errors() -> None:
    with pytest.raises(DataError, match="not JSON"):
        parse_conversation("hello", where="(i1, s1)")
    with pytest.raises(DataError, match="turn 0 must be an object"):
        parse_conversation('[{"role": "user"}]')
    with pytest.raises(DataError, match="unknown format 'html'"):
        parse_conversation('[{"role": "user", "content": "x", "format": "html"}]')
    assert render_output("not json", "conversation").format == "text"  # shown, never a 500
    with pytest.raises(DataError, match="valid: text, markdown, conversation"):
        render_output("x", "rich")


def test_word_diff() -> None:
    left, right = word_diff("the cat sat <here>", "the dog sat <here> now")
    assert str(left) == 'the <mark class="diff">cat</mark> sat &lt;here&gt;'
    assert str(right) == 'the <mark class="diff">dog</mark> sat &lt;here&gt; <mark class="diff">now</mark>'
    assert word_diff("same words", "same words") == ("same words", "same words")


def test_shipped_stylesheet_is_current() -> None:
    shipped = Path(__file__).resolve().parents[3] / "src" / "humeval" / "server" / "static" / "render.css"
    assert shipped.read_text(encoding="utf-8") == highlight_css(), "regenerate: python -m humeval.render > " + str(shipped)
