"""Judgements out of the store: the ``export`` stage (``humeval export``).

The stage writes the store's judgements as one source (``results/sources/store.jsonl``)
and rebuilds ``results/judgements.jsonl`` as the union of every source
(:func:`humeval.platforms.sources.union_sources`), so judgements imported from a
platform are kept when the store is exported again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from humeval.errors import StoreError
from humeval.stage import StageOutput
from humeval.store.engine import redact_url
from humeval.study import Study, StudyLike, as_study

if TYPE_CHECKING:
    from humeval.pipeline import StageResult

__all__ = ["export_judgements", "export_stage", "write_store_judgements"]


def write_store_judgements(study: Study, path: str | Path, db: str | None = None) -> int:
    """Write every stored judgement (latest revision of each assignment) to ``path``; return the row count.

    The format follows the suffix (``.jsonl``, ``.csv``, ``.parquet``); the columns are
    :data:`humeval.judgements.JUDGEMENT_COLUMNS`.
    """
    import pandas as pd

    from humeval.judgements import JUDGEMENT_COLUMNS, write_judgements
    from humeval.store.store import Store

    if not db and not study.db_file.is_file():
        raise StoreError(f"{study.db_file}: no store yet; run `humeval serve {study.root}` and collect judgements first")
    store = Store.open(study, db or None)
    try:
        rows = store.judgement_rows()
    finally:
        store.close()
    write_judgements(path, pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS))
    return len(rows)


def export_stage(study: Study, db: str = "") -> StageOutput:
    """The ``export`` stage: the store as ``results/sources/store.jsonl``, then the union of all sources."""
    from humeval.platforms.sources import sources_dir, union_sources

    source = sources_dir(study.results_dir) / "store.jsonl"
    rows = write_store_judgements(study, source, db or None)
    table, union = union_sources(study.results_dir)
    return StageOutput(outputs=[source, table], parameters={"db": redact_url(db) if db else study.relative(study.db_file)},
                       summary={"exported": rows, **union})


def export_judgements(study: StudyLike, db: str | None = None) -> StageResult:
    """Export the store's judgements into ``results/judgements.jsonl`` (a logged pipeline stage).

    Always runs (the store changes while collection goes on); ``db`` is a store URL or
    file (default: the study's ``study.db``).
    """
    study = as_study(study)
    from humeval.pipeline import run_stage

    return run_stage(study, "export", force=True, options={"db": db} if db else {})
