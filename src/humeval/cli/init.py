"""``humeval init``: write an example study."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import out


def init(
    directory: Path = typer.Argument(Path("."), help="Folder to create the study in (must not hold a humeval.yaml)."),
    template: str = typer.Option("pairwise", "--template", "-t", help="Example study: pairwise | rating | rankme | demo (the study `humeval demo` runs)."),
    items: int = typer.Option(24, "--items", "-n", help="Number of generated items (pairs for the pairwise template)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the generated data and the study."),
) -> None:
    """Write a commented example study with a small generated data set that validates and runs."""
    from humeval.templates import init_study

    path = init_study(directory, template, items=items, seed=seed)
    out.print(f"wrote {path} and {path.parent / 'data' / 'outputs.jsonl'} ({items} items)")
    out.print(f"next: humeval validate {directory} && humeval lock {directory} && humeval run {directory}")
