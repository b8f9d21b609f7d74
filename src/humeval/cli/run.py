"""``humeval run``: the pre-collection stages in order."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import print_stage


def run(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    force: bool = typer.Option(False, "--force", help="Re-run stages whose inputs are unchanged."),
) -> None:
    """Run the pre-collection stages (sample, design) in order, skipping those whose inputs are unchanged."""
    from humeval.pipeline import run as run_pipeline
    from humeval.study import StudyFolder

    for result in run_pipeline(StudyFolder.open(directory), force=force):
        print_stage(result)
