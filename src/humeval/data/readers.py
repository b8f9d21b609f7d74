"""Reading tables (JSONL, CSV, TSV, a JSON array of objects, Parquet) with errors that name the file, line and column."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from humeval.errors import DataError, did_you_mean
from humeval.extras import require
from humeval.files import read_jsonl

__all__ = ["SUFFIXES", "read_table", "require_columns"]

SUFFIXES = (".jsonl", ".csv", ".tsv", ".json", ".parquet")


def read_table(path: str | Path) -> pd.DataFrame:
    """Read one data file into a DataFrame (string columns stay strings).

    ``.json`` is one JSON array of objects (one row each), as FastChat and annotation tools
    write. Raises :class:`DataError` for a missing file, an unknown suffix, a broken JSONL line
    (with its line number), an unparsable CSV, TSV, JSON or Parquet file, or an empty table.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: data file not found")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        frame = _read_jsonl(path)
    elif suffix in (".csv", ".tsv"):
        kind, sep = ("CSV", ",") if suffix == ".csv" else ("TSV", "\t")
        try:  # TSV: tab-separated with literal quotes (as WMT and annotation tools write it)
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], sep=sep,
                                quoting=csv.QUOTE_NONE if sep == "\t" else csv.QUOTE_MINIMAL)
        except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
            raise DataError(f"{path}: cannot parse {kind}: {str(exc).strip()}") from None
    elif suffix == ".json":
        frame = _read_json_array(path)
    elif suffix == ".parquet":
        require("pyarrow", f"reading {path}")
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several unrelated types for a corrupt file
            raise DataError(f"{path}: cannot read Parquet ({type(exc).__name__}: {str(exc)[:200]}); expected an Apache "
                            "Parquet file") from None
    else:
        raise DataError(f"{path}: unsupported file type '{suffix}'. Use one of: {', '.join(SUFFIXES)}")
    if frame.empty:
        raise DataError(f"{path}: the file has no rows")
    return frame


def _read_jsonl(path: Path) -> pd.DataFrame:
    return pd.DataFrame(read_jsonl(path))


def _read_json_array(path: Path) -> pd.DataFrame:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a UTF-8 text file (byte {exc.start}); expected a JSON array of objects") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: broken JSON ({exc.msg} at column {exc.colno}); expected a JSON array "
                        "of objects") from None
    if not isinstance(data, list):
        raise DataError(f"{path}: the JSON is a {type(data).__name__}, not an array of objects (one per row); for one "
                        "object per line use .jsonl")
    bad = next((i for i, row in enumerate(data) if not isinstance(row, dict)), None)
    if bad is not None:
        raise DataError(f"{path}: row {bad + 1} is a {type(data[bad]).__name__}, not an object")
    return pd.DataFrame.from_records(data)


def require_columns(frame: pd.DataFrame, columns: Iterable[str], *, source: str) -> list[str]:
    """Problems for every column of ``columns`` missing from ``frame`` (empty list: all present)."""
    have = [str(c) for c in frame.columns]
    return [
        f"{source}: missing column '{c}'. {did_you_mean(c, have)}" for c in columns if c not in frame.columns
    ]
