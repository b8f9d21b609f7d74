"""``humeval posthoc``: analyses beyond the plan, written to results/posthoc/<name>/ and marked post hoc."""

from __future__ import annotations

from pathlib import Path

import typer
import yaml

from humeval.cli._common import Format, emit_rows, err
from humeval.errors import HumevalError


def _parse(settings: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise HumevalError(f"posthoc --set: expected key=value (e.g. tests=parametric), got '{item}'")
        out[key.strip()] = yaml.safe_load(value)
    return out


def posthoc(
    name: str = typer.Argument(..., help="Name of this post hoc analysis (folder under results/posthoc/)."),
    directory: Path = typer.Argument(Path("."), help="Study folder (after `humeval analyze`)."),
    settings: list[str] = typer.Option([], "--set", help="Analysis setting to change, key=value (YAML value), e.g. --set tests=parametric --set 'rankings=[trueskill]'."),
    correlation: str = typer.Option(None, "--correlation", help="Correlations between criteria: spearman | pearson | kendall."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing post hoc analysis of this name."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table | json | csv"),
) -> None:
    """Run a post hoc analysis; never changes the preregistered results/results.json."""
    from humeval.analysis.posthoc import PosthocOptions, posthoc_with

    options = PosthocOptions(overrides=_parse(settings), correlation=correlation, force=force)
    results, paths = posthoc_with(directory, name, options)
    for p in paths:
        err.print(f"  wrote {p}", highlight=False, markup=False)
    emit_rows(results.summary_rows(), fmt, title=f"POST HOC: {name}", json_data=results.to_json(),
              footer=results.signature)
