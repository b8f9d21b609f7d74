"""The ``export`` stage (``humeval export``): the store's judgements as one source, then the union of all.

The stage writes the store's judgements as ``results/sources/store.jsonl`` and rebuilds
``results/judgements.jsonl`` as the union of every source
(:func:`humeval.judgements.sources.union_sources`), so judgements imported from a
platform are kept when the store is exported again.
"""

from __future__ import annotations

from pathlib import Path

from humeval.errors import StoreError
from humeval.stage import StageOutput
from humeval.study import StudyFolder

__all__ = ["export_stage", "write_store_judgements"]


def export_stage(study: StudyFolder, db: str = "", as_study_data: bool = False) -> StageOutput:
    """The ``export`` stage: the store as ``results/sources/store.jsonl``, then the union of all sources.

    A SQLite ``db`` other than the study's own ``study.db`` (a pilot's store, say) becomes the study's data only
    with ``as_study_data`` (recorded in the logbook); otherwise it is refused, naming ``humeval pilot``, which keeps a
    pilot apart. A PostgreSQL URL is the study's store at scale and is exported as given."""
    from humeval.judgements.sources import sources_dir, union_sources
    from humeval.store.engine import redact_url

    other = other_sqlite_store(study, db)
    if other is not None and not as_study_data:
        raise StoreError(f"--db {other}: not the study's store ({study.relative(study.db_file)}); a pilot's store is "
                         f"read with `humeval pilot {study.root} --db {db}` (into results/pilot/, with a pilot "
                         "banner); to take its judgements as the study's data, add --as-study (recorded in the logbook)")

    source = sources_dir(study.results_dir) / "store.jsonl"
    rows = write_store_judgements(study, source, db or None)
    table, union = union_sources(study.results_dir)
    parameters: dict[str, object] = {"db": redact_url(db) if db else study.relative(study.db_file)}
    if as_study_data:
        parameters["as_study_data"] = True
    return StageOutput(outputs=[source, table], parameters=parameters, summary={"exported": rows, **union})


def other_sqlite_store(study: StudyFolder, db: str | None) -> Path | None:
    """The SQLite file ``db`` names when it is not the study's own ``study.db`` (None for the study's store, an
    empty ``db`` or a server URL)."""
    from humeval.store.engine import is_sqlite

    if not db or ("://" in db and not is_sqlite(db)):
        return None
    path = Path(db.split("///", 1)[1]) if "///" in db else Path(db)
    return None if path.resolve() == study.db_file.resolve() else path


def write_store_judgements(study: StudyFolder, path: str | Path, db: str | None = None) -> int:
    """Write every stored judgement (latest revision of each assignment) to ``path``; return the row count
    (a rehearsal exports its store with it too).

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
        store.check_database(seeded=True)
        rows = store.judgement_rows()
    finally:
        store.close()
    write_judgements(path, pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS))
    return len(rows)
