"""What the templates need beyond the assignment JSON: outputs rendered in their format.

:func:`install_view` adds to the Jinja environment the global ``shown_outputs(a)``: the
outputs of an assignment (:func:`humeval.server.payload.assignment_json`) as safe HTML,
rendered by :mod:`humeval.render` (the same rendering as the report's examples; see
:func:`humeval.server.i18n.install_i18n` for the attention checks' wording), with the
words that differ marked when ``presentation.highlight_differences`` is on and the task
shows two plain-text outputs. On an error-span (``esa``) page the outputs are rendered the
same way, with every word markable (:mod:`humeval.render.spans`): the other criteria of a
joint page rate the same rendered text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jinja2
from markupsafe import Markup

from humeval.protocol.models import Presentation
from humeval.render import render_output, word_diff
from humeval.tasks import TASK_TYPES
from humeval.tasks.esa import esa_value

__all__ = ["esa_value", "install_view", "shown_outputs"]

def shown_outputs(a: dict[str, Any], presentation: Presentation,
                  attention: Callable[[dict[str, Any], Any], str] | None = None) -> list[dict[str, Any]]:
    """Each output of ``a`` as ``{"html": Markup, "format": str}`` in display order; an attention
    check shows ``attention(criterion, expected)`` (its instruction in the study's language, asking for the
    check's expected answer, which only the page's ``a["task"]`` carries) in every card.
    When a criterion of ``a`` marks spans (``esa``), each word is a span carrying its offsets into the output."""
    texts, formats = a["outputs"], a.get("formats") or ["text"] * len(a["outputs"])
    if a["task"]["kind"] == "attention" and attention is not None:
        texts = [attention(a["criteria"][0], a["task"].get("expected"))] * len(texts)
    markable = any(TASK_TYPES.get(c["type"]).marks_spans for c in a["criteria"]) and a["task"]["kind"] != "attention"
    if markable:
        shown = [render_output(t, f, markable=True) for t, f in zip(texts, formats, strict=True)]
        return [{"html": Markup(r.html), "format": r.format} for r in shown]
    if (presentation.highlight_differences and len(texts) == 2 and formats == ["text", "text"]
            and a["task"]["kind"] != "attention"):
        left, right = word_diff(texts[0], texts[1])
        return [{"html": left, "format": "text"}, {"html": right, "format": "text"}]
    shown = [render_output(t, f) for t, f in zip(texts, formats, strict=True)]
    return [{"html": Markup(r.html), "format": r.format} for r in shown]


def output_labels(declared: list[str], n: int, language: str) -> list[str]:
    """The heading of each of ``n`` outputs shown: ``presentation.output_labels`` in display order, else
    "Output A", "Output B", ... in the page's language; "" (no heading) for a single output without a label."""
    from humeval.server.i18n import translations

    gettext = translations(language).gettext
    default = [gettext("Output %(letter)s") % {"letter": chr(ord("A") + i)} if n > 1 else "" for i in range(n)]
    return [declared[i] if i < len(declared) and declared[i] else default[i] for i in range(n)]


def install_view(env: jinja2.Environment, presentation: Presentation) -> None:
    """Make ``shown_outputs(a)`` available to every template of ``env`` (after :func:`install_i18n`), and what the
    task page asks of a criterion's task type: ``task_partial(c)`` (the template of its fieldset) and the tests
    ``c is scores_each_output``, ``c is marks_spans``, ``c is relative_to_standard``."""
    attention = env.globals.get("attention_text")
    env.globals["shown_outputs"] = lambda a: shown_outputs(a, presentation, attention)  # type: ignore[arg-type]
    env.globals["comments"] = presentation.comments
    env.globals["presentation"] = presentation
    # what the task page asks of a criterion's type (a criterion as the assignment JSON shows it)
    env.globals["task_partial"] = lambda c: TASK_TYPES.get(c["type"]).partial
    for question in ("scores_each_output", "marks_spans", "relative_to_standard"):
        env.tests[question] = lambda c, q=question: bool(getattr(TASK_TYPES.get(c["type"]), q))
