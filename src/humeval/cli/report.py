"""``humeval report``: HTML and Markdown report, figures, HEDS datasheet."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import print_caveats, run_stage_command


def report(
    directory: Path = typer.Argument(Path("."), help="Study folder (after `humeval analyze`)."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged."),
) -> None:
    """Write results/report.html (self-contained), results/report.md with results/figures/, and results/heds.json."""
    run_stage_command(directory, "report", force)
    print_caveats(directory)
