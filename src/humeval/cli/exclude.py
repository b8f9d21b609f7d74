"""``humeval exclude``: apply the preregistered exclusion rules."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import run_stage_command


def exclude(
    directory: Path = typer.Argument(Path("."), help="Study folder (locked; results/judgements.jsonl collected)."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged."),
) -> None:
    """Write results/excluded.jsonl (who or what was excluded, by which rule) and results/exclusion.json (counts). Deletes nothing."""
    run_stage_command(directory, "exclude", force)
