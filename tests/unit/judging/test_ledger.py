"""The judges' ledger: what every request sent cost, answered or not, a killed run's included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from humeval.judging.ledger import Ledger, spend


def test_spend_counts_every_request_sent(tmp_path: Path) -> None:
    path = tmp_path / "judge-ledger.jsonl"
    first = Ledger(path, "llm", run="r1")
    a = first.recorder("a" * 64, 100, 16)
    a({"event": "sent", "attempt": 0})
    a({"event": "rate_limited", "attempt": 0, "status": 429})  # no work done: not billed
    a({"event": "sent", "attempt": 0})
    a({"event": "not_connected", "attempt": 0})  # never left: not billed
    a({"event": "sent", "attempt": 1})
    a({"event": "answered", "attempt": 1, "status": 200, "tokens_in": 90, "tokens_out": 3, "usage_estimated": ""})
    b = first.recorder("b" * 64, 200, 16)
    b({"event": "sent", "attempt": 0})
    b({"event": "timeout", "attempt": 0})  # may have been generated and billed: unknown, at most 200 + 16
    b({"event": "sent", "attempt": 1})  # then the run was killed: no outcome
    Ledger(path, "other", run="r1").recorder("c" * 64, 5, 5)({"event": "sent", "attempt": 0})
    with path.open("a") as fh:
        fh.write('{"time": "2026-12-02T13:00:00", "judge": "llm", "run": "r1", "ev')  # the torn last line of a kill
    second = Ledger(path, "llm", run="r2").recorder("b" * 64, 200, 16)
    with path.open("a") as fh:
        fh.write("\n")
    second({"event": "sent", "attempt": 0})
    second({"event": "answered", "attempt": 0, "status": 200, "tokens_in": 180, "tokens_out": 16,
            "usage_estimated": "no usage in the answer"})
    got = spend(path, "llm")
    assert (got.requests_sent, got.answered, got.not_billed, got.unknown, got.runs) == (6, 2, 2, 2, 2)
    assert (got.tokens_in, got.tokens_out, got.tokens_in_unknown_max, got.tokens_out_unknown_max) == (270, 19, 400, 32)
    assert got.usage_estimated == 1 and got.unreadable_lines == 1
    priced = got.to_json(price_input=1.0, price_output=10.0)  # per million tokens
    assert priced["cost"] == pytest.approx(270e-6 + 190e-6) and priced["cost_unknown_max"] == pytest.approx(400e-6 + 320e-6)
    assert priced["cost_max"] == pytest.approx(priced["cost"] + priced["cost_unknown_max"])
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]
    assert {"tokens_in_max", "tokens_out_max"} <= set(lines[0]) and "tokens_in_max" not in lines[1]
    assert spend(tmp_path / "none.jsonl", "llm").requests_sent == 0
