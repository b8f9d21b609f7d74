"""``humeval collate``: are all tasks complete? If not, write the re-run file."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import err, run_stage_command


def collate(
    directory: Path = typer.Argument(Path("."), help="Study folder; reads results/judgements.jsonl (from `humeval export` or a platform import)."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged."),
) -> None:
    """Check every task has `design.judgements_per_item` valid judgements; write results/rerun/ for what is missing."""
    result = run_stage_command(directory, "collate", force)
    if not result.summary.get("complete", True):
        err.print(f"[yellow]incomplete[/]: {result.summary.get('judgements_missing')} judgements missing; collect the "
                  "re-run file in results/rerun/, bring the new judgements in with `humeval export` or `humeval import` "
                  "and collate again.", highlight=False)
