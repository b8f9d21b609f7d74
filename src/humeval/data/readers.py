"""Reading tables (JSONL, CSV, TSV, a JSON array of objects, Parquet) with errors that name the file, line and column."""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from humeval.errors import DataError, did_you_mean
from humeval.extras import require
from humeval.files import (
    csv_uncell,
    decode_text,
    decode_utf8,
    frame_csv,
    iter_json_array,
    read_jsonl,
    write_jsonl,
    write_text,
)

__all__ = ["CSV_DELIMITERS", "SUFFIXES", "WRITTEN_SUFFIXES", "csv_delimiter", "decode_utf8", "read_parquet", "read_table",
           "require_columns", "write_table"]

SUFFIXES = (".jsonl", ".csv", ".tsv", ".json", ".parquet")
#: the delimiters a CSV file may use; :func:`csv_delimiter` finds its own in the header line
CSV_DELIMITERS = ",;\t"
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}
#: the end of the message of a data file without rows (callers that know the expected columns add them)
NO_ROWS = "the file has no rows"


def read_table(path: str | Path) -> pd.DataFrame:
    """Read one data file into a DataFrame (string columns stay strings).

    Text files are UTF-8, or UTF-16/32 with a byte-order mark (:func:`humeval.files.text_encoding`); JSON is read
    on the bounded path of :mod:`humeval.files` (nesting at most :data:`humeval.files.JSON_MAX_DEPTH` levels).

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
    elif suffix == ".csv":
        text = decode_text(path.read_bytes(), where=str(path))
        delimiter = csv_delimiter(text)
        try:
            frame = pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False, na_values=[""])
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            name = _DELIMITER_NAMES[delimiter]
            fields = "Expected" in str(exc) and "fields" in str(exc)  # a row with more cells than the header
            quote = (f"; every row needs as many cells as the header line, so a value holding a {name} must be in "
                     f"double quotes (\"...\")") if fields else ""
            raise DataError(f"{path}: cannot parse CSV (read with the {name} its header line uses): "
                            f"{str(exc).strip()}{quote}") from None
        frame = _uncell(frame)
    elif suffix == ".tsv":
        text = decode_text(path.read_bytes(), where=str(path))
        try:  # tab-separated with literal quotes (as WMT and annotation tools write it)
            frame = pd.read_csv(io.StringIO(text), sep="\t", dtype=str, keep_default_na=False, na_values=[""],
                                quoting=csv.QUOTE_NONE)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise DataError(f"{path}: cannot parse TSV: {str(exc).strip()}") from None
    elif suffix == ".json":
        frame = _read_json_array(path)
    elif suffix == ".parquet":
        frame = read_parquet(path)
    else:
        raise DataError(f"{path}: unsupported file type '{suffix}'. Use one of: {', '.join(SUFFIXES)}")
    if frame.empty:
        raise DataError(f"{path}: {NO_ROWS}")
    return frame


def read_parquet(path: Path, columns: Collection[str] | None = None) -> pd.DataFrame:
    """A Parquet file as a DataFrame: every column, or those of ``columns`` it has (its first when it has none of
    them; the others are never read, so memory follows the columns kept); a :class:`DataError` naming the file when
    it is not Parquet."""
    require("pyarrow", f"reading {path}")
    try:
        if columns is not None:
            import pyarrow.parquet as pq

            names = pq.read_schema(path).names
            columns = [c for c in names if c in columns] or names[:1]  # one column at least: the rows are counted
        return pd.read_parquet(path, columns=None if columns is None else list(columns))
    except Exception as exc:  # pyarrow raises several unrelated types for a corrupt file
        raise DataError(f"{path}: cannot read Parquet ({type(exc).__name__}: {str(exc)[:200]}); expected an Apache "
                        "Parquet file") from None


#: the suffixes :func:`write_table` writes
WRITTEN_SUFFIXES = (".jsonl", ".csv", ".parquet")


def write_table(path: str | Path, table: pd.DataFrame | list[dict[str, Any]], *, what: str = "the file") -> Path:
    """Write ``table`` (a frame, or rows as dicts) in the format its suffix names (JSON lines, CSV or Parquet); a
    :class:`DataError` naming ``what`` for another suffix. Rows given as dicts go to JSON lines as they are."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in WRITTEN_SUFFIXES:
        raise DataError(f"{path}: {what} must be {', '.join(WRITTEN_SUFFIXES[:-1])} or {WRITTEN_SUFFIXES[-1]}, "
                        f"got '{suffix}'")
    if suffix == ".parquet":
        require("pyarrow", f"writing {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".jsonl":
        write_jsonl(path, table if isinstance(table, list) else table.to_dict(orient="records"))
        return path
    frame = pd.DataFrame(table) if isinstance(table, list) else table
    if suffix == ".csv":
        write_text(path, frame_csv(frame))
    else:
        frame.to_parquet(path, index=False)
    return path


def _uncell(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (text cells) with the ``'`` that :func:`humeval.files.csv_cell` puts before a formula-like text
    removed, so a CSV file humeval wrote reads back as it was written."""
    frame.columns = [csv_uncell(c) for c in frame.columns]
    for column in frame.columns:
        cells = frame[column]
        quoted = cells.str.startswith("'", na=False)
        if quoted.any():
            frame.loc[quoted, column] = cells[quoted].map(csv_uncell)
    return frame


def csv_delimiter(text: str) -> str:
    """The delimiter of a CSV text: the one of :data:`CSV_DELIMITERS` its header line uses (``csv.Sniffer`` over
    that line, restricted to comma, semicolon and tab); a comma when the header has none of them."""
    header = next(iter(text.splitlines()), "")
    if not any(d in header for d in CSV_DELIMITERS):
        return ","
    try:
        return csv.Sniffer().sniff(header, delimiters=CSV_DELIMITERS).delimiter
    except csv.Error:
        return ","


def _read_jsonl(path: Path) -> pd.DataFrame:
    return pd.DataFrame(read_jsonl(path))


def _read_json_array(path: Path) -> pd.DataFrame:
    rows = []
    hint = "expected a JSON array of objects (one per row); for one object per line use .jsonl"
    for number, row in iter_json_array(path, hint=hint):
        if not isinstance(row, dict):
            raise DataError(f"{path}: row {number} is a {type(row).__name__}, not an object")
        rows.append(row)
    return pd.DataFrame.from_records(rows)


def require_columns(frame: pd.DataFrame, columns: Iterable[str], *, source: str) -> list[str]:
    """Problems for every column of ``columns`` missing from ``frame`` (empty list: all present)."""
    columns = list(columns)
    have = [str(c) for c in frame.columns]
    wanted = [c for c in columns if c not in frame.columns]
    if len(have) == 1 and len(wanted) > 1 and all(c in have[0] for c in wanted):  # one problem, not one per column
        return [f"{source}: the header line is one column, {have[0]!r}: separate its columns with a comma, a "
                "semicolon or a tab (the delimiters a CSV file may use)"]
    return [
        f"{source}: missing column '{c}'. {did_you_mean(c, have)}" for c in columns if c not in frame.columns
    ]
