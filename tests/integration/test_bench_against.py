"""``benchmarks/bench_against.py``: the summary of alternated runs (hand-computed), and one real run against HEAD."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_against  # noqa: E402 - a script of benchmarks/, importable once that folder is on the path

pytestmark = pytest.mark.timeout(180)


def _run(rates: dict[tuple[str, str, int], tuple[float, float, float | None] | None]) -> dict:
    """A bench_server JSON of one run: per (flow, store:processes, annotators) (items/s, humeval CPU, PostgreSQL CPU),
    or None for a cell that measured nothing."""
    configs: dict[tuple[str, str], list[dict]] = {}
    for (flow, config, n), got in rates.items():
        cell = {"annotators": n, "measured": got is not None, "items_per_s": 0.0, "humeval_cpu_ms_per_item": 0.0,
                "postgres_cpu_ms_per_item": None}
        if got is not None:
            cell |= {"items_per_s": got[0], "humeval_cpu_ms_per_item": got[1], "postgres_cpu_ms_per_item": got[2]}
        configs.setdefault((flow, config), []).append(cell)
    return {"configs": [{"flow": flow, "store": config.split(":")[0], "processes": int(config.split(":")[1]),
                         "cells": cells} for (flow, config), cells in configs.items()]}


def test_the_summary_is_the_medians_of_the_measured_runs() -> None:
    pg, lite = ("next", "postgresql:2", 50), ("html", "sqlite:1", 50)
    ours = [_run({pg: (900, 1.0, 0.7), lite: (600, 1.5, None)}), _run({pg: (1000, 1.2, 0.8), lite: None}),
            _run({pg: (950, 1.1, 0.9), lite: (700, 1.7, None)})]
    theirs = [_run({pg: (1200, 0.8, 0.4), lite: None}), _run({pg: (1300, 0.9, 0.5), lite: None}),
              _run({pg: (1250, 0.7, 0.6), lite: None})]
    rows = {(r["flow"], r["configuration"]): r for r in bench_against.summary(ours, theirs)}
    p = rows["next", "postgresql:2"]
    assert p["this"]["items_per_s"] == [900, 1000, 950] and p["rev"]["items_per_s"] == [1200, 1300, 1250]
    assert p["ratio"] == pytest.approx(950 / 1250)
    assert p["this"]["humeval_cpu_ms"] == pytest.approx(1.1) and p["this"]["postgres_cpu_ms"] == pytest.approx(0.8)
    assert p["rev"]["humeval_cpu_ms"] == pytest.approx(0.8) and p["rev"]["postgres_cpu_ms"] == pytest.approx(0.5)
    s = rows["html", "sqlite:1"]  # two of our runs measured it, none of theirs: no ratio, never 0
    assert s["this"]["items_per_s"] == [600, 700] and s["this"]["humeval_cpu_ms"] == pytest.approx(1.6)
    assert s["rev"]["items_per_s"] == [] and s["ratio"] is None and s["this"]["postgres_cpu_ms"] is None
    lines = bench_against.table(list(rows.values()), "e40d88f")
    assert "| next | postgresql:2 | 50 | 900, 1000, 950 | 1200, 1300, 1250 | 0.76 | 1.10 + 0.80 ms | 0.80 + 0.50 ms |" in lines
    assert "| html | sqlite:1 | 50 | 600, 700 | measured nothing | n/a | 1.60 ms | measured nothing |" in lines
    assert "e40d88f (runs)" in lines[0]


def test_an_unknown_revision_is_refused_with_its_name() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_against.py"), "no-such-rev-xyz"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0 and "'no-such-rev-xyz' is not a revision of" in done.stderr, done.stderr


def test_a_run_against_head_measures_both_sides(tmp_path: Path) -> None:
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, check=False).returncode != 0:
        pytest.skip("not a git checkout: bench_against.py compares revisions of this repository")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_against.py"), "HEAD", "--runs", "1", "--json",
                           "--", "--configs", "sqlite:1", "--levels", "2", "--seconds", "1", "--items", "600"],
                          capture_output=True, text=True, timeout=170, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    (row,) = result["summary"]
    assert (row["flow"], row["configuration"], row["annotators"]) == ("next", "sqlite:1", 2)
    assert len(row["this"]["items_per_s"]) == len(row["rev"]["items_per_s"]) == 1
    assert row["this"]["items_per_s"][0] > 0 and row["rev"]["items_per_s"][0] > 0 and row["ratio"] > 0
    assert "| next | sqlite:1 | 2 |" in done.stderr and "HEAD (runs)" in done.stderr
