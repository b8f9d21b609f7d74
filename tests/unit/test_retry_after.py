"""Retry-After read strictly (RFC 9110 10.2.3) with a cap, by every HTTP client (the judge's and Prolific's)."""

from __future__ import annotations

import pytest

from humeval.retry_after import MAX_RETRY_AFTER, retry_after

NOW = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC


def test_seconds_or_an_http_date() -> None:
    assert retry_after("2.5", 9.0) == 2.5 and retry_after("0", 9.0) == 0.0 and retry_after(" 7 ", 9.0) == 7.0
    assert retry_after(None, 9.0) == 9.0
    assert retry_after("Tue, 14 Nov 2023 22:13:30 GMT", 9.0, now=NOW) == pytest.approx(10.0)
    assert retry_after("Tue, 14 Nov 2023 22:13:00 GMT", 9.0, now=NOW) == 0.0  # in the past: no wait


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "-1", "1e3", "+5", "0x10", "soon", "", "5 s",
                                   "Tue, 14 Nov 2023 22:13:30", "Mon, 99 Foo 2023"])
def test_anything_else_waits_the_backoff(value: str) -> None:
    assert retry_after(value, 9.0, now=NOW) == 9.0


def test_every_wait_is_capped() -> None:
    assert retry_after("3600", 1.0) == MAX_RETRY_AFTER == 60.0
    assert retry_after("Tue, 14 Nov 2023 23:13:20 GMT", 1.0, now=NOW) == 60.0
    assert retry_after(None, 500.0) == 60.0 and retry_after("1", 1.0, cap=0.5) == 0.5
