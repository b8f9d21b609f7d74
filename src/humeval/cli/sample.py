"""``humeval sample``: select the items to evaluate."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import run_stage_command


def sample(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged."),
) -> None:
    """Run the protocol's sampler and write items.jsonl (selected item ids in order, with phases)."""
    run_stage_command(directory, "sample", force)
