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

import bench_crowd  # noqa: E402 - a script of benchmarks/, importable once that folder is on the path

pytestmark = pytest.mark.timeout(300)


def _cell(tmp: Path, design: str) -> bench_crowd.Cell:
    study = bench_crowd.build_study(tmp / design / "study", "pairwise", design, 30.0, 0.75)
    args = argparse.Namespace(rate=6.0, pace=30.0, scale=0.1, arrivals=30, cell_seconds=60.0, seed=3)
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


def test_replay_against_live_says_what_the_time_bound_cut() -> None:
    # no server: the comparison of the export's replay with the live rule on a hand-made export. p1 ended (fed, 2
    # watched judgements), p2 was cut in progress by the cell's time bound (2 watched judgements stored, never fed
    # under stopping.feed: session), p3 ended but the replay's exclusion removes its fed judgement
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame({"participant_id": ["p1", "p1", "p2", "p2", "p2", "p3"],
                          "kind": ["task", "task", "task", "task", "check", "task"],
                          "stop_seq": [1.0, 2.0, np.nan, np.nan, np.nan, 3.0]})
    keep = pd.Series([True, True, True, True, True, False])
    watched = frame["kind"].eq("task")
    gap = bench_crowd.replay_gap(frame, keep, watched, ended={"p1", "p3"})
    assert gap.unfed_kept.tolist() == [False, False, True, True, False, False]
    assert gap.unfed_in_progress.tolist() == gap.unfed_kept.tolist() and gap.sessions_in_progress == 1
    assert gap.fed_dropped.tolist() == [False] * 5 + [True] and gap.any()
    live, again = [("continue", 3)], [("continue", 4)]
    ok, words = bench_crowd.compare_replay(live, again, [("continue", 3)], gap, timed_out=True)
    assert ok
    assert ("the cell's time bound cut 1 session(s) in progress, whose 2 stored judgement(s) of the comparison the "
            "live rule was never fed (stopping.feed: session feeds a session when it ends)") in words
    assert "1 judgement(s) the live rule was fed are excluded in the replay" in words
    assert words.endswith("the replay of the judgements it was fed gives [('continue', 3)], as live")
    # the replay of what the rule was fed differs from live: a real disagreement, said so
    ok, words = bench_crowd.compare_replay(live, again, [("A", 3)], gap, timed_out=True)
    assert not ok and "REPLAY != LIVE" in words
    # the same judgements on both sides and still a different decision: a fault, not the time bound
    none = bench_crowd.replay_gap(frame.assign(stop_seq=[1.0, 2.0, 3.0, 4.0, np.nan, 5.0]), keep | True, watched,
                                  ended={"p1", "p2", "p3"})
    assert not none.any()
    assert bench_crowd.compare_replay(live, again, again, none, timed_out=True) == (
        False, "live [('continue', 3)] replay [('continue', 4)]: REPLAY != LIVE on the same judgements")
    assert bench_crowd.compare_replay(live, live, live, gap, timed_out=True) == (
        True, "live [('continue', 3)] replay [('continue', 3)]")


def _crowd_file(path: Path) -> Path:
    """A small recorded crowd: a launch burst of 24 in the first minute, 8 later; 10 s a task; every fourth quits
    after 3 tasks."""
    rows = ["arrived,seconds_per_task,completed"]
    for i in range(32):
        at = 2.5 * i if i < 24 else 60 + 20 * (i - 24)
        rows.append(f"{at},{';'.join(['10'] * 11)},{3 if i % 4 == 3 else 11}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


SCALE = 6.0  # real seconds per simulated minute


def test_a_recorded_crowd_through_the_server(tmp_path: Path) -> None:
    # bench_crowd.py --crowd FILE reduced: one run of each design on one drawn crowd (SQLite, 1 simulated minute =
    # 6 real s: the lease of 600 simulated s is 60 s, the waitlist's too; at 1 real s a minute, and at 3 in 2 of 3
    # runs beside two busy cores, a loaded machine's slow answers stretched the sessions past the compressed
    # waitlist and the rule ended undecided); behaviour, not timings
    import copy

    import _log_crowd as log
    import numpy as np

    from humeval.simulate.arrivals import read_crowd

    crowd = read_crowd(_crowd_file(tmp_path / "crowd.csv"))
    people = log.draw_people(crowd, np.random.default_rng(5), SCALE, pausers=0.3)
    assert len(people) == 32 and any(q.pause_at >= 0 for q in people) and any(q.quits for q in people)
    runs = {}
    for design, sessions in (("dynamic", 1), ("fixed", None)):
        root = log.write_study(tmp_path / design, lists=9, pace=10.0, scale=SCALE, sessions=sessions, waitlist=600,
                               seed=3)
        runs[design] = out = log.Run(design, 0, "crowd.csv", sessions or 0)
        log.run_design(out, root, copy.deepcopy(people), 0.95, scale=SCALE, seconds=900, seed=3)
        assert out.status == "ok" and out.errors == 0 and not out.notes, (out.message, out.notes)
        assert out.uncoded == 0  # whoever began and did not quit ends with their code, pausers too
    dyn, fixed = runs["dynamic"], runs["fixed"]
    assert dyn.outcome == "B" and dyn.unused_within_bound is True and dyn.decided_min is not None, (dyn, fixed)
    assert dyn.waitlisted > 0 and dyn.places < fixed.places  # the burst waits; the decision needs fewer places
    assert fixed.watch_decided is True and fixed.outcome == "" and fixed.pausers > 0  # a pause past the lease coded
    result = log.summary([log.Setting("crowd.csv", "easy", 0.95, 9, 1.8, 1, dyn.places, dyn.decided_min, 1.0,
                                      [(dyn, fixed)])])
    c = result["comparisons"]["easy"]
    assert (c["runs"], c["dynamic_decided"], c["fixed_watch_decided"], c["uncoded"]) == (1, 1, 1, 0)
    lines = log.acceptance(result)
    assert any(line.startswith("PASS  crowd.csv easy budget --crowd vs the server") for line in lines), lines
