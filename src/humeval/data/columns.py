"""The outputs as plain columns: the consistency rules of the data, and a reader that needs no pandas.

:func:`check_output_columns` is the one place where the rules of an outputs table live (ids,
duplicates, formats, systems, complete items); :func:`humeval.data.outputs.check_outputs` runs it
on a DataFrame. :func:`read_output_columns` reads JSONL data files into columns without pandas,
so that ``humeval validate`` and ``humeval lock`` of a small study start at once; it answers
``None`` for anything it does not read exactly as :func:`humeval.data.outputs.read_outputs`
does (CSV, Parquet, pair construction, values that pandas would convert), and the caller then
reads the files with pandas.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from humeval.data.cells import data_layout, output_cell_problems
from humeval.errors import DataError, HumevalError, did_you_mean
from humeval.files import iter_jsonl

if TYPE_CHECKING:
    import pandas as pd

    from humeval.protocol.models import Protocol

__all__ = ["OutputColumns", "check_output_columns", "output_text", "read_output_columns"]

_EXAMPLES = 5


@dataclass(frozen=True)
class OutputColumns:
    """The columns of a long outputs table that its checks read, one entry per row."""

    item_id: Sequence[Any]
    system: Sequence[Any]
    output: Sequence[Any]
    format: Sequence[Any]
    #: where each row is (``file:line``) when the reader knows it, else empty
    where: Sequence[str] = ()

    @classmethod
    def of(cls, frame: pd.DataFrame) -> OutputColumns:
        """The columns of a DataFrame (``format`` empty when it has none)."""
        n = len(frame)
        fmt = frame["format"].tolist() if "format" in frame.columns else [""] * n
        return cls(frame["item_id"].tolist(), frame["system"].tolist(), frame["output"].tolist(), fmt)

    @property
    def items(self) -> list[str]:
        """The distinct item ids, sorted."""
        return sorted({str(i) for i in self.item_id})

    @property
    def systems(self) -> list[str]:
        """The distinct systems, sorted."""
        return sorted({str(s) for s in self.system})


def output_text(value: object) -> str:
    """An output cell as text: a conversation given as a JSON list (JSONL, Parquet) is kept as JSON."""
    if isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, str)):
        items = value.tolist() if hasattr(value, "tolist") else list(value)  # type: ignore[union-attr,call-overload]
        return json.dumps([dict(t) if isinstance(t, dict) else t for t in items], ensure_ascii=False)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def check_output_columns(columns: OutputColumns, protocol: Protocol, *, declared_systems: bool = True) -> list[str]:
    """Consistency problems of an outputs table (empty list: consistent).

    Checks: no empty item ids; no duplicate (item, system); known output formats and
    conversations that parse; every system named in the protocol exists in the data (unless
    ``declared_systems`` is false: ``humeval validate`` reports those at their line); every
    item has an output of every system.
    """
    ids, systems = columns.item_id, columns.system
    if not len(ids):
        return ["data.files: the data has no rows"]
    problems: list[str] = []
    blank = sum(1 for i in ids if isinstance(i, str) and not i.strip())
    if blank:
        problems.append(f"data: {blank} row(s) with an empty item id")
    pairs = list(zip(ids, systems, strict=True))
    count = Counter(pairs)
    repeated = [p for p in pairs if count[p] > 1]
    if repeated:
        shown = ", ".join(f"({i}, {s})" for i, s in list(dict.fromkeys(repeated))[:_EXAMPLES])
        at = ""
        if len(columns.where) == len(pairs):  # name the rows: the first repeat and the row it repeats
            first: dict[tuple[Any, Any], Any] = {}
            seen = None
            for pair, where in zip(pairs, columns.where, strict=True):
                if pair in first:
                    seen = (first[pair], where)
                    break
                first[pair] = where
            if seen is not None:
                at = f"; {seen[1]} repeats {seen[0]}"
        files = ", ".join(protocol.data.files)
        problems.append(f"data ({files}): {len(repeated)} rows repeat an (item, system) pair, e.g. {shown}{at}; "
                        "each (item, system) pair must have exactly one row")
    problems += _format_problems(columns, protocol)
    present = sorted(set(systems))
    for i, name in enumerate(protocol.systems if declared_systems else []):
        if name not in present:
            problems.append(f"systems[{i}]: system '{name}' is not in the data. {did_you_mean(name, present)}")
    per_item = Counter(i for i, _ in count)
    incomplete = sorted((i, n) for i, n in per_item.items() if n < len(present))
    if incomplete:
        shown = ", ".join(f"{i} ({n} of {len(present)})" for i, n in incomplete[:_EXAMPLES])
        problems.append(
            f"data: {len(incomplete)} item(s) lack outputs of some systems, e.g. {shown}; every item needs every system"
        )
    return problems


def _format_problems(columns: OutputColumns, protocol: Protocol) -> list[str]:
    """Unknown output formats, and conversation outputs that are not a JSON list of turns."""
    default = protocol.presentation.output_format
    if default != "conversation" and all(f == "" for f in columns.format):
        return []  # nothing to check: the renderer (Markdown, Pygments) is not even imported
    from humeval.render.outputs import OUTPUT_FORMATS, parse_conversation

    problems: list[str] = []
    valid = ("", *OUTPUT_FORMATS)
    bad = [f for f in columns.format if f not in valid]
    if bad:
        shown = ", ".join(sorted({repr(v) for v in bad[:_EXAMPLES]}))
        problems.append(f"data: {len(bad)} row(s) name an unknown output format in column "
                        f"'{protocol.data.format}' ({shown}); valid: {', '.join(OUTPUT_FORMATS)} or empty")
    wrong = []
    for item, system, output, fmt in zip(columns.item_id, columns.system, columns.output, columns.format, strict=True):
        if (fmt if fmt != "" else default) == "conversation":
            try:
                parse_conversation(output, where=f"({item}, {system})")
            except HumevalError as exc:
                wrong.append(str(exc))
    if wrong:
        problems.append(f"data: {len(wrong)} conversation output(s) are not a JSON list of {{role, content}} turns, "
                        f"e.g. {wrong[0]}")
    return problems


class _Records:
    """JSON lines as columns by name (``name in table``, ``table[name]``), for :func:`output_cell_problems`."""

    def __init__(self, records: list[dict[str, Any]], have: list[str]) -> None:
        self.records, self.have = records, set(have)

    def __contains__(self, name: str) -> bool:
        return name in self.have

    def __getitem__(self, name: str) -> list[Any]:
        return [r.get(name) for r in self.records]


def _line(numbered: list[tuple[int, dict[str, Any]]], i: int) -> str:
    return f"line {numbered[i][0]}"


class _NeedsPandas(Exception):
    """The data holds something only the pandas reader reads exactly (the caller falls back to it)."""


def read_output_columns(protocol: Protocol, root: str | Path) -> tuple[OutputColumns, list[str]] | None:
    """The outputs of JSONL data files as columns, and the problems found, as
    :func:`humeval.data.outputs.read_outputs` (then ``paired``) would give them; ``None`` when the
    data needs the pandas reader (a CSV or Parquet file, pair construction, values pandas converts)."""
    spec, systems = protocol.data, list(protocol.systems)
    if protocol.sampling.pairing is not None or not spec.files or (spec.layout == "wide" and not systems):
        return None
    if any(Path(name).suffix.lower() != ".jsonl" for name in spec.files):
        return None
    ids: list[str] = []
    names: list[str] = []
    outputs: list[str] = []
    formats: list[str] = []
    where: list[str] = []
    problems: list[str] = []
    needed = [spec.item_id, spec.system, spec.output] if spec.layout == "long" else [spec.item_id, *systems]
    layout = data_layout(spec, [*needed, *spec.properties])
    try:
        for name in spec.files:
            path = Path(root) / name
            if not path.is_file():
                problems.append(f"data.files: {path}: data file not found")
                continue
            try:
                numbered = list(iter_jsonl(path))
            except DataError as exc:
                problems.append(f"data.files: {exc}; expected {layout}")
                continue
            records = [row for _, row in numbered]
            if not records or not all(records):
                raise _NeedsPandas  # an empty table, or rows without columns: pandas words the problem
            have = list(dict.fromkeys(k for r in records for k in r))
            missing = [f"{path}: missing column '{c}'. {did_you_mean(c, have)}"
                       for c in [*needed, *spec.properties] if c not in have]
            if missing:
                problems.extend(missing)
                continue
            cells = output_cell_problems(_Records(records, have), spec, systems, source=str(path), layout=layout,
                                         rows=partial(_line, numbered))
            if cells:
                problems.extend(cells)
                continue
            for item, system, output, fmt in _long_rows(records, have, spec, systems):
                ids.append(item)
                names.append(system)
                outputs.append(output)
                formats.append(fmt)
            if spec.layout == "long":  # one row per line, in order (the wide table's melt has no line per row)
                where.extend(f"{path}:{lineno}" for lineno, _ in numbered)
    except _NeedsPandas:
        return None
    located = len(where) == len(ids)
    return OutputColumns(ids, names, outputs, formats, where if located else ()), problems


def _long_rows(records: list[dict[str, Any]], have: list[str], spec: Any, systems: list[str]) -> list[tuple[str, ...]]:
    """(item id, system, output text, format) per row, in the order of the pandas reader's long table."""
    fmt_col = spec.format if spec.format and spec.format in have else None
    renamed = {spec.item_id: "item_id"}
    for src, dst in ((spec.input, "input"), (spec.references, "references"), (spec.format, "format")):
        if src and src in have:
            renamed[src] = dst
    if spec.layout == "long":
        renamed |= {spec.system: "system", spec.output: "output"}
    elif "system" in have or "output" in have:
        raise _NeedsPandas  # the wide table's melt would meet its own columns
    for src, dst in renamed.items():
        if src != dst and dst in have:
            raise _NeedsPandas  # two columns would take one name
    if fmt_col is None and "format" in have:
        fmt_col = "format"  # a column of that name is kept as it is
    if spec.layout == "long":
        cells = [(r.get(spec.item_id), r.get(spec.system), r.get(spec.output), r.get(fmt_col) if fmt_col else "")
                 for r in records]
    else:
        cells = [(r.get(spec.item_id), s, r.get(s), r.get(fmt_col) if fmt_col else "") for s in systems for r in records]
    rows: list[tuple[str, ...]] = []
    for item, system, output, fmt in cells:
        # str and int ids read as pandas reads them; a missing or float id becomes 'nan' or '1.0' there
        if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in (item, system)):
            raise _NeedsPandas
        if not (output is None or isinstance(output, (str, list))) or not (fmt is None or isinstance(fmt, str)):
            raise _NeedsPandas
        rows.append((str(item), str(system), output_text(output), (fmt or "").strip()))
    return rows
