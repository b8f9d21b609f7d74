"""What the templates need beyond the assignment JSON: outputs rendered in their format.

:func:`install_view` adds to the Jinja environment the global ``shown_outputs(a)``: the
outputs of an assignment (:func:`humeval.server.payload.assignment_json`) as safe HTML,
rendered by :mod:`humeval.render` (the same rendering as the report's examples; see
:func:`humeval.server.i18n.install_i18n` for the attention checks' wording), with the
words that differ marked when ``presentation.highlight_differences`` is on and the task
shows two plain-text outputs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import jinja2
from markupsafe import Markup

from humeval.protocol.models import Presentation
from humeval.render import render_output, word_diff

__all__ = ["esa_value", "install_view", "shown_outputs", "word_tokens"]

_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def word_tokens(text: str) -> list[dict[str, Any]]:
    """The text as markable pieces for error spans: words, each CJK character alone, and the
    whitespace between them (``mark: False``); ``start``/``end`` are character offsets into ``text``."""
    out: list[dict[str, Any]] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() > pos:
            out.append({"text": text[pos:m.start()], "start": pos, "end": m.start(), "mark": False})
        out.append({"text": m.group(), "start": m.start(), "end": m.end(), "mark": True})
        pos = m.end()
    if pos < len(text):
        out.append({"text": text[pos:], "start": pos, "end": len(text), "mark": False})
    return out


def esa_value(form: dict[str, str], name: str) -> Any:
    """An ``esa`` answer from the task form: ``{name}.score`` and the JSON list ``{name}.spans``;
    what cannot be read is passed on as given, so the store's check names the problem."""
    score_text = form.get(f"{name}.score", "")
    try:
        score: Any = float(score_text)
    except ValueError:
        score = score_text or None
    try:
        spans = json.loads(form.get(f"{name}.spans", "") or "[]")
    except json.JSONDecodeError:
        spans = form.get(f"{name}.spans", "")
    if score is None:
        return None  # missing: the store says "required"
    return {"score": score, "spans": spans}


def shown_outputs(a: dict[str, Any], presentation: Presentation,
                  attention: Callable[[dict[str, Any]], str] | None = None) -> list[dict[str, Any]]:
    """Each output of ``a`` as ``{"html": Markup, "format": str}`` in display order; an attention
    check shows ``attention(criterion)`` (its instruction in the study's language) in every card."""
    texts, formats = a["outputs"], a.get("formats") or ["text"] * len(a["outputs"])
    if a["task"]["kind"] == "attention" and attention is not None:
        texts = [attention(a["criteria"][0])] * len(texts)
    if (presentation.highlight_differences and len(texts) == 2 and formats == ["text", "text"]
            and a["task"]["kind"] != "attention"):
        left, right = word_diff(texts[0], texts[1])
        return [{"html": left, "format": "text"}, {"html": right, "format": "text"}]
    shown = [render_output(t, f) for t, f in zip(texts, formats, strict=True)]
    return [{"html": Markup(r.html), "format": r.format} for r in shown]


def install_view(env: jinja2.Environment, presentation: Presentation) -> None:
    """Make ``shown_outputs(a)`` available to every template of ``env`` (after :func:`install_i18n`)."""
    attention = env.globals.get("attention_text")
    env.globals["shown_outputs"] = lambda a: shown_outputs(a, presentation, attention)  # type: ignore[arg-type]
    env.globals["word_tokens"] = word_tokens
    env.globals["comments"] = presentation.comments
