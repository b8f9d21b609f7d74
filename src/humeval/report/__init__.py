"""Reports: tables, figures, a self-contained HTML page, Markdown, LaTeX tables for a paper, and the HEDS 2.0 datasheet."""

from humeval.report.build import build_report
from humeval.report.document import Report, render_html, render_markdown
from humeval.report.heds import HEDS_CRITERION_QUESTIONS, HEDS_QUESTIONS, heds_datasheet
from humeval.report.latex import latex_table, latex_tables, write_latex_tables

__all__ = [
    "HEDS_CRITERION_QUESTIONS",
    "HEDS_QUESTIONS",
    "Report",
    "build_report",
    "heds_datasheet",
    "latex_table",
    "latex_tables",
    "render_html",
    "render_markdown",
    "write_latex_tables",
]
