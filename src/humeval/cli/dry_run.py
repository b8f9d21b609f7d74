"""``humeval dry-run``: rehearse the study with dummy responses."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import run_stage_command


def dry_run(
    directory: Path = typer.Argument(Path("."), help="Study folder (run `humeval run` first)."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged."),
) -> None:
    """Write Random, Static and Normal dummy judgements for the participant lists (results/dry-run/)."""
    run_stage_command(directory, "dry-run", force)
