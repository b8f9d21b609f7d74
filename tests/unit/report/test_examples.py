"""The report's examples: the first selected items, rendered as participants saw them (HTML) and verbatim (Markdown)."""

from __future__ import annotations

from pathlib import Path

from humeval.report.document import Report, Section, render_html, render_markdown
from humeval.stages.report import report_examples
from tests.integration.server.studies import MARKDOWN, rendering_study


def test_examples_rendered_like_the_task_page(tmp_path: Path) -> None:
    study = rendering_study(tmp_path / "s", items=4)
    examples = report_examples(study, n=2)
    assert len(examples) == 2 and examples[0].input == "A question"
    assert [(s, f) for s, _, f in examples[0].outputs] == [("baseline", "markdown"), ("candidate", "conversation")]
    report = Report("r", "sig", "", [Section("Examples", examples=examples)])
    html = render_html(report)
    assert "<strong>bold</strong>" in html and '<pre class="hl">' in html and '<div class="chat">' in html
    assert "window.__pwned" in html and "<script>window" not in html and "<img src=x" not in html
    assert "pre.hl .k {" in html  # the highlighting stylesheet is embedded (the report is self-contained)
    md = render_markdown(report)
    assert "```markdown\n" + MARKDOWN + "\n```" in md and '```json\n[{"role": "user"' in md
