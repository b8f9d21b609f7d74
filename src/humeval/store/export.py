"""Judgements out of the store: every stored judgement as one table (the ``export`` stage writes it as a source,
:mod:`humeval.stages.export`; a rehearsal exports its store with it)."""

from __future__ import annotations

from pathlib import Path

from humeval.errors import StoreError
from humeval.study import Study

__all__ = ["write_store_judgements"]


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
