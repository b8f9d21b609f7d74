"""``humeval export``: judgements from the store to CSV/JSONL/Parquet, or an MTurk batch file."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import err


def export(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    output: Path = typer.Option(None, "--output", "-o", help="File to write (default: results/judgements.<format>)."),
    fmt: str = typer.Option("jsonl", "--format", "-f", help="csv | jsonl | parquet (judgements), or mturk-batch."),
    db: str = typer.Option("", "--db", help="Store URL or file (default: study.db)."),
) -> None:
    """Export the stored judgements as the canonical long table, or the tasks as an MTurk batch CSV."""
    from humeval.errors import HumevalError, did_you_mean
    from humeval.study import Study

    study = Study.open(directory)
    formats = ("csv", "jsonl", "parquet", "mturk-batch")
    if fmt not in formats:
        raise HumevalError(f"--format: unknown format '{fmt}'. {did_you_mean(fmt, formats)}")
    if fmt == "mturk-batch":
        from humeval.platforms.mturk import export_study_batch

        path, n_tasks = export_study_batch(study, output)
        err.print(f"wrote {path} ({n_tasks} tasks) and {path.with_suffix('.key.json')}", highlight=False)
        return
    from humeval.store.export import export_judgements

    path = output or study.results_dir / f"judgements.{fmt}"
    rows = export_judgements(study, path, db or None)
    err.print(f"wrote {path} ({rows} rows)", highlight=False)
