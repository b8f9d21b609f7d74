"""The one I/O module: atomic writers and readers of JSON, JSON lines and text, with errors that name the file and line.

Every file humeval writes goes through :func:`write_json`, :func:`write_jsonl`,
:func:`write_text` or :func:`write_bytes` (a temporary file renamed over the target: a
crash never leaves half a file), or :func:`append_jsonl` for append-only logs (fsynced
line by line). Every JSON file it reads goes through :func:`read_json` or
:func:`read_jsonl`, whose :class:`~humeval.errors.DataError` names the file, the line and
what was expected. Tables (CSV, Parquet, JSONL as a DataFrame) are read by
:func:`humeval.data.readers.read_table`, which uses :func:`read_jsonl` for JSON lines.

Every JSON a user gives is read on one bounded path: :func:`read_json` (a whole document),
:func:`iter_jsonl` (one object a line) and :func:`iter_json_array` (the elements of a top-level
array, streamed, so memory follows the rows a caller keeps, not the file). Each checks the nesting
of arrays and objects with :func:`check_json_depth` before ``json`` parses it (the parser recurses
once a level: 100,000 levels would be a ``RecursionError``), and each reads the text in the
encoding its first bytes name (:func:`text_encoding`: UTF-8, or UTF-16/32 by their byte-order mark
or by the NUL bytes of their first characters).

Values are written as valid JSON: NaN and infinities become ``null``, numpy scalars and
arrays plain numbers and lists (:func:`clean`). Every CSV cell humeval writes goes through
:func:`csv_cell` (a text a spreadsheet would run as a formula is prefixed with ``'``), and the
readers of humeval's own CSV files undo it with :func:`csv_uncell`.
"""

from __future__ import annotations

import codecs
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from humeval.errors import DataError
from humeval.secrets import remember

__all__ = [
    "CSV_LINE_END",
    "FORMULA_STARTS",
    "JSON_MAX_DEPTH",
    "JsonDepth",
    "append_jsonl",
    "check_json_depth",
    "clean",
    "csv_cell",
    "csv_chunks",
    "csv_text",
    "csv_uncell",
    "decode_text",
    "decode_utf8",
    "frame_csv",
    "iter_json_array",
    "iter_jsonl",
    "jsonl_chunks",
    "read_json",
    "read_jsonl",
    "read_secret",
    "text_encoding",
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
    """Read a JSON file (UTF-8, or UTF-16/32 as :func:`text_encoding` finds; a byte-order mark allowed); a missing,
    undecodable, too deeply nested (:data:`JSON_MAX_DEPTH`) or broken file is a :class:`DataError` naming it (and
    the line), followed by ``hint``. (:func:`iter_json_array` reads a large array a piece at a time.)"""
    path = Path(path)
    if not path.is_file():
        raise _missing(path, what, hint)
    tail = f"; {hint}" if hint else ""
    data = path.read_bytes()
    try:
        text = decode_text(data, where=str(path))
    except DataError as exc:
        raise DataError(f"{exc}{tail}") from None
    check_json_depth(text, where=str(path), hint=hint)
    return _loads(text, str(path), tail)


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


#: the deepest nesting of arrays and objects within each other that a JSON value humeval reads may have
#: (its data files have 3 or 4 levels; ``json`` recurses once a level, so a deeper value is refused before parsing)
JSON_MAX_DEPTH = 200

#: codecs by byte-order mark (UTF-32 before UTF-16: their marks start alike); each codec drops its mark
_BOMS = ((codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_BE, "utf-16"), (codecs.BOM_UTF16_LE, "utf-16"))
_CODEC_NAMES = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8", "utf-16": "UTF-16", "utf-32": "UTF-32", "utf-16-le": "UTF-16",
                "utf-16-be": "UTF-16", "utf-32-le": "UTF-32", "utf-32-be": "UTF-32"}


def text_encoding(head: bytes) -> str:
    """The codec of a text file from its first four bytes: a byte-order mark names UTF-8, UTF-16 or UTF-32; without
    one, the NUL bytes of an ASCII first character name UTF-16 or UTF-32 and their byte order (the rule of RFC 4627,
    section 3, for JSON; a CSV or TSV header starts with ASCII too); anything else is UTF-8."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec
    if len(head) >= 4 and (not head[0] or not head[1]):
        if not head[0]:
            return "utf-16-be" if head[1] else "utf-32-be"
        return "utf-16-le" if head[2] or head[3] else "utf-32-le"
    return "utf-8"


def decode_text(data: bytes, *, where: str) -> str:
    """``data`` as text in the encoding of :func:`text_encoding` (a byte-order mark dropped); a :class:`DataError`
    naming ``where``, the line and the bad byte when it is not valid in that encoding (:func:`decode_utf8`)."""
    codec = text_encoding(data[:4])
    if codec in ("utf-8", "utf-8-sig"):
        return decode_utf8(data, where=where)
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        name = _CODEC_NAMES[codec]
        raise DataError(f"{where}: the file starts as {name} text (its first bytes: {data[:4]!r}) but byte {exc.start} "
                        f"is not {name} ({exc.reason}); save it as UTF-8") from None


def _depth_classes() -> bytes:
    table = bytearray(256)
    for chars, code in ((b"[{", 1), (b"]}", 2), (b'"', 3), (b"\\", 4)):
        for c in chars:
            table[c] = code
    return bytes(table)


#: ``bytes.translate`` table: 1 opens an array or object, 2 closes one, 3 a quote, 4 a backslash, 0 anything else
_DEPTH_CLASSES = _depth_classes()


class JsonDepth:
    """The nesting depth of JSON text read in pieces (UTF-8 bytes: every byte that matters is ASCII), found with
    NumPy over the bytes that matter: brackets outside strings, quotes that are not escaped, runs of backslashes.

    :meth:`feed` returns the offset (from the first byte fed) of the first bracket that opens level
    ``limit + 1``, or ``None``; the state (depth, inside a string, an escape pending) carries over between pieces.
    The depth is exact for valid JSON and for the valid start of broken JSON (what a parser reads before failing).
    """

    def __init__(self, limit: int = JSON_MAX_DEPTH) -> None:
        self.limit, self.depth, self.in_string, self.escape, self.offset = limit, 0, False, False, 0

    def feed(self, data: bytes) -> int | None:
        import numpy as np

        start, self.offset = self.offset, self.offset + len(data)
        classes = np.frombuffer(data.translate(_DEPTH_CLASSES), dtype=np.uint8)
        at = np.flatnonzero(classes)
        code = classes[at]
        escaped = self._escaped(at[code == 4], len(data))
        quote = code == 3
        if escaped.size:
            quote[quote] = ~np.isin(at[quote], escaped)
        counted = np.cumsum(quote, dtype=np.int64)
        inside = ((counted - quote + self.in_string) & 1).astype(bool)  # inside a string before this byte
        bracket = (code < 3) & ~inside
        steps = np.where(code[bracket] == 1, 1, -1)
        levels = self.depth + np.cumsum(steps, dtype=np.int64)
        if counted.size:
            self.in_string = bool((int(counted[-1]) + self.in_string) & 1)
        if levels.size:
            deep = np.flatnonzero(levels > self.limit)
            if deep.size:
                return start + int(at[bracket][deep[0]])
            self.depth = int(levels[-1])
        return None

    def _escaped(self, backslashes: Any, size: int) -> Any:
        """Offsets of the bytes escaped by a backslash: each byte after a run of an odd number of them."""
        import numpy as np

        pending, self.escape = self.escape, False
        if not backslashes.size:
            return np.array([0]) if pending and size else np.empty(0, dtype=np.int64)
        first = np.ones(backslashes.size, dtype=bool)
        first[1:] = np.diff(backslashes) != 1
        starts = backslashes[first]
        lengths = np.diff(np.append(np.flatnonzero(first), backslashes.size))
        extra = []
        if pending:  # the last piece ended in an odd run: its first byte here is escaped
            if starts[0] == 0:
                starts, lengths = starts.copy(), lengths.copy()
                starts[0], lengths[0] = 1, lengths[0] - 1
            else:
                extra = [0]
        escaped = np.concatenate([extra, (starts + lengths)[lengths % 2 == 1]]).astype(np.int64)
        if escaped.size and escaped[-1] == size:  # the next piece's first byte
            self.escape, escaped = True, escaped[:-1]
        return escaped


def _too_deep(text: bytes, offset: int, where: str, limit: int, hint: str, *, line: int = 1) -> DataError:
    line += text.count(b"\n", 0, offset)
    return DataError(f"{where}:{line}: JSON nested deeper than {limit} levels (arrays and objects within each other, "
                     f"the level {limit + 1} at byte {offset}){'; ' + hint if hint else ''}")


def check_json_depth(text: str | bytes, *, where: str, limit: int = JSON_MAX_DEPTH, hint: str = "",
                     line: int = 1) -> None:
    """A :class:`DataError` naming ``where`` and the line (``text`` starting at ``line``) when JSON ``text`` (a
    string, or UTF-8 bytes) nests deeper than ``limit``.

    Text with no more than ``limit`` opening brackets is never deeper (two ``count`` calls: the common case);
    other text is scanned with :class:`JsonDepth`.
    """
    opens = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if opens <= limit:
        return
    data = text.encode() if isinstance(text, str) else text
    offset = JsonDepth(limit).feed(data)
    if offset is not None:
        raise _too_deep(data, offset, where, limit, hint, line=line)


def _loads(text: str, where: str, tail: str) -> Any:
    """``json.loads`` of text whose depth was checked, its errors as :class:`DataError`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}:{exc.lineno}: broken JSON ({exc.msg} at column {exc.colno}){tail}") from None
    except RecursionError:  # not reached after check_json_depth; kept so that no parse ends in a traceback
        raise DataError(f"{where}: JSON nested deeper than the parser allows{tail}") from None


#: how much of a file :func:`iter_json_array` decodes at a time (an element larger than this is read whole)
_PIECE = 1 << 20
_SPACE = re.compile(r"[ \t\n\r]*")


def _pieces(path: Path, hint: str) -> Iterator[str]:
    """The text of ``path`` in pieces of about :data:`_PIECE` bytes (never empty), each checked by :class:`JsonDepth`
    before it is given out; a :class:`DataError` for a byte the file's encoding does not allow."""
    depth = JsonDepth()
    lines = 1
    with path.open("rb") as fh:
        raw = fh.read(_PIECE)
        codec = text_encoding(raw[:4])
        decoder = codecs.getincrementaldecoder(codec)()
        utf8 = codec in ("utf-8", "utf-8-sig")
        while True:
            try:
                text = decoder.decode(raw, final=not raw)
            except UnicodeDecodeError:  # the error path only: find the line in the whole file
                decode_text(path.read_bytes(), where=str(path))
                raise
            scanned = raw if utf8 else text.encode()
            offset = depth.feed(scanned)
            if offset is not None:
                at = offset - (depth.offset - len(scanned))
                raise _too_deep(scanned, at, str(path), depth.limit, hint, line=lines)
            lines += scanned.count(b"\n")
            if text:
                yield text
            if not raw:
                return
            raw = fh.read(_PIECE)


class _ArrayText:
    """The decoded text of a JSON file as a window over it: what is not parsed yet, and the line where it starts."""

    def __init__(self, path: Path, hint: str) -> None:
        self.pieces, self.where, self.tail = _pieces(path, hint), str(path), f"; {hint}" if hint else ""
        self.buf, self.pos, self.eof = "", 0, False
        self.line, self.column = 1, 0  # where the window starts: its line, and the characters before it on that line

    def more(self, at_least: int = 1) -> bool:
        """Drop the parsed text and append at least ``at_least`` characters (fewer at the end); False at the end."""
        if self.eof:
            return False
        newline = self.buf.rfind("\n", 0, self.pos)
        self.line += self.buf.count("\n", 0, self.pos)
        self.column = self.pos - newline - 1 if newline != -1 else self.column + self.pos
        parts, got = [self.buf[self.pos:]], 0
        while got < at_least:
            piece = next(self.pieces, None)
            if piece is None:
                self.eof = True
                break
            parts.append(piece)
            got += len(piece)
        self.buf, self.pos = "".join(parts), 0
        return got > 0

    def peek(self) -> str:
        """The next character that is not white space (``""`` at the end of the file)."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def value(self) -> Any:
        """The JSON value at the current place (the window grows, doubling, until it holds the whole value)."""
        while True:
            try:
                obj, end = _READ(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if not self.eof:  # parsed again with the window doubled (or, at the end, for the error's place)
                    self.more(max(len(self.buf) - self.pos, _PIECE))
                    continue
                raise self.broken(exc.msg, exc.pos) from None
            if end > len(self.buf) - 3 and not self.eof:
                self.more()  # a number may go on in the next piece: "1.5e" | "10" parses as 1.5 followed by "e"
                continue
            self.pos = end
            return obj

    def broken(self, msg: str, pos: int) -> DataError:
        line, newline = self.line + self.buf.count("\n", 0, pos), self.buf.rfind("\n", 0, pos)
        column = pos - newline if newline != -1 else self.column + pos + 1
        return DataError(f"{self.where}:{line}: broken JSON ({msg} at column {column}){self.tail}")


def iter_json_array(path: str | Path, *, what: str = "file", hint: str = "",
                    unwrap: bool = False) -> Iterator[tuple[int, Any]]:
    """``(number, element)`` of each element (numbered from 1) of the JSON array a file holds, read a piece at a
    time: memory follows the largest element and what the caller keeps, not the file.

    Depth and encoding as :func:`read_json`, errors naming the file and the line. A file that holds an object is
    read whole: with ``unwrap``, an object of one key whose value is an array (``{"battles": [...]}``) gives that
    array's elements; otherwise it is a :class:`DataError` (the JSON is a dict, not an array).
    """
    path = Path(path)
    if not path.is_file():
        raise _missing(path, what, hint)
    text = _ArrayText(path, hint)
    first = text.peek()
    if first != "[":
        data = read_json(path, what=what, hint=hint)  # not an array: read whole, for its own error or unwrapping
        if unwrap and isinstance(data, dict) and len(data) == 1 and isinstance(next(iter(data.values())), list):
            yield from enumerate(next(iter(data.values())), start=1)
            return
        raise DataError(f"{path}: the JSON is a {type(data).__name__}, not an array{text.tail}")
    text.pos += 1
    number = 0
    if text.peek() == "]":
        text.pos += 1
    else:
        while True:
            number += 1
            yield number, text.value()
            after = text.peek()
            text.pos += 1
            if after == "]":
                break
            if after != ",":
                raise text.broken("Expecting ',' delimiter", text.pos - 1)
            text.peek()
    if text.peek():
        raise text.broken("Extra data", text.pos)


def iter_jsonl(path: str | Path, *, what: str = "file", hint: str = "") -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each JSON line (blank lines skipped), with errors that name file and line.

    Encoding as :func:`text_encoding` finds it; a line nested deeper than :data:`JSON_MAX_DEPTH` is refused before
    it is parsed (a line long enough and holding more opening brackets than that is scanned by
    :func:`check_json_depth`)."""
    path = Path(path)
    if not path.is_file():
        raise _missing(path, what, hint)
    with path.open("rb") as fh:
        codec = text_encoding(fh.read(4))
    try:
        yield from _iter_jsonl(path, codec)
    except UnicodeDecodeError:  # found by the reader in a chunk: find the line in the bytes (the error path only)
        decode_text(path.read_bytes(), where=str(path))
        raise


#: a line shorter than this is never too deep for :func:`iter_jsonl`: a valid line opens and closes each level, and
#: a broken one nested up to this many levels ends in a parse error, not in a recursion (the limit is about 1,000)
_DEEP_LINE = 2 * JSON_MAX_DEPTH


def _iter_jsonl(path: Path, codec: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_jsonl` of an existing file (a file not valid in ``codec`` raises :class:`UnicodeDecodeError`)."""
    with path.open(encoding=codec) as fh:
        for lineno, line in enumerate(fh, start=1):
            if len(line) > _DEEP_LINE:
                check_json_depth(line, where=str(path), line=lineno)
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
                except RecursionError:  # a broken line nested deeper than _DEEP_LINE allows for: not reached
                    raise DataError(f"{path}:{lineno}: JSON nested deeper than the parser allows") from None
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
    return remember(secret)
