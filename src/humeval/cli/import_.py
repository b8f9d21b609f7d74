"""``humeval import``: platform result files into a judgements file (MTurk) or a status table (Prolific)."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import err


def import_(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    platform: str = typer.Argument(..., help="mturk (batch results CSV) | prolific (submissions export CSV)."),
    file: Path = typer.Argument(..., help="The file downloaded from the platform."),
    output: Path = typer.Option(None, "--output", "-o", help="File to write (default: results/<platform>_....jsonl/csv)."),
    key: Path = typer.Option(None, "--key", help="MTurk: the key file written by `humeval export --format mturk-batch`."),
) -> None:
    """Turn a platform's result file into the study's canonical judgements (MTurk) or a submissions table (Prolific)."""
    import pandas as pd

    from humeval.errors import HumevalError, did_you_mean
    from humeval.study import Study

    study = Study.open(directory)
    if not file.is_file():
        raise HumevalError(f"{file}: no such file")
    if platform == "mturk":
        from humeval.judgements import JUDGEMENT_COLUMNS, write_judgements
        from humeval.platforms.mturk import read_results

        types = {c.name: c.type for c in study.protocol.criteria}
        rows, problems = read_results(file, types, key)
        path = write_judgements(output or study.results_dir / "judgements_mturk.jsonl", pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS))
        err.print(f"wrote {path} ({len(rows)} rows); skipped {len(problems)} answers", highlight=False)
        for p in problems[:20]:
            err.print(f"  {p}", highlight=False, markup=False)
    elif platform == "prolific":
        from humeval.platforms.prolific import read_submissions

        rows = read_submissions(file)
        path = output or study.results_dir / "prolific_submissions.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(path, index=False)
        err.print(f"wrote {path} ({len(rows)} submissions)", highlight=False)
    else:
        raise HumevalError(f"import: unknown platform '{platform}'. {did_you_mean(platform, ['mturk', 'prolific'])}")
