"""A judgement's values checked against the protocol's criteria (:mod:`humeval.judgements.values`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from humeval.judgements.values import InvalidValue, check_values
from tests.integration.server.studies import all_types_study


def test_values_are_checked_against_the_protocol(tmp_path: Path) -> None:
    protocol = all_types_study(tmp_path / "a").protocol
    ok = check_values(protocol, ("fluency", "adequacy"), 1, {"fluency": 5, "adequacy": 0.5})
    assert ok == {"fluency": 5, "adequacy": 0.5}
    bad = [
        (("fluency",), {"fluency": 6}), (("fluency",), {"fluency": 2.5}), (("fluency",), {"fluency": True}),
        (("adequacy",), {"adequacy": 101}), (("adequacy",), {"adequacy": float("nan")}),
        (("naturalness",), {"naturalness": 0}), (("naturalness",), {"naturalness": -3}), (("naturalness",), {"naturalness": "9"}),
        (("overall",), {"overall": [1, 2]}), (("overall",), {"overall": [1, 2, 0]}),
        (("quality",), {"quality": "both-bad"}), (("quality",), {}), (("quality",), {"quality": "A", "x": 1}),
    ]
    for criteria, values in bad:
        with pytest.raises(InvalidValue) as info:
            check_values(protocol, criteria, 3, values)
        assert info.value.status == 422 and info.value.field and info.value.field.startswith("values")
