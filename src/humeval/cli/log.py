"""``humeval log``: print the logbook."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import Format, emit_rows


def log(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table | json | csv"),
) -> None:
    """Print the study's logbook: one line per stage run (time, outcome, seed, signature)."""
    from humeval import logbook
    from humeval.study import StudyFolder

    study = StudyFolder.open(directory)
    rows = [
        {
            "time": e.when,
            "stage": e.stage,
            "outcome": e.outcome,
            "seed": e.seed if "seed" in e.model_fields_set else "",
            "summary": e.error or _brief(e.summary or {}),
            "signature": e.signature or "",
        }
        for e in logbook.entries(study)
    ]
    emit_rows(rows, fmt, title=f"logbook of {directory}", json_data=logbook.read(study))


def _brief(summary: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in summary.items() if not isinstance(v, (dict, list)))
