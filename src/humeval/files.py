"""The one I/O module: atomic writers and readers of JSON, JSON lines and text, with errors that name the file and line.

Every file humeval writes goes through :func:`write_json`, :func:`write_jsonl`,
:func:`write_text` or :func:`write_bytes` (a temporary file renamed over the target: a
crash never leaves half a file), or :func:`append_jsonl` for append-only logs (fsynced
line by line). Every JSON file it reads goes through :func:`read_json` or
:func:`read_jsonl`, whose :class:`~humeval.errors.DataError` names the file, the line and
what was expected. Tables (CSV, Parquet, JSONL as a DataFrame) are read by
:func:`humeval.data.readers.read_table`, which uses :func:`read_jsonl` for JSON lines.

Values are written as valid JSON: NaN and infinities become ``null``, numpy scalars and
arrays plain numbers and lists (:func:`clean`). Every CSV cell humeval writes goes through
:func:`csv_cell` (a text a spreadsheet would run as a formula is prefixed with ``'``), and the
readers of humeval's own CSV files undo it with :func:`csv_uncell`.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from humeval.errors import DataError

__all__ = [
    "CSV_LINE_END",
    "FORMULA_STARTS",
    "append_jsonl",
    "clean",
    "csv_cell",
    "csv_chunks",
    "csv_text",
    "csv_uncell",
    "decode_utf8",
    "frame_csv",
    "iter_jsonl",
    "jsonl_chunks",
    "read_json",
    "read_jsonl",
    "read_secret",
    "write_bytes",
    "write_json",
    "write_jsonl",
    "write_text",
]


def clean(obj: Any) -> Any:
    """``obj`` with NaN/inf replaced by None and numpy values turned into Python ones."""
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, (int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return clean(obj.tolist())
    if hasattr(obj, "item"):
        return clean(obj.item())
    return obj


_LINE = json.JSONEncoder(ensure_ascii=False, allow_nan=False)  # one encoder for every line (json.dumps builds one a call)
#: one decoder for every line: its ``raw_decode`` skips the two whitespace regular expressions ``json.loads``
#: runs a call (a third of reading a short line; a large study's design holds a million lines)
_READ = json.JSONDecoder().raw_decode


def _dumps(data: Any, indent: int | None = None) -> str:
    try:  # plain Python values (most rows) need no cleaning: json refuses NaN and numpy ints itself
        return _LINE.encode(data) if indent is None else json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return json.dumps(clean(data), indent=indent, ensure_ascii=False, allow_nan=False, default=str)


def _atomic(path: str | Path, write: Any) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) atomically."""
    return _atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` atomically."""
    return _atomic(path, lambda tmp: tmp.write_bytes(data))


def write_json(path: str | Path, data: Any) -> Path:
    """Write ``data`` as indented JSON atomically."""
    return write_text(path, _dumps(data, indent=2) + "\n")


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> Path:
    """Write rows (dicts, or objects with ``to_json()``) as JSON lines atomically."""

    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(_dumps(row.to_json() if hasattr(row, "to_json") else row) + "\n")

    return _atomic(path, write)


def jsonl_chunks(rows: Iterable[dict[str, Any]], *, rows_per_chunk: int = 2000) -> Iterator[bytes]:
    """Rows as UTF-8 JSON lines, ``rows_per_chunk`` rows a chunk (a download streamed as it is encoded)."""
    chunk: list[str] = []
    for row in rows:
        chunk.append(_dumps(row) + "\n")
        if len(chunk) >= rows_per_chunk:
            yield "".join(chunk).encode()
            chunk = []
    if chunk:
        yield "".join(chunk).encode()


#: the first characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a CSV cell as a formula
#: (OWASP, "CSV Injection"): ``=``, ``+``, ``-``, ``@``, tab and carriage return
FORMULA_STARTS = frozenset("=+-@\t\r")
#: a plain decimal number (``-1.5``, ``+2``, ``1e-3``): a spreadsheet reads it as a number, never as a formula
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _escaped(text: str) -> bool:
    """Whether ``text`` (after any leading ``'``) starts with a formula character and is not a plain number."""
    quoted = text[:1] == "'"
    return text.lstrip("'")[:1] in FORMULA_STARTS and (quoted or _NUMBER.fullmatch(text) is None)


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell that no spreadsheet runs: a text starting with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return gets a leading ``'`` (OWASP's rule for CSV injection), and so does a text that already starts
    with ``'`` before one of them (so :func:`csv_uncell` gives every text back exactly). Plain numbers (``-1.5``,
    as a number or as text) and every other value are returned as they are.

    >>> csv_cell("=SUM(A1:A9)"), csv_cell("- a list"), csv_cell("-1.5"), csv_cell(-1.5), csv_cell("'=x")
    ("'=SUM(A1:A9)", "'- a list", '-1.5', -1.5, "''=x")
    """
    return "'" + value if isinstance(value, str) and _escaped(value) else value


def csv_uncell(value: Any) -> Any:
    """A cell of a CSV file humeval wrote, as it was before :func:`csv_cell` (the leading ``'`` it added removed)."""
    return value[1:] if isinstance(value, str) and value[:1] == "'" and _escaped(value) else value


#: the end of a CSV line humeval writes: CRLF (RFC 4180), so that a cell holding a carriage return is quoted (with a
#: bare LF, Python's and pandas' writers leave it unquoted, and a reader starts a new row, and a new first cell, there)
CSV_LINE_END = "\r\n"


def frame_csv(frame: Any) -> str:
    """The DataFrame ``frame`` as CSV text (no index), text cells through :func:`csv_cell` (numeric columns untouched)."""
    out = frame.copy()
    out.columns = [csv_cell(c) for c in out.columns]
    for i, dtype in enumerate(out.dtypes):
        if str(dtype) in ("object", "string", "str"):
            out.isetitem(i, out.iloc[:, i].map(csv_cell))
    return out.to_csv(index=False, lineterminator=CSV_LINE_END)


def csv_text(lines: Iterable[Iterable[Any]]) -> str:
    """``lines`` (the header, then the rows, each a sequence of cells) as CSV text, every cell through
    :func:`csv_cell`."""
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator=CSV_LINE_END).writerows([csv_cell(c) for c in line] for line in lines)
    return buf.getvalue()


def csv_chunks(rows: Iterable[dict[str, Any]], columns: list[str], *, rows_per_chunk: int = 2000) -> Iterator[bytes]:
    """Rows as UTF-8 CSV with a header of ``columns``, ``rows_per_chunk`` rows a chunk; None and NaN are empty cells,
    and texts a spreadsheet would run are neutralised (:func:`csv_cell`)."""
    import csv
    import io

    def cell(value: Any) -> Any:
        return "" if value is None or (isinstance(value, float) and not math.isfinite(value)) else csv_cell(value)

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=CSV_LINE_END)
    writer.writerow([csv_cell(c) for c in columns])
    for n, row in enumerate(rows, start=1):
        writer.writerow([cell(row.get(c)) for c in columns])
        if n % rows_per_chunk == 0:
            yield buf.getvalue().encode()
            buf.seek(0)
            buf.truncate()
    if buf.tell():
        yield buf.getvalue().encode()


def append_jsonl(path: str | Path, row: Any) -> None:
    """Append one JSON line and fsync it (append-only logs: the logbook)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(_dumps(row) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _missing(path: Path, what: str, hint: str) -> DataError:
    return DataError(f"{path}: no {what}{'; ' + hint if hint else ''}")


def read_json(path: str | Path, *, what: str = "file", hint: str = "") -> Any:
    """Read a JSON file (UTF-8, a byte-order mark allowed); a missing, undecodable or broken file is a
    :class:`DataError` naming it (and the line), followed by ``hint``."""
    path = Path(path)
    if not path.is_file():
        raise _missing(path, what, hint)
    tail = f"; {hint}" if hint else ""
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a UTF-8 text file (byte {exc.start}){tail}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: broken JSON ({exc.msg} at column {exc.colno}){tail}") from None


def decode_utf8(data: bytes, *, where: str) -> str:
    """``data`` decoded as UTF-8 (a byte-order mark is dropped); a :class:`DataError` naming the line, the
    bad byte and its neighbourhood when it is not UTF-8 (a file saved as Latin-1 or Windows-1252, say)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        shown = data[start: end if end != -1 else len(data)].decode("cp1252", errors="replace").strip()
        if len(shown) > 80:
            at = exc.start - start
            shown = ("..." if at > 40 else "") + shown[max(0, at - 40): at + 40] + "..."
        raise DataError(
            f"{where}:{line}: byte 0x{data[exc.start]:02x} is not UTF-8 (line {line}: {shown!r}); the file was "
            "saved in another encoding (Latin-1 or Windows-1252, as spreadsheet programs do): save it as UTF-8 "
            "(\"CSV UTF-8\" in a spreadsheet's Save As, or `iconv -f latin1 -t utf-8 in.csv > out.csv`)"
        ) from None


def iter_jsonl(path: str | Path, *, what: str = "file", hint: str = "") -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each JSON line (blank lines skipped), with errors that name file and line."""
    path = Path(path)
    if not path.is_file():
        raise _missing(path, what, hint)
    try:
        yield from _iter_jsonl(path)
    except UnicodeDecodeError:  # found by the reader in a chunk: find the line in the bytes (the error path only)
        decode_utf8(path.read_bytes(), where=str(path))
        raise


def _iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_jsonl` of an existing file (a file that is not UTF-8 raises :class:`UnicodeDecodeError`)."""
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            try:
                row, end = _READ(line)
                if end != len(line) and line[end:].strip():
                    raise ValueError("extra data")
            except ValueError:  # blank, leading blanks, extra data or broken: json.loads decides, and words the error
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    snippet = line.strip()[:60]
                    raise DataError(f"{path}:{lineno}: broken JSON line ({exc.msg} at column {exc.colno}): {snippet!r}") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}:{lineno}: each JSONL line must be an object, got {type(row).__name__}")
            yield lineno, row


def read_jsonl(path: str | Path, *, what: str = "file", hint: str = "") -> list[dict[str, Any]]:
    """Read JSON lines (one object per line, blank lines skipped) with errors that name file and line."""
    return [row for _, row in iter_jsonl(path, what=what, hint=hint)]


def read_secret(path: str | Path, study_root: Path, what: str, error: type[Exception] = DataError) -> str:
    """A secret (an API key or token) from a file outside the study folder, stripped (a relative ``path`` is
    relative to the working folder); ``error`` (naming ``what``)
    for a file inside the folder (it is shared and archived with the study), a missing file or an empty one."""
    path = Path(path).expanduser()
    if path.resolve().is_relative_to(study_root.resolve()):
        raise error(f"{path}: the {what} file is inside the study folder {study_root}; move it out (the folder is "
                    "shared and archived with the study)")
    if not path.is_file():
        raise error(f"{path}: no such {what} file")
    secret = path.read_text(encoding="utf-8").strip()
    if not secret:
        raise error(f"{path}: the {what} file is empty")
    return secret
