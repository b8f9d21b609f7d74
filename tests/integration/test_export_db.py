"""``--db`` URLs that name no store: a clear message and exit 1, not a traceback (PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval.errors import StoreError
from humeval.store.store import Store
from humeval.study import StudyFolder
from humeval.templates import init_study
from tests.cli import humeval
from tests.integration.server.conftest import PG, pg_scratch

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("db") / "s"
    init_study(root, "pairwise", items=6)
    humeval("run", root, expect=0)
    return root


def test_a_search_path_naming_no_schema_is_refused_by_export_and_serve(study: Path) -> None:
    url = f"{PG}?options=-csearch_path%3Dhv_missing_schema"
    result = humeval("export", study, "--db", url, expect=1)
    assert "its search_path (hv_missing_schema) names no schema of this database; create the schema" in result.stderr
    store = Store.open(StudyFolder.open(study), url)
    try:
        with pytest.raises(StoreError, match=r"names no schema of this database"):
            store.prepare()  # what `serve` runs first: it created no table and says why
    finally:
        store.close()


def test_a_database_never_served_on_is_named_as_holding_no_store(study: Path) -> None:
    with pg_scratch("DATABASE", "hv_") as name:
        url = PG.rsplit("/", 1)[0] + f"/{name}"
        result = humeval("export", study, "--db", url, expect=1)
        assert "no store of a study in this database yet; serve the study on it first" in result.stderr
        with pg_scratch("SCHEMA", "hv_") as schema:  # a schema that holds a store: read (it holds no judgement yet)
            served = Store.open(StudyFolder.open(study), f"{PG}?options=-csearch_path%3D{schema}")
            try:
                served.prepare()
            finally:
                served.close()
            result = humeval("export", study, "--db", f"{PG}?options=-csearch_path%3D{schema}", expect=1)
            assert "no store" not in result.stderr and "store.jsonl: the file has no rows" in result.stderr
