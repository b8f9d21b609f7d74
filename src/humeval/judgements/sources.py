"""The one judgements table, rebuilt as the union of its sources.

Every way judgements arrive writes its own source file once under ``results/sources/``:
``store.jsonl`` (``humeval export``: the collection server's store) and
``<platform>-<sha8>.jsonl`` (``humeval import``: one per imported file, named by its
content hash, so importing a file twice writes the same source). Whichever stage wrote a
source then rebuilds ``results/judgements.jsonl`` (what collate, exclude and analyze read)
with :func:`union_sources`, so re-running one source never loses another.

A study whose ``results/judgements.jsonl`` predates sources keeps it: the first union
moves it to ``results/sources/legacy.jsonl``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from humeval.errors import DataError
from humeval.judgements import JUDGEMENT_COLUMNS, read_judgements, write_judgements

__all__ = ["JUDGEMENT_KEY", "sources_dir", "union_sources", "write_source"]

#: one judgement per participant, task, criterion and (rated or first-shown) system
JUDGEMENT_KEY = ["participant_id", "task_id", "criterion", "system"]
_ANSWER = ["kind", "item_id", "system_b", "value", "choice"]


def sources_dir(results_dir: Path) -> Path:
    return results_dir / "sources"


def write_source(results_dir: Path, name: str, frame: pd.DataFrame) -> Path:
    """Write one source (``results/sources/<name>.jsonl``), replacing an earlier version of it."""
    _adopt_legacy(results_dir)
    return write_judgements(sources_dir(results_dir) / f"{name}.jsonl", frame)


def _adopt_legacy(results_dir: Path) -> None:
    """A judgements table from before sources existed becomes the source ``legacy.jsonl``."""
    target, folder = results_dir / "judgements.jsonl", sources_dir(results_dir)
    if target.is_file() and not any(folder.glob("*.jsonl")):
        folder.mkdir(parents=True, exist_ok=True)
        target.replace(folder / "legacy.jsonl")


def union_sources(results_dir: Path) -> tuple[Path, dict[str, Any]]:
    """Rebuild ``results/judgements.jsonl`` as the de-duplicated union of every source.

    Rows equal on :data:`JUDGEMENT_KEY` and on the answer are kept once; rows equal on the
    key with different answers are a :class:`DataError` naming both sources.
    """
    target = results_dir / "judgements.jsonl"
    folder = sources_dir(results_dir)
    _adopt_legacy(results_dir)
    paths = sorted(folder.glob("*.jsonl"))
    frames = [read_judgements(p).assign(_source=p.name) for p in paths]
    both = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*JUDGEMENT_COLUMNS, "_source"])
    groups = both.groupby(JUDGEMENT_KEY, sort=False)[_ANSWER]
    clashing = (groups.transform("nunique", dropna=False) > 1).any(axis=1) if len(both) else pd.Series(dtype=bool)
    if clashing.any():
        clash = both[clashing].iloc[0]
        rivals = both[(both[JUDGEMENT_KEY] == clash[JUDGEMENT_KEY]).all(axis=1)]
        desc = "; ".join(f"{r['_source']}: value={r['value']!r} choice={r['choice']!r} system_b={r['system_b']!r}"
                         for r in rivals.drop_duplicates(["_source", *_ANSWER]).to_dict(orient="records"))
        n = int(both[clashing].drop_duplicates(JUDGEMENT_KEY).shape[0])
        raise DataError(
            f"{folder}: {n} judgements differ between sources, e.g. participant {clash.participant_id!r}, task "
            f"{clash.task_id!r}, criterion {clash.criterion!r}, system {clash.system!r}: {desc}. Each judgement must "
            "come from one source; remove the wrong source file and run the stage again"
        )
    table = both.drop_duplicates(JUDGEMENT_KEY, keep="first")
    write_judgements(target, table.drop(columns="_source"))
    summary = {"sources": {p.name: len(f) for p, f in zip(paths, frames, strict=True)},
               "judgements": len(table), "duplicates_dropped": len(both) - len(table)}
    return target, summary
