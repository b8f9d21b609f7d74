"""The lease derived from the protocol (:meth:`humeval.protocol.models.Protocol.lease`), checked by hand."""

from __future__ import annotations

from typing import Any

from humeval.protocol.models import MIN_DERIVED_LEASE, UNDECLARED_LEASE, Protocol


def _protocol(pay: dict[str, Any], assignment: dict[str, Any] | None = None, **design: Any) -> Protocol:
    return Protocol.model_validate({
        "version": 1, "study": {"name": "lease", "seed": 1}, "data": {"files": ["data/outputs.jsonl"]},
        "criteria": [{"name": "quality", "type": "2afc", "question": "Which is better?"}],
        "design": {"items_per_participant": 10, **design}, "assignment": assignment or {}, "pay": pay})


def test_twice_the_declared_minutes_per_list_at_least_600_s() -> None:
    assert (MIN_DERIVED_LEASE, UNDECLARED_LEASE) == (600, 1800)
    assert _protocol({"minutes_per_list": 12}).lease() == 1440  # 2 x 12 min
    assert _protocol({"minutes_per_list": 4}).lease() == 600  # 480 s, raised to the least
    # seconds per task x the tasks of a list: the design's 10 items and 2 checks, or the longest list given
    assert _protocol({"seconds_per_task": 45}, attention_checks=2).lease() == 2 * 45 * 12 == 1080
    assert _protocol({"seconds_per_task": 45}).lease(tasks_per_list=20) == 1800
    assert _protocol({"minutes_per_list": 12, "seconds_per_task": 45}).lease() == 1440  # minutes_per_list first
    assert _protocol({"minutes_per_list": 60 * 24 * 7}).lease() == 7 * 24 * 3600  # the most a lease may be


def test_nothing_declared_and_an_explicit_override() -> None:
    assert _protocol({}).lease() == 1800
    assert _protocol({"minutes_per_list": 12}, {"lease_seconds": 90}).lease() == 90
    assert _protocol({}, {"lease_seconds": 30}).assignment.lease_seconds == 30
