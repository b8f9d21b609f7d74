"""Judgement files from other tools, by format name: one entry point for the Python API and ``humeval import``.

The formats are the registry :data:`JUDGEMENT_FORMATS` (its table: docs/data-formats.md).

:func:`read_judgement_file` returns the long judgements table of :mod:`humeval.judgements`
with ``task_id`` empty; :func:`match_tasks` gives each judgement the study's task that
shows its item, systems and criterion (``humeval import`` does both).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from humeval.errors import DataError, did_you_mean
from humeval.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["JUDGEMENT_FORMATS", "JudgementFormat", "match_tasks", "read_judgement_file"]


@dataclass(frozen=True)
class JudgementFormat:
    """A registered judgement file format (its summary: the file it reads): its reader and the criterion type it
    answers."""

    #: ``(path, criterion, options) -> judgements`` (imports the format's module when it runs)
    read: Callable[[Path, str, dict[str, Any]], pd.DataFrame]
    #: the criterion type its judgements answer (None: named in the file)
    criterion_type: str | None
    #: the options its reader takes (``read_judgement_file(..., **options)``)
    options: tuple[str, ...] = ()


def _fastchat(path: Path, criterion: str, options: dict[str, Any]) -> pd.DataFrame:
    from humeval.data.battles import read_battle_judgements

    return read_battle_judgements(path, criterion=criterion or "preference", **options)


def _mqm(path: Path, criterion: str, options: dict[str, Any]) -> pd.DataFrame:
    from humeval.formats.mqm import read_mqm

    return read_mqm(path, criterion=criterion or "mqm", **options)


def _labelstudio(path: Path, criterion: str, options: dict[str, Any]) -> pd.DataFrame:
    from humeval.formats.annotation_exports import read_label_studio

    return read_label_studio(path, **options)


def _argilla(path: Path, criterion: str, options: dict[str, Any]) -> pd.DataFrame:
    from humeval.formats.annotation_exports import read_argilla

    return read_argilla(path, **options)


def _summeval(path: Path, criterion: str, options: dict[str, Any]) -> pd.DataFrame:
    from humeval.formats.summeval import read_summeval

    return read_summeval(path, **options)


_COLUMNS = ("item", "system", "system_b")
JUDGEMENT_FORMATS: Registry[JudgementFormat] = Registry("judgement file format", "import", error=DataError)
JUDGEMENT_FORMATS.add("fastchat", JudgementFormat(_fastchat, "2afc", ("item", "participant")),
                      summary="FastChat battle log: JSON array, JSON lines, or arena Parquet")
JUDGEMENT_FORMATS.add("mqm", JudgementFormat(_mqm, "esa", ("item",)), summary="WMT MQM TSV with `<v>` span marks")
JUDGEMENT_FORMATS.add("labelstudio", JudgementFormat(_labelstudio, None, _COLUMNS),
                      summary="Label Studio JSON export (ratings, choices, labelled spans)")
JUDGEMENT_FORMATS.add("argilla", JudgementFormat(_argilla, None, _COLUMNS), summary="Argilla `records.to_json` export")
JUDGEMENT_FORMATS.add("summeval", JudgementFormat(_summeval, None, ("annotators",)),
                      summary="SummEval JSONL (expert annotations; `annotators` for the crowd's)")


def read_judgement_file(path: str | Path, fmt: str, *, criterion: str = "", **options: Any) -> pd.DataFrame:
    """Judgements (``task_id`` empty) from ``path`` in format ``fmt`` (see :data:`JUDGEMENT_FORMATS`).

    ``criterion``: the criterion name for formats whose file does not name one (``fastchat``,
    ``mqm``; defaults ``preference`` and ``mqm``). ``options`` go to the format's reader
    (e.g. ``item="doc+seg_id"`` for ``mqm``, ``annotators="both"`` for ``summeval``); an unknown
    option is an error naming the format's.
    """
    kind = JUDGEMENT_FORMATS.get(fmt)
    for key in options:
        if key not in kind.options:
            raise DataError(f"import {fmt}: unknown option {key!r}. {did_you_mean(key, kind.options)}")
    return kind.read(Path(path), criterion, options)


def match_tasks(frame: pd.DataFrame, tasks: Iterable[Any]) -> tuple[pd.DataFrame, Counter[str], list[str]]:
    """Each judgement with the task of the design that shows its item and systems and asks its criterion.

    Returns the matched judgements (``task_id`` and ``kind`` filled), the skipped ones counted
    by reason, and up to 20 examples. A judgement matches a task with the same item, the same
    set of systems (one system for a rating, the pair for ``2afc``) and the criterion among
    the task's criteria.
    """
    index: dict[tuple[str, frozenset[str], str], Any] = {}
    for task in tasks:
        if task.kind != "task":
            continue
        for name in task.criteria:
            index.setdefault((task.item_id, frozenset(task.systems), name), task)
            if len(task.systems) > 1:  # ratings of several outputs shown together: one judgement per system
                for system in task.systems:
                    index.setdefault((task.item_id, frozenset([system]), name), task)
    keep, ids, kinds = [], [], []
    skipped: Counter[str] = Counter()
    examples: list[str] = []
    for i, (item, first, second, criterion) in enumerate(zip(frame["item_id"], frame["system"], frame["system_b"],
                                                             frame["criterion"], strict=True)):
        systems = frozenset([first, second] if second else [first])
        task = index.get((item, systems, criterion))
        if task is None:
            reason = f"no task of the design shows item {item!r} with {' and '.join(sorted(systems))} for {criterion!r}"
            skipped["no matching task in the design"] += 1
            if len(examples) < 20:
                examples.append(f"judgement {i + 1}: {reason}")
            continue
        keep.append(i)
        ids.append(task.task_id)
        kinds.append(task.kind)
    matched = frame.iloc[keep].copy()
    matched["task_id"], matched["kind"] = ids, kinds
    return matched.reset_index(drop=True), skipped, examples
