"""``humeval export``: the store's judgements into results/judgements.jsonl, or the tasks as a batch CSV."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import err, print_stage


def export(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    fmt: str = typer.Option("jsonl", "--format", "-f",
                            help="jsonl | csv | parquet (judgements; csv/parquet also write a copy), or mturk-batch."),
    output: Path = typer.Option(None, "--output", "-o",
                                help="csv/parquet: the copy to write (default results/judgements.<format>); "
                                     "mturk-batch: the batch file (default results/mturk_batch.csv)."),
    db: str = typer.Option("", "--db", help="Store URL or file (default: study.db)."),
    as_study_data: bool = typer.Option(False, "--as-study", help="Take a SQLite store other than study.db (a pilot's) as the study's data; recorded in the logbook. Without it such a store is refused: read a pilot with `humeval pilot`."),
) -> None:
    """Export the store's judgements (results/sources/store.jsonl, then results/judgements.jsonl as the union
    of every source), or every task as a batch CSV with opaque row keys (`--format mturk-batch`)."""
    from humeval.errors import HumevalError, did_you_mean
    from humeval.study import StudyFolder

    study = StudyFolder.open(directory)
    formats = ("csv", "jsonl", "parquet", "mturk-batch")
    if fmt not in formats:
        raise HumevalError(f"--format: unknown format '{fmt}'. {did_you_mean(fmt, formats)}")
    if fmt == "mturk-batch":
        from humeval.pipeline import export_batch

        print_stage(export_batch(study, output))
        return
    from humeval.pipeline import export_judgements

    result = export_judgements(study, db or None, as_study_data=as_study_data)
    print_stage(result)
    if fmt != "jsonl" or output is not None:
        from humeval.judgements import read_judgements, write_judgements

        copy = output or study.results_dir / f"judgements.{fmt}"
        if copy.suffix != f".{fmt}":
            copy = copy.with_suffix(f".{fmt}")
        write_judgements(copy, read_judgements(study.results_dir / "judgements.jsonl"))
        err.print(f"  wrote {copy}", highlight=False, markup=False)
