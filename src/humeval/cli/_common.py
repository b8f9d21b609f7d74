"""Shared pieces of the CLI: output formats and the console."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from rich.console import Console
from rich.table import Table

from humeval.files import csv_text

__all__ = ["Format", "emit_json", "emit_rows", "err", "out", "print_caveats"]

# soft wrap: a message is one line however wide, so a pipe or a log file gets whole lines (tables still fit the terminal)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


class Format(str, Enum):
    """Output format of a result (results to stdout, progress to stderr)."""

    table = "table"
    json = "json"
    csv = "csv"


def emit_json(data: Any) -> None:
    """Print ``data`` as JSON on stdout (plain, machine readable)."""
    sys.stdout.write(json.dumps(data, indent=2, default=_default) + "\n")


def _default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    return str(obj)


def emit_rows(
    rows: Sequence[Mapping[str, Any]], fmt: Format, *, title: str = "", json_data: Any = None, footer: str = ""
) -> None:
    """Print rows as a Rich table, CSV, or JSON (``json_data`` overrides the JSON body)."""
    if fmt == Format.json:
        emit_json(json_data if json_data is not None else list(rows))
        return
    columns = list(rows[0].keys()) if rows else []
    if fmt == Format.csv:
        sys.stdout.write(csv_text([columns, *([r[c] for c in columns] for r in rows)], ))
        return
    if not out.is_terminal:  # a pipe or a file: whole cells in plain columns, never cut to a width
        cells = [[str(c) for c in columns], *[[_cell(r[c]) for c in columns] for r in rows]]
        widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
        text = "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells)
        sys.stdout.write((f"{title}\n" if title else "") + text + "\n" + (f"{footer}\n" if footer else ""))
        return
    table = Table(title=title or None)
    for c in columns:
        table.add_column(str(c), overflow="fold")
    for r in rows:
        table.add_row(*(_cell(r[c]) for c in columns))
    out.print(table)
    if footer:
        out.print(footer)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def print_stage(result: Any) -> None:
    """Report one :class:`~humeval.pipeline.StageResult` (to stderr: results go to stdout)."""
    state = "unchanged, skipped" if result.skipped else "done"
    brief = ", ".join(f"{k}={v}" for k, v in result.summary.items() if not isinstance(v, (dict, list)))
    err.print(f"[bold]{result.stage}[/]: {state}" + (f" ({brief})" if brief else ""), highlight=False)
    for path in result.outputs:
        err.print(f"  {'kept' if result.skipped else 'wrote'} {path}", highlight=False, markup=False)
    sys.stdout.write(f"{result.stage}\t{result.signature}\n")  # a tab, not expanded: easy to cut


def print_caveats(directory: Any) -> None:
    """Say on stderr why a study's results are not final (incomplete, undecided), as the report's banner does."""
    from humeval.analysis.status import workspace_caveats
    from humeval.analysis.workspace import study_workspace
    from humeval.study import StudyFolder

    ws = study_workspace(StudyFolder.open(directory))
    if not ws.results.is_file():
        return
    for text in workspace_caveats(ws):
        err.print(f"[bold yellow]warning:[/] {text}", highlight=False)


def run_stage_command(directory: Any, stage: str, force: bool, options: dict[str, Any] | None = None) -> Any:
    """Run one pipeline stage from a command and print its result."""
    from humeval.pipeline import run_stage
    from humeval.study import StudyFolder

    result = run_stage(StudyFolder.open(directory), stage, force=force, options=options)
    print_stage(result)
    return result
