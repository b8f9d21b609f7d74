"""``humeval import [DIR] PLATFORM FILE``: a platform's result file into the study's judgements."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import err, print_stage
from humeval.stages.imports import IMPORT_SOURCES

USAGE = ("humeval import [DIR] PLATFORM FILE   (DIR defaults to the current folder; PLATFORM: a platform or the format "
         f"of another tool's file: {IMPORT_SOURCES.help_text()})")


def _split(args: list[str]) -> tuple[Path, str, Path]:
    from humeval.errors import HumevalError

    if len(args) == 2:
        directory, (platform, file) = Path("."), args
    elif len(args) == 3:
        directory, platform, file = Path(args[0]), args[1], args[2]
    else:
        raise HumevalError(f"import: expected 2 or 3 arguments, got {len(args)} ({' '.join(args) or 'none'}). Usage: {USAGE}")
    if platform not in IMPORT_SOURCES and len(args) == 3 and args[0] in IMPORT_SOURCES:
        raise HumevalError(f"import: the study folder comes first: `humeval import {args[1]} {args[0]} {args[2]}`. Usage: {USAGE}")
    return directory, platform, Path(file)


#: the help of import's arguments: every source that can be imported, from the registry
_ARGS_HELP = ("Study folder (optional, default .), platform and the file downloaded from it, or a tool's format and "
              f"its file: {' | '.join(IMPORT_SOURCES.names())}.")


def import_(
    args: list[str] = typer.Argument(..., metavar="[DIR] PLATFORM FILE", help=_ARGS_HELP),
    force: bool = typer.Option(False, "--force", help="Import again even if nothing changed."),
) -> None:
    """Import a platform's result file, or another tool's judgements (FastChat battles, WMT MQM TSV, Label Studio
    or Argilla exports, SummEval JSONL): judgements become results/sources/<platform>-<sha8>.jsonl and
    results/judgements.jsonl is rebuilt, so collate, exclude and analyze see them."""
    from humeval.pipeline import import_judgements
    from humeval.study import StudyFolder

    directory, platform, file = _split(args)
    result = import_judgements(StudyFolder.open(directory), platform, file, force=force)
    print_stage(result)
    for example in result.summary.get("skipped_examples", []):
        err.print(f"  skipped {example}", highlight=False, markup=False)
