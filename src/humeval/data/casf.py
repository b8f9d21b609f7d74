"""Loader for the CASF reference sets (``shared/data/casf/*.jsonl``, see its README).

One row per (sample, system) with ``sample_id``, ``system``, ``output``, ``source``,
``references`` (a list), ``human.*`` and sometimes ``auto.*`` columns. The loader returns
the canonical long layout of humeval (``item_id``, ``system``, ``output``, ``input``,
``references``) plus every ``human.*``/``auto.*`` column, in file order.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from humeval.data.readers import read_table, require_columns
from humeval.errors import DataError, did_you_mean

__all__ = ["CASF_SETS", "PAPER_SETS", "casf_dir", "load_casf", "strip_mqm_markup"]

#: every set in shared/data/casf, in the order of its README
CASF_SETS = (
    "newsroom",
    "newstest2021_zhen",
    "usr_personachat",
    "thumb_mscoco",
    "summeval",
    "thumb_cnndm",
    "wmt21_ted_ende_mqm",
)
#: the four sets whose rows appear in the CASF paper's Table 1 and whose pickles the authors ship
PAPER_SETS = CASF_SETS[:4]
_MARKUP = re.compile(r"</?v>")


def casf_dir(shared: str | Path | None = None) -> Path:
    """``<shared>/casf``; ``shared`` defaults to ``$HUMEVAL_SHARED_DATA`` or ``../shared/data`` of the working tree."""
    if shared is None:
        env = os.environ.get("HUMEVAL_SHARED_DATA")
        shared = Path(env) if env else Path(__file__).resolve().parents[3].parent / "shared" / "data"
    return Path(shared) / "casf"


def strip_mqm_markup(text: str) -> str:
    """Remove MQM error-span markup ``<v>...</v>`` (human-annotation information) from a text."""
    return _MARKUP.sub("", text)


def load_casf(name: str, shared: str | Path | None = None, *, strip_markup: bool = True) -> pd.DataFrame:
    """The CASF set ``name`` (or a path to such a JSONL file) as a long table.

    ``strip_markup`` removes MQM ``<v>`` markup from outputs and references (on by default:
    the markup leaks the human annotation into text features; stored ``auto.*`` columns are
    kept as given).
    """
    path = Path(name)
    if path.suffix != ".jsonl":
        if name not in CASF_SETS:
            raise DataError(f"casf: unknown data set '{name}'. {did_you_mean(name, CASF_SETS)}")
        path = casf_dir(shared) / f"{name}.jsonl"
    frame = read_table(path)
    problems = require_columns(frame, ["sample_id", "system", "output"], source=str(path))
    if problems:
        raise DataError("; ".join(problems), problems)
    refs = frame["references"] if "references" in frame.columns else pd.Series([[]] * len(frame))
    refs = refs.map(lambda v: [str(r) for r in v] if isinstance(v, list) else ([str(v)] if isinstance(v, str) and v else []))
    out = pd.DataFrame(
        {
            "item_id": frame["sample_id"].astype(str),
            "system": frame["system"].astype(str),
            "output": frame["output"].fillna("").astype(str),
            "input": frame["source"].fillna("").astype(str) if "source" in frame.columns else "",
            "references": refs,
        }
    )
    if strip_markup:
        out["output"] = out["output"].map(strip_mqm_markup)
        out["references"] = out["references"].map(lambda rs: [strip_mqm_markup(r) for r in rs])
    for col in frame.columns:
        if str(col).startswith(("human.", "auto.")):
            out[col] = pd.to_numeric(frame[col], errors="coerce")
    for col in ("doc",):
        if col in frame.columns:
            out[col] = frame[col].astype(str)
    return out
