"""``humeval arena replay`` from the command line: rows, JSON, the bootstrap footer and user errors."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import humeval

from .made_up import clear_order_counts


def test_replay_json_and_table(tmp_path: Path) -> None:
    data = clear_order_counts(tmp_path)
    res = humeval("arena", "replay", data, "--models", "4", "--question", "best,top-k", "--top", "2",
                  "--replays", "10", "--bootstrap", "20", "--format", "json", expect=0)
    out = json.loads(res.stdout)
    assert out["models"] == ["a", "b", "c", "d"] and out["votes"] == 3600
    rows = {(r["question"], r["policy"]): r for r in out["rows"]}
    assert set(rows) == {("best", "adaptive"), ("best", "uniform"), ("top-2", "adaptive"), ("top-2", "uniform")}
    best = rows[("best", "adaptive")]
    assert best["decided"] > 0.5 and best["answer"] == "a" and best["wrong"] == 0
    assert 0 < best["votes_median"] <= 3600 and best["wrong_upper95"] < 0.3
    assert out["bootstrap"]["rank_low"][0] == 1
    table = humeval("arena", "replay", data, "--models", "4", "--question", "best", "--replays", "5",
                    "--bootstrap", "20", expect=0)
    assert "arena replay: 4 models, 3,600 votes, delta 0.05" in table.stdout
    assert "fixed-n bootstrap of all 3,600 votes (20 rounds, valid at one look only)" in table.stdout


def test_user_errors(tmp_path: Path) -> None:
    res = humeval("arena", "replay", tmp_path / "none.json", expect=1)
    assert "no such arena votes file" in res.stderr
    res = humeval("arena", "replay", clear_order_counts(tmp_path), "--models", "4", "--policy", "adaptve", expect=1)
    assert "unknown pair policy 'adaptve'. Did you mean 'adaptive'?" in res.stderr
    res = humeval("arena", "replay", clear_order_counts(tmp_path), "--models", "9", expect=1)
    assert "--models must be an integer in 2..4" in res.stderr
