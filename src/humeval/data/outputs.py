"""System outputs of a study as one long table: one row per (item, system).

:class:`Outputs` is the one typed view every stage uses (sampling, design, store seeding,
collation's re-run files, platforms, rehearsals): the validated long table and the one
``(item, system) -> text`` lookup. :meth:`humeval.study.StudyFolder.outputs` loads it once per
process and caches it by the content hash of the data files and the protocol's ``data``
and ``systems`` sections.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from humeval.data.cells import data_layout, output_cell_problems
from humeval.data.columns import OutputColumns, check_output_columns, output_text
from humeval.data.readers import read_table, require_columns
from humeval.errors import DataError, HumevalError
from humeval.protocol.models import DataSpec, Protocol

__all__ = ["OUTPUT_COLUMNS", "OutputText", "Outputs", "check_outputs", "load_outputs", "paired", "read_outputs", "to_long"]

#: the canonical columns of an outputs table (``input``, ``references`` and ``format`` may be empty strings;
#: an empty ``format`` is the study's ``presentation.output_format``)
OUTPUT_COLUMNS = ["item_id", "system", "output", "input", "references", "format"]
_EXAMPLES = 5


def read_outputs(spec: DataSpec, systems: list[str], root: Path) -> tuple[pd.DataFrame, list[str]]:
    """Read and reshape the data files; return the long table and the problems found.

    Every file is read (problems of all files are collected); the table is returned
    even when there are problems so that later checks can still run.
    """
    frames, problems = [], []
    if spec.layout == "long":
        needed = [spec.item_id, spec.system, spec.output, *spec.properties]
    else:
        needed = [spec.item_id, *systems, *spec.properties]
    for name in spec.files:
        path = root / name
        try:
            frame = read_table(path)
        except HumevalError as exc:
            layout = f"; expected {data_layout(spec, needed)}" if path.is_file() else ""
            problems.append(f"data.files: {exc}{layout}")
            continue
        if spec.layout == "wide" and not systems:
            problems.append("systems: the wide layout needs the list of system columns under `systems`")
        missing = require_columns(frame, needed, source=str(path))
        if missing:
            problems.extend(missing)
            continue
        cells = output_cell_problems(frame, spec, systems, source=str(path), layout=data_layout(spec, needed))
        if cells:
            problems.extend(cells)
            continue
        frames.append(to_long(frame, spec, systems))
    if not frames:
        return pd.DataFrame(columns=OUTPUT_COLUMNS), problems
    return pd.concat(frames, ignore_index=True), problems


def to_long(frame: pd.DataFrame, spec: DataSpec, systems: list[str]) -> pd.DataFrame:
    """One data table in the canonical long columns (:data:`OUTPUT_COLUMNS` first), by the protocol's ``data`` names."""
    rename = {spec.item_id: "item_id"}
    for src, dst in ((spec.input, "input"), (spec.references, "references"), (spec.format, "format")):
        if src and src in frame.columns:
            rename[src] = dst
    if spec.layout == "long":
        rename |= {spec.system: "system", spec.output: "output"}
        long = frame.rename(columns=rename)
    else:
        keep = [c for c in frame.columns if c not in systems]
        long = frame.melt(id_vars=keep, value_vars=systems, var_name="system", value_name="output")
        long = long.rename(columns=rename)
    for col in ("input", "references", "format"):
        if col not in long.columns:
            long[col] = ""
    long["item_id"] = long["item_id"].astype(str)
    long["system"] = long["system"].astype(str)
    long["output"] = long["output"].map(output_text)
    long["format"] = long["format"].fillna("").astype(str).str.strip()
    long["input"] = long["input"].fillna("").astype(str)
    long["references"] = long["references"].map(_reference_text)
    rest = [c for c in long.columns if c not in OUTPUT_COLUMNS]
    return long[OUTPUT_COLUMNS + rest]


def _reference_text(value: object) -> str:
    """References as text, one per line: a list from JSONL, or an array from Parquet or Arrow."""
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()  # type: ignore[union-attr]
    if isinstance(value, (list, tuple)):
        return "\n".join(str(v) for v in value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def check_outputs(outputs: pd.DataFrame, protocol: Protocol, *, declared_systems: bool = True) -> list[str]:
    """Consistency problems of an outputs table (empty list: consistent): the rules of
    :func:`humeval.data.columns.check_output_columns` (ids, duplicates, formats, systems, complete items)."""
    return check_output_columns(OutputColumns.of(outputs), protocol, declared_systems=declared_systems)


def paired(outputs: pd.DataFrame, protocol: Protocol) -> pd.DataFrame:
    """``outputs`` as pairs when the protocol asks for pair construction (``sampling.pairing``), else unchanged."""
    pairing = protocol.sampling.pairing
    if pairing is None or outputs.empty:
        return outputs
    from humeval.data.pairing import pair_outputs

    seed = protocol.sampling.seed if protocol.sampling.seed is not None else protocol.study.seed
    return pair_outputs(outputs, pairing, seed)


def load_outputs(protocol: Protocol, root: str | Path) -> pd.DataFrame:
    """The study's outputs, restricted to ``protocol.systems`` (as pairs with ``sampling.pairing``);
    :class:`DataError` on any problem."""
    outputs, problems = read_outputs(protocol.data, protocol.systems, Path(root))
    if not problems:
        outputs = paired(outputs, protocol)
    problems += check_outputs(outputs, protocol) if not problems else []
    if problems:
        raise DataError(f"{len(problems)} problem(s) in the data:\n  " + "\n  ".join(problems), problems)
    if protocol.systems:
        outputs = outputs[outputs["system"].isin(protocol.systems)].reset_index(drop=True)
    return outputs


class OutputText(NamedTuple):
    """What participants are shown of one system's output for an item (``format``: empty for the study's)."""

    output: str
    input: str
    references: str
    format: str = ""


@dataclass(frozen=True, eq=False)
class Outputs:
    """The validated outputs of a study (restricted to ``protocol.systems``) and their text lookup."""

    frame: pd.DataFrame

    @classmethod
    def load(cls, protocol: Protocol, root: str | Path) -> Outputs:
        return cls(load_outputs(protocol, root))

    @cached_property
    def texts(self) -> dict[tuple[str, str], OutputText]:
        """``(item_id, system) -> OutputText``: the one lookup of what a participant sees."""
        f = self.frame
        columns = [f[c].fillna("").astype(str) if c in f else pd.Series("", index=f.index) for c in OUTPUT_COLUMNS]
        return {(i, s): OutputText(o, x, r, fmt) for i, s, o, x, r, fmt in zip(*columns, strict=True)}

    def text(self, item_id: str, system: str) -> OutputText:
        """The texts of ``system``'s output for ``item_id`` (empty texts when there is none)."""
        return self.texts.get((item_id, system), OutputText("", "", "", ""))

    @property
    def systems(self) -> list[str]:
        """The systems, sorted."""
        return sorted(self.frame["system"].astype(str).unique())
