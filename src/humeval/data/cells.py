"""Cells of a user's file read as text or as a time: what each reader accepts, and its words when it does not.

An id (an item, a system, a participant) is text or a number; an output is text, empty, or a conversation (a
list of ``{role, content}`` objects); neither is bytes (a Parquet ``binary`` column), a list of anything else
(a Parquet ``list`` column) or an object, and no text holds a NUL character (PostgreSQL cannot store it, and a
participant's page would hide what follows it). A time is ISO 8601 text or finite seconds since the epoch,
never NaN. :func:`text_cell` and :func:`time_cell` check one cell where a reader walks its rows;
:func:`column_problems` checks a column of a table and words every problem with the file, the row, the column
and the layout expected.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from humeval.errors import DataError

__all__ = ["column_problems", "data_layout", "output_cell_problems", "text_cell", "time_cell"]

Kind = Literal["id", "output", "references", "text"]
_EXPECTED = {"id": "text or a number", "output": "text, or a conversation as a list of {role, content} objects",
             "references": "text, or a list of texts", "text": "text"}
_EXAMPLES = 3
#: the types of cells that are always valid unless a text holds a NUL character
_PLAIN = {str, int, float, type(None)}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _missing(value: Any) -> bool:
    """None, or pandas' missing values (``pd.NA``, ``pd.NaT``): an empty cell."""
    return value is None or type(value).__name__ in ("NAType", "NaTType")


def _problem(value: Any, kind: Kind) -> str | None:
    """Why ``value`` is not a cell of ``kind`` (``None``: it is one)."""
    if type(value) is str:  # the common case first
        return None if "\x00" not in value else f"holds a NUL character (byte 0) at {value.index(chr(0))}: {_shown(value)}"
    if _missing(value) or isinstance(value, bool):
        return None if _missing(value) else f"is a boolean ({value!r}), not {_EXPECTED[kind]}"
    if isinstance(value, str):
        return _problem(str(value), kind)
    if isinstance(value, (int, float)) or (hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0):
        return None  # numbers (NaN: an empty cell) as pandas gives them, numpy's included
    if isinstance(value, (bytes, bytearray, memoryview)):
        return (f"is bytes ({_shown(bytes(value))}: a Parquet binary column), not {_EXPECTED[kind]}; write the "
                "column as strings")
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        if kind == "output" and all(isinstance(v, dict) for v in value):
            return None  # a conversation (its turns are checked with the output format)
        if kind == "references" and all(isinstance(v, str) for v in value):
            return next((f"holds a NUL character (byte 0) in reference {i + 1}: {_shown(v)}"
                         for i, v in enumerate(value) if "\x00" in v), None)
        what = sorted({type(v).__name__ for v in value}) or ["nothing"]
        return (f"is a list of {len(value)} ({', '.join(what)}: a Parquet list column or a JSON array) "
                f"{_shown(value)}, not {_EXPECTED[kind]}")
    return f"is a {type(value).__name__} {_shown(value)}, not {_EXPECTED[kind]}"


def text_cell(value: Any, *, where: str, what: str, layout: str, kind: Kind = "id") -> str:
    """``value`` as text (``""`` for None); a :class:`DataError` ``where: what ...; expected layout`` when it is
    not a cell of ``kind``."""
    problem = _problem(value, kind)
    if problem is not None:
        raise DataError(f"{where}: {what} {problem}; expected {layout}")
    return "" if _missing(value) else str(value)


def time_cell(value: Any, *, where: str, what: str, layout: str) -> str:
    """A time as ISO 8601 text (``""`` for None or empty text): text is kept as given, a number is seconds since
    the epoch; a :class:`DataError` for NaN, an infinity, a time outside years 1-9999, or any other value."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return ""
    if isinstance(value, str):
        if value.strip().lower() in ("nan", "inf", "-inf", "infinity", "-infinity", "null", "none"):
            raise DataError(f"{where}: {what} {value!r} is not a time; expected {layout}")
        return text_cell(value, where=where, what=what, layout=layout, kind="text")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"{where}: {what} {_shown(value)} is not a time (ISO 8601 text or seconds since the epoch); "
                        f"expected {layout}")
    try:
        if not math.isfinite(value):
            raise ValueError
        return datetime.fromtimestamp(float(value), tz=UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        raise DataError(f"{where}: {what} {value!r} is not a time (seconds since the epoch, finite and within years "
                        f"1-9999); expected {layout}") from None


def column_problems(values: Sequence[Any], column: str, *, source: str, kind: Kind, layout: str,
                    rows: Callable[[int], str] | None = None) -> list[str]:
    """One problem (empty list: none) naming ``source``, ``column``, how many values are not cells of ``kind``, and
    the first few by row (``rows(i)`` names row ``i``; default ``row i+1``), and the ``layout`` expected."""
    if hasattr(values, "tolist"):
        values = values.tolist()  # a pandas column
    types = set(map(type, values))
    if types <= _PLAIN:  # the common case at C speed: text (and numbers, and empty cells) without a NUL character
        texts = values if types == {str} else [v for v in values if type(v) is str]
        if "\x00" not in "".join(texts):
            return []
    bad = [(i, p) for i, v in enumerate(values) if (p := _problem(v, kind)) is not None]
    if not bad:
        return []
    shown = "; ".join(f"{rows(i) if rows is not None else f'row {i + 1}'}: {p}" for i, p in bad[:_EXAMPLES])
    return [f"{source}: column {column!r}: {len(bad)} bad value(s): {shown}; expected {layout}"]


def output_cell_problems(table: Any, spec: Any, systems: Sequence[str], *, source: str, layout: str,
                         rows: Callable[[int], str] | None = None) -> list[str]:
    """The problems of the cells of one data file of outputs (``spec``: the protocol's ``data`` section):
    the item ids and (long layout) the systems are ids, the outputs (each system's column, wide layout) outputs,
    the inputs text, the references text or lists of texts. ``table``: its columns by name (``name in table``, ``table[name]``: a DataFrame, say)."""
    long = spec.layout == "long"
    kinds: list[tuple[str | None, Kind]] = [(spec.item_id, "id")]
    if long:
        kinds.append((spec.system, "id"))
    kinds += [(c, "output") for c in ([spec.output] if long else systems)]
    kinds += [(spec.input, "text"), (spec.references, "references")]
    return [p for name, kind in kinds if name and name in table
            for p in column_problems(table[name], name, source=source, kind=kind, layout=layout, rows=rows)]


def data_layout(spec: Any, needed: Sequence[str]) -> str:
    """The layout of a data file that the protocol's ``data`` section (``spec``) asks for, in words."""
    return (f"one row per {'(item, system)' if spec.layout == 'long' else 'item'} with the columns "
            f"{', '.join(needed)} (data.layout: {spec.layout})")
