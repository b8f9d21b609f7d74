"""``humeval export``: the store's judgements into results/judgements.jsonl, the tasks as a batch CSV, or an mqm
criterion's judgements as a WMT MQM TSV."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import err, print_stage


def export(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    fmt: str = typer.Option("jsonl", "--format", "-f",
                            help="jsonl | csv | parquet (judgements; csv/parquet also write a copy), mturk-batch, or "
                                 "mqm-tsv (an mqm criterion's judgements in results/judgements.jsonl as a WMT MQM "
                                 "TSV)."),
    output: Path = typer.Option(None, "--output", "-o",
                                help="csv/parquet: the copy to write (default results/judgements.<format>); "
                                     "mturk-batch: the batch file (default results/mturk_batch.csv); mqm-tsv: the "
                                     "TSV (default results/<criterion>.tsv)."),
    db: str = typer.Option("", "--db", help="Store URL or file (default: study.db)."),
    criterion: str = typer.Option(None, "--criterion", help="mqm-tsv: the mqm criterion (default: the only one)."),
    documents: Path = typer.Option(None, "--documents", help="mqm-tsv: a WMT MQM TSV whose doc and doc_id columns, "
                                   "by seg_id, are written back (a study keeps no documents)."),
    as_study_data: bool = typer.Option(False, "--as-study", help="Take a SQLite store other than study.db (a pilot's) as the study's data; recorded in the logbook. Without it such a store is refused: read a pilot with `humeval pilot`."),
) -> None:
    """Export the store's judgements (results/sources/store.jsonl, then results/judgements.jsonl as the union
    of every source), every task as a batch CSV with opaque row keys (`--format mturk-batch`), or the judgements
    of an mqm criterion as a WMT MQM TSV (`--format mqm-tsv`, from results/judgements.jsonl, read back by
    `humeval import mqm`)."""
    from humeval.errors import HumevalError, did_you_mean
    from humeval.study import StudyFolder

    study = StudyFolder.open(directory)
    formats = ("csv", "jsonl", "parquet", "mturk-batch", "mqm-tsv")
    if fmt not in formats:
        raise HumevalError(f"--format: unknown format '{fmt}'. {did_you_mean(fmt, formats)}")
    if fmt == "mturk-batch":
        from humeval.pipeline import export_batch

        print_stage(export_batch(study, output))
        return
    if fmt == "mqm-tsv":
        from humeval.pipeline import export_mqm

        path = export_mqm(study, output, criterion=criterion, documents=documents)
        err.print(f"  wrote {path}", highlight=False, markup=False)
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
