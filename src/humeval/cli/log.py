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
    from humeval.study import Study

    entries = logbook.read(Study.open(directory))
    rows = [
        {
            "time": e.get("end") or e.get("time"),
            "stage": e.get("stage"),
            "outcome": e.get("outcome"),
            "seed": e.get("seed", ""),
            "summary": e.get("error") or _brief(e.get("summary", {})),
            "signature": e.get("signature", ""),
        }
        for e in entries
    ]
    emit_rows(rows, fmt, title=f"logbook of {directory}", json_data=entries)


def _brief(summary: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in summary.items() if not isinstance(v, (dict, list)))
