"""The ``report`` stage: ``report.html`` (self-contained), ``report.md`` + ``figures/``, ``heds.json``, and LaTeX
tables for a paper (``tables/*.tex``, next to the tidy CSVs of ``analyze``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from humeval.analysis.workspace import Workspace, read_results, study_workspace
from humeval.files import iter_jsonl, read_json, write_bytes, write_json, write_text
from humeval.lock import read_lock
from humeval.stage import StageOutput
from humeval.study import StudyFolder

if TYPE_CHECKING:
    from humeval.report.document import Example
    from humeval.results import Results

__all__ = ["design_summary", "report_examples", "report_stage", "report_workspace"]


def _count_lines(path: Path) -> int | None:
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())


def design_summary(study: StudyFolder) -> dict[str, Any]:
    """The design facts shown in the report (from the protocol and the design's files)."""
    p = study.protocol
    lock = read_lock(study)
    return {
        "items selected": _count_lines(study.items_file),
        "tasks": _count_lines(study.tasks_file),
        "participant lists": _count_lines(study.lists_file),
        "judgements per task": p.design.judgements_per_item,
        "tasks per list": p.design.items_per_participant,
        "counterbalancing": p.design.counterbalancing,
        "attention checks per list": p.design.attention_checks,
        "repeated tasks per list": p.design.repeated_items,
        "sampling": f"{p.sampling.method} (rate {p.sampling.rate:g})",
        "platform": p.platform.kind,
        "locked": lock.data.get("locked_at", "yes") if lock else "no",
    }


def report_examples(study: StudyFolder, n: int = 3) -> list[Example]:
    """The first ``n`` selected items with every system's output, in the format participants saw."""
    from humeval.report.document import Example

    if not study.items_file.is_file():
        return []
    outputs = study.outputs()
    default = study.protocol.presentation.output_format
    examples = []
    for _, row in iter_jsonl(study.items_file, what="selected items"):
        item_id = str(row.get("item_id", ""))
        texts = [(system, outputs.text(item_id, system)) for system in outputs.systems]
        shown = [(system, t.output, t.format or default) for system, t in texts if t.output]
        if shown:
            examples.append(Example(item_id, next(t.input for _, t in texts if t.output), shown))
        if len(examples) == n:
            break
    return examples


def _optional(path: Path) -> dict[str, Any] | None:
    return read_json(path) if path.is_file() else None


def _posthoc(ws: Workspace) -> list[Results]:
    from humeval.results import Results

    if not ws.posthoc_dir.is_dir():
        return []
    return [Results.read(p) for p in sorted(ws.posthoc_dir.glob("*/results.json"))]


def report_workspace(ws: Workspace, study: StudyFolder, results: Results | None = None) -> list[Path]:
    """Write the report, its figures, the LaTeX tables and the HEDS datasheet for the results in ``ws``."""
    from humeval.report.build import build_report
    from humeval.report.document import render_html, render_markdown
    from humeval.report.heds import heds_datasheet
    from humeval.report.judge_runs import judge_runs_section
    from humeval.report.judge_savings import judge_savings_section
    from humeval.report.latex import write_latex_tables

    results = results if results is not None else read_results(ws)
    protocol = study.protocol
    exclusion = _optional(ws.exclusion)
    report = build_report(protocol, results, design=design_summary(study), collation=_optional(ws.collation),
                          exclusion=exclusion, posthoc=_posthoc(ws), examples=report_examples(study))
    for section in (judge_runs_section(study), judge_savings_section(study, ws.judgements)):
        if section is not None:
            report.sections.append(section)
    ws.figures_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for section in report.sections:
        for fig in section.figures:
            paths.append(write_bytes(ws.figures_dir / f"{fig.name}.png", fig.png))
    write_text(ws.report_md, render_markdown(report))
    write_text(ws.report_html, render_html(report))
    paths += write_latex_tables(results, ws.tables_dir)  # next to analyze's tidy CSVs, from the same tables
    lock = read_lock(study)
    paths += [ws.report_md, ws.report_html,
              write_json(ws.heds, heds_datasheet(protocol, results, lock.data if lock else None, exclusion))]
    return paths


def report_stage(study: StudyFolder) -> StageOutput:
    """``humeval report``: the report of ``results/results.json`` (and any post hoc analyses)."""
    ws = study_workspace(study)
    paths = report_workspace(ws, study)
    return StageOutput(outputs=paths, summary={"figures": sum(1 for p in paths if p.suffix == ".png")})
