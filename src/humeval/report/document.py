"""The report as a small document model rendered to Markdown and self-contained HTML."""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from humeval.render import highlight_css, render_output

__all__ = ["Example", "Figure", "Report", "Section", "Table", "fmt", "render_html", "render_markdown"]


def fmt(value: Any) -> str:
    """A cell as text: 4 significant digits for floats, p-values below 0.001 as ``< 0.001``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    return str(value)


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    footer: str = ""


@dataclass
class Figure:
    name: str
    png: bytes
    caption: str


@dataclass
class Example:
    """One item as participants saw it: its input and each system's output (system, text, format)."""

    item_id: str
    input: str
    outputs: list[tuple[str, str, str]]


@dataclass
class Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    level: int = 2
    examples: list[Example] = field(default_factory=list)


@dataclass
class Report:
    title: str
    signature: str
    banners: list[str]  # what the reader must know before any number: simulated data, incomplete, undecided
    sections: list[Section]


def _md_cell(value: Any) -> str:
    return fmt(value).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report, figure_dir: str = "figures") -> str:
    """Markdown with figures linked from ``figure_dir`` (relative to the report)."""
    lines = [f"# {report.title}", ""]
    for banner in report.banners:
        lines += [f"> {banner}", ""]
    lines += [f"Signature: `{report.signature}`", ""]
    for section in report.sections:
        lines += [f"{'#' * section.level} {section.title}", ""]
        for p in section.paragraphs:
            lines += [p, ""]
        for t in section.tables:
            if t.title:
                lines += [f"**{t.title}**", ""]
            lines.append("| " + " | ".join(t.columns) + " |")
            lines.append("|" + "---|" * len(t.columns))
            lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in t.rows]
            lines.append("")
            if t.footer:
                lines += [f"`{t.footer}`", ""]
        for f in section.figures:
            lines += [f"![{f.caption}]({figure_dir}/{f.name}.png)", "", f"*{f.caption}*", ""]
        for ex in section.examples:
            lines += _md_example(ex)
    return "\n".join(lines).rstrip() + "\n"


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text`` (the output is shown verbatim)."""
    runs = [len(m) for m in re.findall(r"`+", text)]
    return "`" * max(3, max(runs, default=0) + 1)


def _md_example(ex: Example) -> list[str]:
    """An example in Markdown: each output verbatim in a fence (what participants saw rendered is in the HTML)."""
    lines = [f"**Item {ex.item_id}**", ""]
    if ex.input:
        lines += [f"Input: {ex.input}", ""]
    for system, text, output_format in ex.outputs:
        fence = _fence(text)
        lines += [f"*{system}* ({output_format}):", "", fence + ("json" if output_format == "conversation" else output_format),
                  text, fence, ""]
    return lines


_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ r.title }}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 .2rem}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}
.scroll{overflow-x:auto;max-width:100%}.scroll:focus{outline:2px solid #0b57d0}
pre{overflow-x:auto;max-width:100%}p,li,figcaption{overflow-wrap:anywhere}
th{background:#f3f3f3}.sig{font-family:monospace;font-size:.8rem;color:#555;margin-bottom:1rem;overflow-wrap:anywhere}
.banner{background:#fff3cd;border:1px solid #e0c36b;padding:.5rem 1rem}figure{margin:1rem 0}
figcaption{font-size:.9rem;color:#444}img{max-width:100%}
.example{border:1px solid #ddd;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}
.example .outputs{display:grid;gap:.8rem;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr))}
.example .system{font-weight:600;margin:.3rem 0}
{{ css }}
</style></head><body>
<h1>{{ r.title }}</h1>
{% for b in r.banners %}<p class="banner" role="note">{{ b }}</p>
{% endfor %}
<p class="sig">{{ r.signature }}</p>
{% for s in r.sections %}<h{{ s.level }}>{{ s.title }}</h{{ s.level }}>
{% for p in s.paragraphs %}<p>{{ p }}</p>
{% endfor %}{% for t in s.tables %}{% if t.title %}<p><strong>{{ t.title }}</strong></p>{% endif %}
<div class="scroll" role="region" tabindex="0" aria-label="{{ t.title or s.title }}"><table><tr>{% for c in t.columns %}<th>{{ c }}</th>{% endfor %}</tr>
{% for row in t.rows %}<tr>{% for v in row %}<td>{{ fmt(v) }}</td>{% endfor %}</tr>
{% endfor %}</table></div>{% if t.footer %}<div class="sig">{{ t.footer }}</div>{% endif %}
{% endfor %}{% for f in s.figures %}<figure><img alt="{{ f.caption }}" src="data:image/png;base64,{{ b64(f.png) }}">
<figcaption>{{ f.caption }}</figcaption></figure>
{% endfor %}{% for ex in s.examples %}<div class="example"><p><strong>Item {{ ex.item_id }}</strong></p>
{% if ex.input %}<p class="input" dir="auto">{{ ex.input }}</p>{% endif %}<div class="outputs">
{% for system, text, output_format in ex.outputs %}<div><p class="system">{{ system }}</p>
<div class="output output-{{ output_format }}" dir="auto">{{ render(text, output_format).html }}</div></div>
{% endfor %}</div></div>
{% endfor %}{% endfor %}
</body></html>
"""


def render_html(report: Report) -> str:
    """One self-contained HTML page (figures embedded as base64 PNG)."""
    env = Environment(autoescape=True)
    template = env.from_string(_HTML)
    return template.render(r=report, fmt=fmt, b64=lambda b: base64.b64encode(b).decode("ascii"), render=render_output,
                           css=Markup(highlight_css()))
