"""The crowd benchmark's core, reduced: the pairwise template (30 items) on SQLite through one real server.

Checks the behaviour, not the timings: a crowd that arrives only while places are open is seldom
turned away (told before starting), nobody is admitted with nothing to do, no session is cut before the decision, the
places paid follow the judgements used (issue 30's formula against the fixed design's places), and
the replay of the exported judgements equals the live decision.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_crowd

pytestmark = pytest.mark.timeout(300)


def _cell(tmp: Path, design: str) -> bench_crowd.Cell:
    study = bench_crowd.build_study(tmp / design / "study", "pairwise", design, 30.0, 0.75)
    args = argparse.Namespace(rate=6.0, pace=30.0, scale=0.1, crowd=30, cell_seconds=60.0, seed=3)
    cell = bench_crowd.Cell("pairwise", "sqlite", design)
    bench_crowd.run_cell(cell, study, tmp / design, args, "", lambda _text: None)
    assert cell.status == "ok", cell.message
    return cell


def test_places_follow_the_judgements_and_nobody_is_turned_away(tmp_path: Path) -> None:
    fixed = _cell(tmp_path, "fixed")
    dyn = _cell(tmp_path, "dynamic")
    assert fixed.places == 9 and fixed.paid == 90 and fixed.turned_away == 0  # 90 pair tasks in lists of 10
    assert dyn.outcome in ("A", "B") and dyn.used is not None, dyn
    # turned away: told before starting (unpaid) that the place they saw open is gone, because outcomes fed
    # meanwhile brought the rule closer to its boundary; rare, and counted, not forbidden
    assert dyn.nothing_to_do == 0 and dyn.cut_before_decision == 0 and dyn.turned_away <= 2
    assert dyn.watched_places <= 1.25 * dyn.used / fixed.paid * fixed.watched_places + 1
    assert dyn.replay_equals_live is True, dyn.replay
    assert dyn.errors == 0 and not dyn.notes, dyn.notes
    verdicts = {text.split(" ")[0]: v for _w, v, text in bench_crowd.acceptance([dyn, fixed])}
    assert verdicts["places"] == "PASS" and verdicts["replay"] == "PASS"
