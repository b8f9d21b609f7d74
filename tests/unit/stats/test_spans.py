"""Error spans: counts, weighted score and span agreement against hand-computed values."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from humeval.stats.spans import error_counts, error_scores, span_agreement


def _row(pid: str, item: str, system: str, spans: list[tuple[int, int, str]], score: float = 50.0) -> dict:
    return {"participant_id": pid, "item_id": item, "system": system, "value": score,
            "spans": json.dumps([{"start": s, "end": e, "severity": v} for s, e, v in spans])}


FRAME = pd.DataFrame([
    _row("p1", "i1", "A", [(0, 4, "minor"), (10, 20, "major")]),   # 14 chars
    _row("p2", "i1", "A", [(2, 6, "minor"), (12, 14, "major")]),   # 6 chars; overlap 2 + 2 = 4, same severity 4
    _row("p3", "i1", "A", []),                                     # 0 chars
    _row("p1", "i2", "B", [(5, 9, "major")]),                      # 4 chars
    _row("p2", "i2", "B", [(5, 9, "minor")]),                      # 4 chars; overlap 4, same severity 0
    _row("p1", "i3", "B", []),
    _row("p2", "i3", "B", []),                                     # both clean: left out of F1
])


def test_counts_and_weighted_score() -> None:
    counts = error_counts(FRAME)
    assert counts["minor"].tolist() == [1, 1, 0, 0, 1, 0, 0]
    assert counts["major"].tolist() == [1, 1, 0, 1, 0, 0, 0]
    assert counts["chars"].tolist() == [14, 6, 0, 4, 4, 0, 0]
    rows = {r["system"]: r for r in error_scores(FRAME, ["A", "B"], seed=1, n_boot=500)}
    # A: weighted 1+5, 1+5, 0 -> mean 4; B: 5, 1, 0, 0 -> mean 1.5
    assert rows["A"]["weighted"].estimate == pytest.approx(4.0) and rows["B"]["weighted"].estimate == pytest.approx(1.5)
    assert rows["A"]["minor"].estimate == pytest.approx(2 / 3) and rows["B"]["major"].estimate == pytest.approx(0.25)
    assert rows["B"]["outputs_with_errors"] == 2
    for r in rows.values():  # bootstrap means of non-negative counts: inside [0, max]
        assert 0 <= r["weighted"].ci_low <= r["weighted"].estimate <= r["weighted"].ci_high <= 6


def test_span_agreement_by_hand() -> None:
    est = span_agreement(FRAME, seed=2, n_boot=500)
    # pairs: i1 (p1,p2): 2*4/(14+6) = 0.4; (p1,p3): 0/(14) = 0; (p2,p3): 0/6 = 0; i2 (p1,p2): 2*4/8 = 1;
    # i3 (p1,p2): both clean, left out
    assert est.n == 4 and est.estimate == pytest.approx((0.4 + 0 + 0 + 1) / 4)
    assert est.extra["n_both_clean"] == 1 and est.extra["outputs"] == 2
    assert est.extra["severity_agreement"] == pytest.approx(4 / 8)  # 4 of 8 overlapping characters agree
    assert 0 <= est.ci_low <= est.ci_high <= 1


def test_span_agreement_undefined_without_pairs() -> None:
    est = span_agreement(FRAME[FRAME["participant_id"] == "p1"], seed=1)
    assert math.isnan(est.estimate) and "two participants" in est.extra["undefined"]
