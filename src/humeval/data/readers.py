"""Reading tables (JSONL, CSV, Parquet) with errors that name the file, line and column."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from humeval.errors import DataError, did_you_mean

__all__ = ["SUFFIXES", "read_table", "require_columns", "write_jsonl"]

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
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                snippet = line.strip()[:60]
                raise DataError(f"{path}:{lineno}: broken JSON line ({exc.msg} at column {exc.colno}): {snippet!r}") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}:{lineno}: each JSONL line must be an object, got {type(row).__name__}")
            rows.append(row)
    return pd.DataFrame(rows)


def require_columns(frame: pd.DataFrame, columns: Iterable[str], *, source: str) -> list[str]:
    """Problems for every column of ``columns`` missing from ``frame`` (empty list: all present)."""
    have = [str(c) for c in frame.columns]
    return [
        f"{source}: missing column '{c}'. {did_you_mean(c, have)}" for c in columns if c not in frame.columns
    ]


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> Path:
    """Write rows as JSON lines atomically (a crash never leaves half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, default=_plain) + "\n")
    tmp.replace(path)
    return path


def _plain(obj: object) -> object:
    if hasattr(obj, "item"):
        return obj.item()  # numpy scalars
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"cannot write {type(obj).__name__} to JSON")
