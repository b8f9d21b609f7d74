"""Database URLs never reach a log line with their secrets."""

from __future__ import annotations

import pytest

from humeval.store.engine import redact_url


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://bob:hunter2@db:5432/test", "postgresql://bob:***@db:5432/test"),
    ("postgresql://bob:p@ss@db:5432/test", "postgresql://bob:***@db:5432/test"),  # a password holding '@'
    ("postgresql://bob@db/test?sslmode=require&password=hunter2", "postgresql://bob@db/test?sslmode=require&password=***"),
    ("postgresql://db/test?PASSWORD=x&application_name=h", "postgresql://db/test?PASSWORD=***&application_name=h"),
    ("postgresql://bob@localhost/test", "postgresql://bob@localhost/test"),
    ("sqlite:////tmp/study.db", "sqlite:////tmp/study.db"),
    ("study.db", "study.db"),
])
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "hunter2" not in redact_url(url) and "p@ss" not in redact_url(url)


def test_stage_options_are_logged_without_secrets(tmp_path) -> None:
    from humeval.pipeline import _logged

    assert _logged({"db": "postgresql://bob:hunter2@db/test", "n": 3}) == {"db": "postgresql://bob:***@db/test", "n": 3}


def test_an_unparsable_url_is_reported_without_its_password() -> None:
    from humeval.errors import StoreError
    from humeval.store.engine import make_engines

    with pytest.raises(StoreError) as err:
        make_engines("postgresql+psycopg://bob:hunter2@db:notaport/test")
    assert "hunter2" not in str(err.value) and "bob:***@db" in str(err.value)


def test_the_store_names_itself_without_secrets(tmp_path) -> None:
    from humeval.store.store import Store

    class FakeStudy:
        root = tmp_path

        def relative(self, path):
            return str(path)

    store = Store.__new__(Store)
    Store.__init__(store, FakeStudy(), "postgresql+psycopg://bob:p@ss@127.0.0.1:1/test?password=hunter2")
    try:
        assert store.where == "postgresql+psycopg://bob:***@127.0.0.1:1/test?password=***"
        assert store.writer.where == store.where
    finally:
        store.close()
