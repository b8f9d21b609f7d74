"""``humeval metrics``: compute automatic metrics for every output of a long-format file."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import Format, emit_rows, err


def metrics(
    data: Path = typer.Argument(..., help="Long-format file (.jsonl/.csv/.parquet) with output and references (and input) columns."),
    names: str = typer.Option("", "--metrics", "-m", help="Comma-separated metrics (default: reference-based when every row has references, else reference-free)."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the table with auto.<metric> columns here (.jsonl/.csv/.parquet)."),
    cache: Path = typer.Option(None, "--cache", help="Cache folder (default $HUMEVAL_CACHE/metrics or ~/.cache/humeval/metrics)."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table | json | csv (summary per metric)."),
) -> None:
    """Compute BLEU, chrF, ROUGE-1/2/L, METEOR-like, length (or reference-free features; `embed` with the optional model)."""
    from humeval.data.readers import read_table, write_table
    from humeval.metrics import compute_metrics
    from humeval.sampling.prepare import normalise_long

    frame = normalise_long(read_table(data))
    chosen = [n.strip() for n in names.split(",") if n.strip()] or None
    result = compute_metrics(frame, chosen, cache_dir=cache)
    cols = [c for c in result.columns if str(c).startswith("auto.") and c not in frame.columns]
    if out is not None:
        write_table(out, result, what="--out")
        err.print(f"wrote {out}", highlight=False, markup=False)
    rows = [
        {"metric": c, "mean": float(result[c].mean()), "sd": float(result[c].std()), "min": float(result[c].min()),
         "max": float(result[c].max()), "n": int(result[c].notna().sum())}
        for c in cols
    ]
    emit_rows(rows, fmt, title=f"metrics of {data.name}")
