"""``humeval design``: tasks and participant lists."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import run_stage_command


def design(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged."),
) -> None:
    """Build the tasks of the selected items and deal them into participant lists (lists/)."""
    run_stage_command(directory, "design", force)
