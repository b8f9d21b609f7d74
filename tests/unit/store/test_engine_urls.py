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
