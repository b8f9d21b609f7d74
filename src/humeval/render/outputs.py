"""Render one output as safe HTML in its format (``text``, ``markdown`` or ``conversation``).

- ``text``: escaped, line breaks kept (the card uses ``white-space: pre-wrap``).
- ``markdown``: CommonMark plus tables (markdown-it-py), fenced code highlighted on the
  server with Pygments (CSS classes, no inline styles), then sanitised with an allow-list
  (nh3). Raw HTML in the output is never interpreted: markdown-it's ``html`` option is off,
  so ``<script>`` and ``<img onerror=...>`` appear as text. Images are never loaded (an
  image is replaced by its alt text in brackets), and links open in a new tab with
  ``rel="noopener noreferrer nofollow"``; only ``http``, ``https`` and ``mailto`` links
  are kept (others become plain text).
- ``conversation``: a JSON list of ``{"role": ..., "content": ...}`` turns (optionally
  ``"format"``: ``text`` or ``markdown``, default ``markdown``), shown as a chat.

With ``markable=True`` (error span annotation) the output is rendered the same way, and every
word shown is wrapped in a span carrying its offsets into the source text
(:mod:`humeval.render.spans`); fenced code keeps its highlighting.

Every piece of HTML returned here has passed the sanitiser; templates mark it safe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

from humeval.errors import DataError
from humeval.files import check_json_depth
from humeval.render.spans import Locator, content_maps

__all__ = ["OUTPUT_FORMATS", "TURN_FORMATS", "RenderedOutput", "highlight_css", "parse_conversation", "render_output"]

OUTPUT_FORMATS = ("text", "markdown", "conversation")
TURN_FORMATS = ("text", "markdown")
_CODE_CLASS = "hl"
_STYLE = "default"
_TAGS = {"p", "em", "strong", "del", "s", "code", "pre", "span", "div", "table", "thead", "tbody", "tr", "th", "td",
         "ul", "ol", "li", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "br", "a"}
_ATTRIBUTES = {"a": {"href", "title"}, "span": {"class", "data-s", "data-e"}, "div": {"class"}, "code": {"class"}, "pre": {"class"},
               "ol": {"start"}, "th": {"class"}, "td": {"class"}}
_SCHEMES = {"http", "https", "mailto"}


@dataclass(frozen=True)
class RenderedOutput:
    """An output as HTML (already sanitised) with the format it was rendered in."""

    html: Markup
    format: str


def _highlight(code: str, lang: str, _attrs: str) -> str:
    try:
        lexer = get_lexer_by_name(lang.strip().split()[0]) if lang.strip() else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return ""  # markdown-it escapes the code itself
    body = highlight(code, lexer, HtmlFormatter(nowrap=True, classprefix=""))
    return f'<pre class="{_CODE_CLASS}"><code class="language-{escape(lang.strip().split()[0])}">{body}</code></pre>'


def _image(_renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image is never fetched: its alt text is shown in brackets instead."""
    alt = "".join(t.content for t in (tokens[idx].children or []))
    return f"[{escape(alt or 'image')}]"


@cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _highlight})
    md.enable("table").enable("strikethrough")
    md.add_render_rule("image", _image)
    return md


def _sanitise(html: str) -> str:
    return nh3.clean(html, tags=_TAGS, attributes=_ATTRIBUTES, url_schemes=_SCHEMES,
                     link_rel="noopener noreferrer nofollow", set_tag_attribute_values={"a": {"target": "_blank"}})


def _lexer(info: str) -> Any:
    name = info.strip().split()[0] if info.strip() else ""
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False) if name else None
    except ClassNotFound:
        return None


def _code_class(ttype: Any) -> str:
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def _markable_code(token: Any, loc: Locator) -> str:
    """A fenced or indented code block with each word markable (and highlighted as Pygments does)."""
    lexer = _lexer(token.info) if token.type == "fence" else None
    if lexer is None:
        return f"<pre><code>{loc.html(token.content)}</code></pre>\n"
    body = []
    for ttype, value in lexer.get_tokens(token.content):
        cls, inner = _code_class(ttype), loc.html(value)
        body.append(f'<span class="{cls}">{inner}</span>' if cls else inner)
    lang = escape(token.info.strip().split()[0])
    return f'<pre class="{_CODE_CLASS}"><code class="language-{lang}">{"".join(body)}</code></pre>\n'


def _prepared(_renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    return tokens[idx].meta["html"]


@cache
def _markable_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").enable("strikethrough")
    md.add_render_rule("image", _image)
    for rule in ("text", "code_inline", "fence", "code_block"):
        md.add_render_rule(rule, _prepared)
    return md


def _mark_words(tokens: Any, text: str, loc: Locator) -> None:
    """Every word of ``tokens`` (in reading order) located in ``text`` by ``loc``: kept in ``meta["html"]``."""
    lines = [0]
    for line in text.splitlines(keepends=True):
        lines.append(lines[-1] + len(line))

    def at(line: int) -> int:
        return lines[min(line, len(lines) - 1)]

    for token in tokens:
        if token.map is not None:
            first = token.map[0] + 1 if token.type == "fence" else token.map[0]
            loc.seek(at(first), at(token.map[1]))
        if token.type in ("fence", "code_block"):
            token.meta["html"] = _markable_code(token, loc)
        for child in token.children or []:
            if child.type == "text":
                child.meta["html"] = loc.html(child.content)
            elif child.type == "code_inline":
                child.meta["html"] = f"<code>{loc.html(child.content)}</code>"


def _markdown_html(text: str, loc: Locator | None = None) -> str:
    md = _markdown() if loc is None else _markable_markdown()
    tokens = md.parse(text)
    for token in tokens:  # column alignment as a class: the pages' CSP refuses inline styles
        style = token.attrGet("style") if token.type in ("th_open", "td_open") else None
        if isinstance(style, str) and style.startswith("text-align:"):
            token.attrs.pop("style")
            token.attrSet("class", f"align-{style.split(':', 1)[1].strip()}")
    if loc is not None:
        _mark_words(tokens, text, loc)
    return _sanitise(md.renderer.render(tokens, md.options, {}))


def _text_html(text: str, loc: Locator | None = None) -> str:
    return str(escape(text)) if loc is None else loc.html(text)


def parse_conversation(text: str, where: str = "output") -> list[dict[str, str]]:
    """The turns of a conversation output: a JSON list of ``{"role", "content"[, "format"]}``.

    Raises :class:`DataError` naming ``where``, the problem and what is valid.
    """
    check_json_depth(text, where=where, hint="a conversation output must be a JSON list of {role, content} turns")
    try:
        turns = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: a conversation output must be a JSON list of {{role, content}} turns; "
                        f"not JSON ({exc.msg} at character {exc.pos}): {text[:60]!r}") from None
    if not isinstance(turns, list) or not turns:
        raise DataError(f"{where}: a conversation output must be a non-empty JSON list of {{role, content}} turns; "
                        f"got {type(turns).__name__}: {text[:60]!r}")
    out = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("role"), str) or not isinstance(turn.get("content"), str):
            raise DataError(f"{where}: turn {i} must be an object with string 'role' and 'content'; got {turn!r:.80}")
        fmt = turn.get("format", "markdown")
        if fmt not in TURN_FORMATS:
            raise DataError(f"{where}: turn {i}: unknown format {fmt!r}; valid: {', '.join(TURN_FORMATS)}")
        out.append({"role": turn["role"], "content": turn["content"], "format": fmt})
    return out


def _conversation_html(text: str, markable: bool = False) -> str:
    turns = parse_conversation(text)
    maps = content_maps(text) if markable else None
    if markable and (maps is None or [m[0] for m in maps] != [t["content"] for t in turns]):
        raise DataError("conversation: the turns' contents could not be found in the JSON")
    parts = ['<div class="chat">']
    for k, turn in enumerate(turns):
        role = turn["role"]
        side = "user" if role.lower() in ("user", "human") else "system" if role.lower() == "system" else "assistant"
        loc = Locator(turn["content"], maps[k][1]) if maps is not None else None
        body = (_markdown_html(turn["content"], loc) if turn["format"] == "markdown"
                else f'<p class="text">{_text_html(turn["content"], loc)}</p>')
        parts.append(f'<div class="turn turn-{side}" dir="auto"><p class="role">{escape(role)}</p>'
                     f'<div class="turn-body">{body}</div></div>')
    parts.append("</div>")
    return "".join(parts)


def render_output(text: str, output_format: str = "text", markable: bool = False) -> RenderedOutput:
    """``text`` as safe HTML in ``output_format`` (``text``, ``markdown`` or ``conversation``); with
    ``markable``, each word is a span with its offsets into ``text`` (:mod:`humeval.render.spans`).

    A conversation that is not valid JSON turns is shown as plain text (the data check
    :func:`humeval.data.outputs.check_outputs` reports it before a study is locked).
    """
    if output_format == "markdown":
        return RenderedOutput(Markup(_markdown_html(text, Locator(text) if markable else None)), "markdown")
    if output_format == "conversation":
        try:
            return RenderedOutput(Markup(_conversation_html(text, markable)), "conversation")
        except DataError:
            return RenderedOutput(Markup(_text_html(text, Locator(text) if markable else None)), "text")
    if output_format != "text":
        raise DataError(f"unknown output format {output_format!r}; valid: {', '.join(OUTPUT_FORMATS)}")
    return RenderedOutput(Markup(_text_html(text, Locator(text) if markable else None)), "text")


_CSS = """\
/* outputs as rendered by humeval.render (generated: python -m humeval.render > this file) */
.output { font-size: 1.05rem; max-height: 28rem; overflow: auto; overflow-wrap: anywhere; }
.output-text { white-space: pre-wrap; }
.output pre { white-space: pre; overflow-x: auto; background: #f8f8f8; padding: .5rem; border-radius: 4px; font-size: .9rem; }
.output code { font-family: ui-monospace, monospace; }
.output table { border-collapse: collapse; margin: .5rem 0; display: block; overflow-x: auto; }
.output td, .output th { border: 1px solid #ccc; padding: .2rem .5rem; }
.output .align-center { text-align: center; } .output .align-right { text-align: right; } .output .align-left { text-align: left; }
.output blockquote { border-inline-start: 3px solid #ccc; margin: .5rem 0; padding-inline-start: .8rem; color: #333; }
.chat { display: flex; flex-direction: column; gap: .5rem; }
.turn { border-radius: 8px; padding: .3rem .7rem; max-width: 92%; }
.turn .role { font-size: .8rem; font-weight: 600; margin: .2rem 0; color: #333; }
.turn-body > :first-child { margin-top: .2rem; }
.turn-user { background: #e4eefb; align-self: flex-end; }
.turn-assistant { background: #f1f1ef; align-self: flex-start; }
.turn-system { background: #fff6d6; align-self: stretch; max-width: 100%; }
mark.diff { background: #ffe08a; color: inherit; }
"""


@cache
def highlight_css() -> str:
    """The stylesheet of rendered outputs: cards, chats, differences and the code highlighting
    (Pygments ``default`` style, scoped to ``pre.hl``). The server ships it as
    ``static/render.css``; the report embeds it."""
    return _CSS + HtmlFormatter(style=_STYLE, classprefix="").get_style_defs(f"pre.{_CODE_CLASS}") + "\n"
