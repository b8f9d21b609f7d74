"""``humeval validate``: every check, every problem."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import err, out
from humeval.validate import CHECKS

_HELP = "Check a study and print every problem found (not only the first).\n\nChecks:\n\n" + "\n\n".join(
    f"- {c}" for c in CHECKS
)


def validate(directory: Path = typer.Argument(Path("."), help="Study folder.")) -> None:
    from humeval.validate import study_warnings, validate_study

    problems = validate_study(directory)
    for warning in study_warnings(directory):
        err.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    if problems:
        err.print(f"[bold red]{len(problems)} problem(s):[/]")
        for p in problems:
            err.print(f"  - {p}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    out.print(f"{directory}: valid")


validate.__doc__ = _HELP
