"""The reduced form of ``benchmarks/bench_rules.py`` (the docs/stopping.md comparison) runs and keeps its guarantees."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_fast_comparison_runs_and_every_valid_rule_keeps_delta() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_rules.py"), "--fast"], capture_output=True,
                         text=True, timeout=300, check=True).stdout
    nulls = dict(re.findall(r"delta 0\.05\s+(.+?)\s{2,}([0-9.]+) \(exact\)", out))
    assert set(nulls) >= {"anytime", "mixture (a = 20)", "normal-mixture (tuned for 1000)", "hoeffding (not valid)"}
    for rule, error in nulls.items():
        assert (float(error) > 0.05) == (rule == "hoeffding (not valid)"), (rule, error)
    assert re.search(r"smallest worst ratio: prior strength \d+", out)
    rows = re.findall(r"^\s+0\.05\s+(0\.\d+)\s+\d+ \|((?:\s+[0-9.]+){3})", out, flags=re.M)
    assert [mu for mu, _ in rows] == ["0.1", "0.2", "0.4"]
    assert all(float(v) >= 1.0 for _, ratios in rows for v in ratios.split())  # never below Wald's bound
