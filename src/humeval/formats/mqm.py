"""MQM error annotations in the WMT TSV layout (google/wmt-mqm-human-evaluation), as ``esa`` judgements.

The layout: a tab-separated file with the header ``system doc doc_id seg_id rater source
target category severity`` (and, in later releases, ``comment``); one row per error, or one
``No-error`` row for a segment without errors. The erroneous span is marked ``<v>...</v>``
in the target (or in the source, for a source error); quotes are literal (no CSV quoting).

One judgement per (rater, system, segment): ``participant_id`` = rater, ``item_id`` = the
``item`` column(s), ``system``, ``criterion`` as given; ``spans`` holds every error as
``{"start", "end", "severity", "category", "weight"}`` with character offsets into the target
without its marks, ``severity`` ``minor`` or ``major`` (``Critical`` counts as ``major``);
an error marked only in the source, or a ``Non-translation`` without marks, keeps its place as
the whole target (non-translation) or as an empty span at 0. ``Neutral`` rows are not errors
and are left out. ``weight`` is the error's weight in Freitag et al. (2021): major 5, minor 1,
minor ``Fluency/Punctuation`` 0.1, ``Non-translation`` 25 (:func:`humeval.tasks.mqm.mqm_weights`, the scoring
of the ``mqm`` task type). Their sum is the segment's MQM
score, 0 (no error) to 25 (the protocol's cap of five errors makes 25, five major errors or one
non-translation, the worst); ``value`` puts it on the 0-100 scale of an ``esa`` criterion,
higher better: ``100 - 4 * min(MQM score, 25)``, so a judgement is valid for the analysis
(means per system) and the span analysis reads the spans.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd

from humeval.data.cells import text_cell
from humeval.errors import DataError
from humeval.files import decode_text
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.tasks.mqm import WORST, mqm_value, mqm_weight

__all__ = ["MQM_COLUMNS", "MQM_LAYOUT", "MQM_WORST", "mqm_documents", "mqm_weight", "read_mqm"]

MQM_COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
MQM_LAYOUT = ("a WMT MQM TSV: tab-separated, header " + " ".join(MQM_COLUMNS) + " [comment], one row per error "
              "with the span marked <v>...</v>, severity Major, Minor, Neutral or No-error")
_SEVERITY = {"major": "major", "critical": "major", "minor": "minor"}
_SKIP = {"neutral", "no-error"}
#: the worst segment score of the MQM protocol (five major errors, or a non-translation)
MQM_WORST = WORST
_MARK = re.compile(r"<v>(.*?)</v>", re.DOTALL)


def _spans(target: str, where: str) -> tuple[str, list[tuple[int, int]]]:
    """The target without its ``<v>`` marks, and the marked spans as offsets into it; a :class:`DataError` for a
    mark left over (a ``<v>`` never closed, a ``</v>`` never opened, or one span inside another)."""
    out, spans, pos = [], [], 0
    for match in _MARK.finditer(target):
        out.append(target[pos:match.start()])
        start = sum(map(len, out))
        out.append(match.group(1))
        spans.append((start, start + len(match.group(1))))
        pos = match.end()
    out.append(target[pos:])
    text = "".join(out)
    for mark in ("<v>", "</v>"):
        if mark in text:
            raise DataError(f"{where}: the target {target[:80]!r} has a {mark} mark without its "
                            f"{'closing </v>' if mark == '<v>' else 'opening <v>'} (spans do not nest); "
                            f"expected {MQM_LAYOUT}")
    return text, spans


def read_mqm(path: str | Path, *, criterion: str = "mqm", item: str = "seg_id") -> pd.DataFrame:
    """``esa`` judgements (the long table of :mod:`humeval.judgements`, ``task_id`` empty) from an MQM TSV.

    ``item``: the column naming the item, or several joined by ``+`` (``doc+seg_id``).
    Raises :class:`DataError` naming the file, the line and the expected layout for a file
    that is not UTF-8 (or UTF-16/32 with a byte-order mark), lacks a column, has a line of the wrong width, an
    unknown severity, a ``<v>`` mark not closed, or a NUL character in the rater, the system or the item.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no MQM file")
    try:
        lines = decode_text(path.read_bytes(), where=str(path)).splitlines()
    except DataError as exc:
        raise DataError(f"{exc}; expected {MQM_LAYOUT}") from None
    if not lines:
        raise DataError(f"{path}: empty file; expected {MQM_LAYOUT}")
    header = lines[0].split("\t")
    missing = [c for c in MQM_COLUMNS if c not in header]
    item_columns = item.split("+")
    missing += [c for c in item_columns if c not in header and c not in missing]
    if missing:
        raise DataError(f"{path}:1: missing column(s) {', '.join(missing)} in the header {header[:10]}; expected {MQM_LAYOUT}")
    at = {name: header.index(name) for name in header}
    groups: dict[tuple[str, str, str], list[dict[str, object]]] = {}
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) < len(MQM_COLUMNS) or len(cells) > len(header):
            raise DataError(f"{path}:{lineno}: {len(cells)} tab-separated fields, the header has {len(header)}; "
                            f"expected {MQM_LAYOUT}")
        cells += [""] * (len(header) - len(cells))
        get = {name: cells[i].strip() for name, i in at.items()}.__getitem__
        where = f"{path}:{lineno}"
        names = [text_cell(get(c), where=where, what=c, layout=MQM_LAYOUT) for c in ("rater", "system", *item_columns)]
        key = (names[0], names[1], ":".join(names[2:]))
        if not all(key):
            raise DataError(f"{path}:{lineno}: rater, system and {item} must not be empty, got {key}")
        spans = groups.setdefault(key, [])
        raw = get("severity").lower()
        if raw in _SKIP or get("category").lower() == "no-error":
            continue
        severity = _SEVERITY.get(raw)
        if severity is None:
            raise DataError(f"{path}:{lineno}: severity {get('severity')!r} is not valid; valid: Major, Minor, "
                            "Critical, Neutral, No-error")
        text, marked = _spans(cells[at["target"]], where)
        category = get("category")
        if not marked:
            marked = [(0, len(text))] if category.lower().startswith("non-translation") else [(0, 0)]
        for start, end in marked:
            spans.append({"start": start, "end": end, "severity": severity, "category": category,
                          "weight": mqm_weight(category, severity)})
    if not groups:
        raise DataError(f"{path}: no annotation rows under the header; expected {MQM_LAYOUT}")
    rows = [{"participant_id": rater, "list_id": "", "task_id": "", "kind": "task", "item_id": item_id,
             "criterion": criterion, "system": system, "system_b": "", "position": 0,
             "value": float(mqm_value(sum(float(str(e["weight"])) for e in spans), MQM_WORST)), "choice": "",
             "seconds": math.nan, "submitted_at": "", "stop_seq": pd.NA,
             "spans": json.dumps(spans, ensure_ascii=False), "comment": ""}
            for (rater, system, item_id), spans in groups.items()]
    return pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS)


def mqm_documents(path: str | Path, *, item: str = "seg_id") -> dict[str, tuple[str, str]]:
    """``item -> (doc, doc_id)`` of a WMT MQM TSV (the columns a study does not keep), for
    :func:`humeval.tasks.mqm.mqm_tsv` to write them back; ``item`` as for :func:`read_mqm`. A :class:`DataError`
    for a file without those columns or one item in two documents."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no MQM file (the documents to write back)")
    lines = decode_text(path.read_bytes(), where=str(path)).splitlines()
    header = lines[0].split("\t") if lines else []
    item_columns = item.split("+")
    missing = [c for c in ("doc", "doc_id", *item_columns) if c not in header]
    if missing:
        raise DataError(f"{path}:1: missing column(s) {', '.join(missing)} in the header {header[:10]}; "
                        f"expected {MQM_LAYOUT}")
    at = {name: header.index(name) for name in header}
    documents: dict[str, tuple[str, str]] = {}
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t") + [""] * len(header)
        key = ":".join(cells[at[c]].strip() for c in item_columns)
        doc = (cells[at["doc"]].strip(), cells[at["doc_id"]].strip())
        if documents.setdefault(key, doc) != doc:
            raise DataError(f"{path}:{lineno}: {item} {key!r} is in document {doc} here and in "
                            f"{documents[key]} before; expected one document per {item}")
    return documents
