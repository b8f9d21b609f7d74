"""The reduced form of ``benchmarks/bench_server.py`` (the docs/collection.md throughput table) measures something."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.timeout(120), pytest.mark.postgres]

NUMBERS = ["items_per_s", "page_p50_ms", "page_p99_ms", "submit_p50_ms", "submit_p99_ms", "humeval_cpu_ms_per_item",
           "peak_rss_mb"]


def test_quick_run_measures_every_cell_and_prints_every_column() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_server.py"), "--quick", "--json"],
                          capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    configs = {(c["store"], c["processes"]): c for c in result["configs"]}
    assert set(configs) == {("sqlite", 1), ("sqlite", 2), ("postgresql", 2)}

    refused = configs["sqlite", 2]
    assert refused["status"] == "refused" and "SQLite store takes one server process" in refused["message"], refused
    assert not refused["cells"]
    for key in (("sqlite", 1), ("postgresql", 2)):
        config = configs[key]
        assert config["status"] == "ran", config
        assert [c["annotators"] for c in config["cells"]] == [1, 10]
        for cell in config["cells"]:
            assert cell["measured"] and not cell["warnings"], cell
            assert cell["judgements"] > 0 and cell["turned_away"] == 0 and cell["lists_left"] > 0
            for name in NUMBERS:
                assert cell[name] is not None and cell[name] > 0, (key, name, cell)
            assert cell["page_p99_ms"] >= cell["page_p50_ms"] and cell["submit_p99_ms"] >= cell["submit_p50_ms"]
            if key[0] == "postgresql":
                assert cell["postgres_backends"] > 0 and cell["postgres_cpu_ms_per_item"] > 0, cell
            else:
                assert cell["postgres_cpu_ms_per_item"] is None

    lines = done.stderr.splitlines()
    header = "| " + " | ".join(result["columns"]) + " |"
    assert header in lines
    rows = [ln for ln in lines[lines.index(header) + 2:] if ln.startswith("| ")]
    assert len(rows) == 2 + 1 + 2  # two cells, one refusal, two cells
    for row in rows:
        assert row.count("|") == len(result["columns"]) + 1, row
    measured = [r for r in rows if "refused" not in r]
    assert all("measured nothing" not in r and " ms |" in r and " MB |" in r for r in measured), measured
    assert any(r.startswith("| SQLite, 2 processes | refused: ") for r in rows)
    assert "python benchmarks/bench_server.py --quick --json" in done.stderr
