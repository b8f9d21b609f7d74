"""Markdown pages as sections: each heading with the first cells of the table rows beneath it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token


@dataclass
class Section:
    level: int
    title: str  # the heading's text, code spans unwrapped
    rows: list[list[str]] = field(default_factory=list)  # per table row: the code spans of its first cell
    children: list[Section] = field(default_factory=list)

    def all_rows(self) -> list[list[str]]:
        """The rows of this section and of every subsection."""
        return [*self.rows, *(r for c in self.children for r in c.all_rows())]


def _text(inline: Token) -> str:
    return "".join(t.content for t in inline.children or [] if t.type in ("text", "code_inline")).strip()


def _codes(inline: Token) -> list[str]:
    return [t.content for t in inline.children or [] if t.type == "code_inline"]


def sections(path: Path) -> list[Section]:
    """Every heading of the page in order, each holding the table rows up to the next heading."""
    tokens = MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8"))
    out: list[Section] = []
    stack: list[Section] = []
    first_cell = False
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            sec = Section(int(tok.tag[1]), _text(tokens[i + 1]))
            while stack and stack[-1].level >= sec.level:
                stack.pop()
            if stack:
                stack[-1].children.append(sec)
            stack.append(sec)
            out.append(sec)
        elif tok.type == "tr_open":
            first_cell = True
        elif tok.type == "td_open" and first_cell and stack:
            stack[-1].rows.append(_codes(tokens[i + 1]))
            first_cell = False
    return out
