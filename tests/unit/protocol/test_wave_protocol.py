"""The confirmation wave in the protocol: sized from w or from a late share and power, refused where it cannot run."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from humeval.protocol.models import ConfirmationWave, Protocol, Stopping
from humeval.stats.drift import confirmation_power


def _protocol(stopping: dict[str, Any], strategy: str = "list") -> Protocol:
    return Protocol.model_validate({
        "study": {"name": "w", "seed": 1}, "data": {"files": ["x.jsonl"]},
        "criteria": [{"name": "quality", "type": "2afc", "question": "Which?"}],
        "assignment": {"strategy": strategy}, "stopping": stopping})


def test_a_wave_is_sized_by_its_outcomes_or_by_its_power() -> None:
    assert ConfirmationWave(outcomes=100, opens_after_seconds=60).size(0.05) == 100
    w = ConfirmationWave(late_share=0.35, power=0.8, opens_after_seconds=60).size(0.05)
    assert w == 69  # docs/stopping.md: 69 outcomes for power 0.8 at q = 0.35
    assert confirmation_power(w, 0.35, 0.05)[0] >= 0.8 > confirmation_power(w - 1, 0.35, 0.05)[0]


def test_a_wave_needs_one_size_its_check_and_lists() -> None:
    with pytest.raises(ValidationError, match="exactly one of outcomes"):
        ConfirmationWave(outcomes=50, late_share=0.3, opens_after_seconds=60)
    with pytest.raises(ValidationError, match="exactly one of outcomes"):
        ConfirmationWave(opens_after_seconds=60)
    with pytest.raises(ValidationError, match="opens_after_seconds"):
        ConfirmationWave.model_validate({"outcomes": 50})
    with pytest.raises(ValidationError, match="drift_check: wave needs stopping.wave"):
        Stopping(drift_check="wave")
    with pytest.raises(ValidationError, match="got drift_check='halves' and wave set"):
        Stopping.model_validate({"drift_check": "halves", "wave": {"outcomes": 50, "opens_after_seconds": 60}})
    wave = {"drift_check": "wave", "wave": {"outcomes": 50, "opens_after_seconds": 60}}
    assert _protocol(wave).stopping.wave.outcomes == 50  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="assignment.strategy: list\\); got strategy 'one'"):
        _protocol(wave, strategy="one")
    with pytest.raises(ValidationError, match="goal 'best' decides over K systems"):
        _protocol(wave | {"goal": "best"})
