"""``humeval prereg``: a preregistration document from the lock (Markdown + HEDS answers as JSON)."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import Format, emit_json, out

__all__ = ["prereg"]


def prereg(
    directory: Path = typer.Argument(Path("."), help="Study folder (locked, after `humeval design`)."),
    out_dir: Path | None = typer.Option(None, "--out", help="Folder to write into (default: DIR/prereg)."),
    registry: str = typer.Option("", "--registry", help="Where it will be registered (e.g. the OSF project link), written into HEDS 3.3.1."),
    fmt: Format = typer.Option(Format.table, "--format", help="table | json (what was written)"),
) -> None:
    """Write prereg/preregistration.md and prereg/heds.json, tied to the lock's hashes and signature."""
    from humeval.report.prereg import PreregOptions, prereg_with

    result = prereg_with(directory, PreregOptions(out_dir=out_dir, registry=registry))
    if fmt == Format.json:
        emit_json(result.to_json())
        return
    out.print(f"wrote {result.markdown}\nwrote {result.heds}\nsignature: {result.signature}", highlight=False)
