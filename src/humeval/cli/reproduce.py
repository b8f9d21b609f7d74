"""``humeval reproduce``: a paper's numbers beside ours."""

from __future__ import annotations

import typer

from humeval.cli._common import Format, emit_rows
from humeval.reproduce import REPRODUCTIONS


def reproduce(
    name: str = typer.Argument(..., help=f"Which reproduction: {', '.join(REPRODUCTIONS)}."),
    iterations: int = typer.Option(None, "--iterations", "-i", help="Simulation/bootstrap iterations (default: the paper's)."),
    seed: int = typer.Option(None, "--seed", help="Seed (default: the reproduction's documented seed)."),
    fast: bool = typer.Option(False, "--fast", help="Reduced form (as run in CI): fewer iterations, same checks."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table | json | csv"),
) -> None:
    """Recompute a paper's table from the reference data and print paper vs ours, with a note per difference."""
    from humeval.reproduce import get_reproduction

    kwargs = {"fast": fast, "iterations": iterations}
    if seed is not None:
        kwargs["seed"] = seed
    result = get_reproduction(name)(**kwargs)
    data = result.to_json()
    emit_rows(data["rows"], fmt, title=f"reproduce {name}", json_data=data)
