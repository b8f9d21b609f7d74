"""``humeval dry-run``: rehearse the study with dummy responses, through the whole back half."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import err, run_stage_command


def dry_run(
    directory: Path = typer.Argument(Path("."), help="Study folder (run `humeval run` first)."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged."),
) -> None:
    """Random, Static and Normal dummy judgements, each pushed through collate, exclude, analyze and report (results/dry-run/<kind>/)."""
    result = run_stage_command(directory, "dry-run", force)
    for kind, entry in result.summary.items():
        if isinstance(entry, dict) and entry.get("analysis_error"):
            err.print(f"[yellow]{kind}[/]: the rehearsal stopped before the analysis: {entry['analysis_error']}",
                      highlight=False)
