"""``humeval analyze``: run the preregistered analysis plan."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import Format, emit_rows, err, print_caveats, print_stage


def analyze(
    directory: Path = typer.Argument(Path("."), help="Study folder (locked; `humeval exclude` run)."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table | json | csv"),
) -> None:
    """Run exactly the plan locked in the protocol; write results/results.json and results/tables/*.csv."""
    from humeval.pipeline import run_stage
    from humeval.study import StudyFolder

    study = StudyFolder.open(directory)
    result = run_stage(study, "analyze", force=force)
    if fmt == Format.table:
        print_stage(result)
    else:  # stdout stays machine readable
        err.print(f"analyze: {'unchanged, skipped' if result.skipped else 'done'}", highlight=False)
    results = study.results("main")
    emit_rows(results.summary_rows(), fmt, title="analysis (preregistered)", json_data=results.to_json(),
              footer=results.signature)
    print_caveats(directory)  # last, where the eye lands: incomplete or undecided results are preliminary
