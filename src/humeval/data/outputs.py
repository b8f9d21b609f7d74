"""System outputs of a study as one long table: one row per (item, system).

:class:`Outputs` is the one typed view every stage uses (sampling, design, store seeding,
collation's re-run files, platforms, rehearsals): the validated long table and the one
``(item, system) -> text`` lookup. :meth:`humeval.study.Study.outputs` loads it once per
process and caches it by the content hash of the data files and the protocol's ``data``
and ``systems`` sections.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from humeval.data.readers import read_table, require_columns
from humeval.errors import DataError, HumevalError, did_you_mean
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
    for name in spec.files:
        path = root / name
        try:
            frame = read_table(path)
        except HumevalError as exc:
            problems.append(f"data.files: {exc}")
            continue
        if spec.layout == "long":
            needed = [spec.item_id, spec.system, spec.output]
        else:
            needed = [spec.item_id, *systems]
            if not systems:
                problems.append("systems: the wide layout needs the list of system columns under `systems`")
        needed += spec.properties
        missing = require_columns(frame, needed, source=str(path))
        if missing:
            problems.extend(missing)
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
    long["output"] = long["output"].map(_output_text)
    long["format"] = long["format"].fillna("").astype(str).str.strip()
    long["input"] = long["input"].fillna("").astype(str)
    long["references"] = long["references"].map(_reference_text)
    rest = [c for c in long.columns if c not in OUTPUT_COLUMNS]
    return long[OUTPUT_COLUMNS + rest]


def _output_text(value: object) -> str:
    """An output cell as text: a conversation given as a JSON list (JSONL, Parquet) is kept as JSON."""
    if isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, str)):
        items = value.tolist() if hasattr(value, "tolist") else list(value)  # type: ignore[union-attr]
        return json.dumps([dict(t) if isinstance(t, dict) else t for t in items], ensure_ascii=False)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


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
    """Consistency problems of an outputs table (empty list: consistent).

    Checks: no empty item ids; no duplicate (item, system); every item has an output of
    every system; every system named in the protocol exists in the data (unless
    ``declared_systems`` is false: ``humeval validate`` reports those at their line).
    """
    problems: list[str] = []
    if outputs.empty:
        return ["data.files: the data has no rows"]
    blank = outputs["item_id"].str.strip() == ""
    if blank.any():
        problems.append(f"data: {int(blank.sum())} row(s) with an empty item id")
    dup = outputs.duplicated(["item_id", "system"], keep=False)
    if dup.any():
        pairs = outputs.loc[dup, ["item_id", "system"]].drop_duplicates().head(_EXAMPLES)
        shown = ", ".join(f"({r.item_id}, {r.system})" for r in pairs.itertuples())
        problems.append(f"data: {int(dup.sum())} rows repeat an (item, system) pair, e.g. {shown}")
    problems += _format_problems(outputs, protocol)
    present = sorted(outputs["system"].unique())
    for i, name in enumerate(protocol.systems if declared_systems else []):
        if name not in present:
            problems.append(f"systems[{i}]: system '{name}' is not in the data. {did_you_mean(name, present)}")
    counts = outputs.drop_duplicates(["item_id", "system"]).groupby("item_id")["system"].nunique()
    incomplete = counts[counts < len(present)]
    if len(incomplete):
        shown = ", ".join(f"{i} ({n} of {len(present)})" for i, n in incomplete.head(_EXAMPLES).items())
        problems.append(
            f"data: {len(incomplete)} item(s) lack outputs of some systems, e.g. {shown}; every item needs every system"
        )
    return problems


def _format_problems(outputs: pd.DataFrame, protocol: Protocol) -> list[str]:
    """Unknown output formats, and conversation outputs that are not a JSON list of turns."""
    from humeval.render.outputs import OUTPUT_FORMATS, parse_conversation

    problems: list[str] = []
    given = outputs["format"] if "format" in outputs else pd.Series("", index=outputs.index)
    bad = ~given.isin(("", *OUTPUT_FORMATS))
    if bad.any():
        shown = ", ".join(sorted({repr(v) for v in given[bad].head(_EXAMPLES)}))
        problems.append(f"data: {int(bad.sum())} row(s) name an unknown output format in column "
                        f"'{protocol.data.format}' ({shown}); valid: {', '.join(OUTPUT_FORMATS)} or empty")
    effective = given.where(given != "", protocol.presentation.output_format)
    chats = outputs.loc[effective == "conversation"]
    wrong = []
    for row in chats.itertuples(index=False):
        try:
            parse_conversation(row.output, where=f"({row.item_id}, {row.system})")
        except HumevalError as exc:
            wrong.append(str(exc))
    if wrong:
        problems.append(f"data: {len(wrong)} conversation output(s) are not a JSON list of {{role, content}} turns, "
                        f"e.g. {wrong[0]}")
    return problems


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
