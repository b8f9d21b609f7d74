"""The reduced form of ``benchmarks/bench_judges.py``: PPI coverage and the labels a judge saves, against theory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scipy import stats as sps

ROOT = Path(__file__).resolve().parents[2]


def test_reduced_benchmark_covers_and_saves_what_theory_says() -> None:
    runs = 300
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_judges.py"), "--runs", str(runs), "--json"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["rho"] for r in rows] == [0.5, 0.7, 0.9]
    low, high = sps.binom.ppf([0.0005, 0.9995], runs, 0.95)  # 99.9% band of the hit count around 95%
    for r in rows:
        assert low <= r["coverage_hits_calibrated"] <= high, r
        # labels needed at equal width: the optimal PPI++ variance, 1 - rho^2 N / (N + n) with N unlabelled
        assert abs(r["labels_needed_share"] - r["theory_share_finite"]) < 0.03, r
        assert r["lam_raw_median"] == 1.0 and r["width_ratio_raw"] > 0.97  # uncalibrated, the raw scale wastes the judge
