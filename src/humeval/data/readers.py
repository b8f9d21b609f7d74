"""Reading tables (JSONL, CSV, Parquet) with errors that name the file, line and column."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from humeval.errors import DataError, did_you_mean
from humeval.extras import require
from humeval.files import read_jsonl

__all__ = ["SUFFIXES", "read_table", "require_columns"]

SUFFIXES = (".jsonl", ".csv", ".parquet")


def read_table(path: str | Path) -> pd.DataFrame:
    """Read one data file into a DataFrame (string columns stay strings).

    Raises :class:`DataError` for a missing file, an unknown suffix, a broken JSONL line
    (with its line number), an unparsable CSV or Parquet file, or an empty table.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: data file not found")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        frame = _read_jsonl(path)
    elif suffix == ".csv":
        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
            raise DataError(f"{path}: cannot parse CSV: {str(exc).strip()}") from None
    elif suffix == ".parquet":
        require("pyarrow", f"reading {path}")
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several unrelated types for a corrupt file
            raise DataError(f"{path}: cannot read Parquet: {exc}") from None
    else:
        raise DataError(f"{path}: unsupported file type '{suffix}'. Use one of: {', '.join(SUFFIXES)}")
    if frame.empty:
        raise DataError(f"{path}: the file has no rows")
    return frame


def _read_jsonl(path: Path) -> pd.DataFrame:
    return pd.DataFrame(read_jsonl(path))


def require_columns(frame: pd.DataFrame, columns: Iterable[str], *, source: str) -> list[str]:
    """Problems for every column of ``columns`` missing from ``frame`` (empty list: all present)."""
    have = [str(c) for c in frame.columns]
    return [
        f"{source}: missing column '{c}'. {did_you_mean(c, have)}" for c in columns if c not in frame.columns
    ]
