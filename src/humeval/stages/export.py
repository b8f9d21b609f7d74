"""The ``export`` stage (``humeval export``): the store's judgements as one source, then the union of all.

The stage writes the store's judgements as ``results/sources/store.jsonl`` and rebuilds
``results/judgements.jsonl`` as the union of every source
(:func:`humeval.judgements.sources.union_sources`), so judgements imported from a
platform are kept when the store is exported again.
"""

from __future__ import annotations

from humeval.stage import StageOutput
from humeval.study import Study

__all__ = ["export_stage"]


def export_stage(study: Study, db: str = "") -> StageOutput:
    """The ``export`` stage: the store as ``results/sources/store.jsonl``, then the union of all sources."""
    from humeval.judgements.sources import sources_dir, union_sources
    from humeval.store.engine import redact_url
    from humeval.store.export import write_store_judgements

    source = sources_dir(study.results_dir) / "store.jsonl"
    rows = write_store_judgements(study, source, db or None)
    table, union = union_sources(study.results_dir)
    return StageOutput(outputs=[source, table], parameters={"db": redact_url(db) if db else study.relative(study.db_file)},
                       summary={"exported": rows, **union})
