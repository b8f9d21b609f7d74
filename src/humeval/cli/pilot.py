"""``humeval pilot``: a pilot's store read apart from the study, into results/pilot/ with a pilot banner."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import print_stage


def pilot(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    db: str = typer.Option("", "--db", help="The pilot's store: SQLite file or URL (default: pilot.db in the study folder)."),
) -> None:
    """Read a pilot's store apart from the study: its judgements into results/pilot/, then collate, exclude, analyze
    and report there under a PILOT banner; nothing reaches the study's results/ (a logged run)."""
    from humeval.pipeline import pilot as run_pilot
    from humeval.study import StudyFolder

    print_stage(run_pilot(StudyFolder.open(directory), db or None))
