"""The crowd of a log: dynamic stopping with the AMT batches as the crowd, at the simulator level.

``bench_crowd.py`` drives the real server with Poisson arrivals; this one asks what a real crowd's shape
(its launch burst, uneven sessions and quitters) does to the admission rule, which needs many runs per
setting and so runs on :func:`humeval.simulate.crowd.simulate_crowd` (the store's admission rule, one
implementation: :mod:`humeval.stopping.admission`). A new file rather than a mode of ``bench_simulate.py``:
that one measures labelling strategies without sessions; this one has its own crowd, designs and acceptance
lines.

For each DHE AMT batch (../shared/data/dhe, read with :func:`humeval.simulate.arrivals.read_crowd`: one
participant per worker, arriving at their first AcceptTime, paced by the gaps between their SubmitTimes) and
two comparisons, an easy one (p = 0.875, 9 lists of 11 watched tasks) and a harder one (p = 0.6, 20 lists):

* ``fixed``: every list open from the start, the same crowd; the rule watching the fixed collection (all
  lists' outcomes) decides in ``fixed rule`` of the runs;
* ``W=1,2,3`` and ``plan``, the W :func:`~humeval.simulate.crowd.plan_sessions` picks (the smallest whose wall
  time is within 1.25x the fixed design's), each without and with a waitlist (``--patience`` seconds; 600 by
  default, the burst's window, chosen before any run);

printing places, the decided share, the wall time to the decision (minutes) and its ratio to the fixed design's
collection. Minutes per list = 11 x the batch's median task time (so the pace is the log's, scaled by 1).
Quitters' answered outcomes are fed as the live store does (``quitters_fed=True``) and they are settled a lease after they stop
(``--lease`` seconds, default 0: the log's workers were not leased). Then ``budget --crowd``'s prediction (the
call :func:`humeval.costs.budget` makes: participants resampled per run) against a replay of the batch (every
participant exactly as logged; only the outcomes random) for places and wall time at the planned W.

Acceptance lines of issue 40 that this benchmark can check, PASS/FAIL with their numbers (not tuned):
harder comparison: decided >= 90 % of the fixed design's rule, places <= the fixed design's, wall <= 1.25x the
fixed collection; easy: places <= 0.5x the fixed design's; ``budget --crowd`` within 20 % of the replay.

    python benchmarks/bench_crowd_log.py                 # 1000 runs per cell (about a minute)
    python benchmarks/bench_crowd_log.py --runs 200 --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from humeval.simulate.arrivals import fit_crowd, read_crowd
from humeval.simulate.crowd import plan_sessions, simulate_crowd
from humeval.stopping import get_rule

BATCHES = ("Batch_4444974_batch_results.csv", "Batch_4447602_batch_results.csv", "Batch_4483006_batch_results.csv")
COMPARISONS = (("easy", 0.875, 9), ("harder", 0.6, 20))
WATCHED = 11


def _cell(r: Any) -> dict[str, float]:
    sm = r.summary()
    return {"W": r.sessions, "places": sm["places"].mean, "decided": r.decided_share,
            "wall_min": sm["wall_hours"].mean * 60, "fixed_min": sm["fixed_wall_hours"].mean * 60,
            "wall_ratio": sm["wall_ratio"].mean, "quits": sm["quits"].mean, "turned_away": sm["turned_away"].mean}


def run(data: Path, runs: int, seed: int, patience: float, lease: float) -> dict[str, Any]:
    rule = get_rule("anytime", 0.05)
    out: dict[str, Any] = {"runs": runs, "seed": seed, "patience": patience, "lease": lease, "batches": []}
    for name in BATCHES:
        crowd = read_crowd(data / name)
        shape = fit_crowd(crowd, tasks=WATCHED)
        minutes = WATCHED * crowd.median_task_seconds() / 60
        batch: dict[str, Any] = {"batch": name, "crowd": shape.describe(), "minutes_per_list": minutes, "comparisons": []}
        for label, p, lists in COMPARISONS:
            kw = {"lists": lists, "watched": WATCHED, "tasks_per_list": WATCHED, "minutes_per_list": minutes, "p": p,
                  "crowd": crowd, "lease_seconds": lease, "runs": runs, "seed": seed}
            watching = simulate_crowd(rule, sessions=lists, **kw)  # every list at once: the rule on the fixed collection
            rows = []
            for pat in (0.0, patience):
                w_plan, tried = plan_sessions(rule, arrivals_per_hour=None, patience=pat, **kw)
                done = {r.sessions: r for r in tried}
                for w in (1, 2, 3):
                    r = done.get(w) or simulate_crowd(rule, sessions=w, patience=pat, **kw)
                    rows.append({"design": f"W={w}", "patience": pat, **_cell(r)})
                rows.append({"design": f"plan (W={w_plan})", "patience": pat, **_cell(done[w_plan])})
            fixed_places = lists
            plan0 = next(r for r in rows if r["design"].startswith("plan") and r["patience"] == 0)
            predicted = simulate_crowd(rule, sessions=plan0["W"], **kw)
            replay = simulate_crowd(rule, sessions=plan0["W"], resample=False, **kw)
            batch["comparisons"].append({
                "comparison": label, "p": p, "lists": lists, "fixed_places": fixed_places,
                "fixed_min": watching.summary()["fixed_wall_hours"].mean * 60, "fixed_rule_decided": watching.decided_share,
                "rows": rows, "predicted": _cell(predicted), "replay": _cell(replay)})
        out["batches"].append(batch)
    return out


def _rel(predicted: float, measured: float) -> float:
    return predicted / measured - 1 if measured else float("nan")


def acceptance(result: dict[str, Any]) -> list[str]:
    lines = []
    for b in result["batches"]:
        for c in b["comparisons"]:
            for pat in (0.0, result["patience"]):
                plan = next(r for r in c["rows"] if r["design"].startswith("plan") and r["patience"] == pat)
                tag = f"{b['batch'][:13]} {c['comparison']} {plan['design']} patience {pat:g}s"
                if c["comparison"] == "harder":
                    share = plan["decided"] / c["fixed_rule_decided"] if c["fixed_rule_decided"] else float("nan")
                    ok = share >= 0.9 and plan["places"] <= c["fixed_places"] and plan["wall_ratio"] <= 1.25
                    lines.append(f"{'PASS' if ok else 'FAIL'}  {tag}: decided {plan['decided']:.0%} = {share:.0%} of the "
                                 f"fixed rule's {c['fixed_rule_decided']:.0%} (>= 90 %), places {plan['places']:.2f} <= "
                                 f"{c['fixed_places']}, wall {plan['wall_ratio']:.2f}x the fixed collection (<= 1.25)")
                else:
                    ok = plan["places"] <= 0.5 * c["fixed_places"]
                    lines.append(f"{'PASS' if ok else 'FAIL'}  {tag}: places {plan['places']:.2f} <= 0.5 x "
                                 f"{c['fixed_places']} = {0.5 * c['fixed_places']:.1f} (decided {plan['decided']:.0%}, "
                                 f"the fixed rule {c['fixed_rule_decided']:.0%})")
            pr, rp = c["predicted"], c["replay"]
            dp, dw = _rel(pr["places"], rp["places"]), _rel(pr["wall_min"], rp["wall_min"])
            ok = abs(dp) <= 0.2 and abs(dw) <= 0.2  # False when nan (the replay placed no one)
            lines.append(f"{'PASS' if ok else 'FAIL'}  {b['batch'][:13]} {c['comparison']} budget --crowd vs replay "
                         f"(W={pr['W']}): places {pr['places']:.2f} vs {rp['places']:.2f} ({dp:+.0%}), wall "
                         f"{pr['wall_min']:.1f} vs {rp['wall_min']:.1f} min ({dw:+.0%}) (within 20 %)")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--patience", type=float, default=600.0, help="seconds an arrival waits for a place (waitlist rows)")
    ap.add_argument("--lease", type=float, default=0.0, help="seconds after quitting that the store settles a quitter")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("HUMEVAL_SHARED_DATA", "../shared/data")) / "dhe")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not all((args.data / b).is_file() for b in BATCHES):
        print(f"the DHE AMT batches are not in {args.data} (set HUMEVAL_SHARED_DATA)", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    result = run(args.data, args.runs, args.seed, args.patience, args.lease)
    result["acceptance"] = acceptance(result)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"crowd of a log: {args.runs} runs per cell, seed {args.seed}, waitlist {args.patience:g} s, lease {args.lease:g} s")
    for b in result["batches"]:
        print(f"\n{b['crowd']}; minutes per list {b['minutes_per_list']:.2f}")
        for c in b["comparisons"]:
            print(f"  {c['comparison']} (p = {c['p']}, {c['lists']} lists of {WATCHED}): fixed design {c['fixed_places']} "
                  f"places, {c['fixed_min']:.1f} min; the rule watching it decides in {c['fixed_rule_decided']:.0%}")
            print("    design          wait s  places  decided  wall min  wall/fixed  quits  turned away")
            for r in c["rows"]:
                print(f"    {r['design']:<15} {r['patience']:6.0f}  {r['places']:6.2f}  {r['decided']:7.0%}  "
                      f"{r['wall_min']:8.1f}  {r['wall_ratio']:10.2f}  {r['quits']:5.2f}  {r['turned_away']:11.1f}")
            for what in ("predicted", "replay"):
                r = c[what]
                print(f"    {('budget --crowd' if what == 'predicted' else 'replay of log'):<15} {0:6.0f}  {r['places']:6.2f}  "
                      f"{r['decided']:7.0%}  {r['wall_min']:8.1f}  {r['wall_ratio']:10.2f}  {r['quits']:5.2f}  "
                      f"{r['turned_away']:11.1f}")
    print("\nacceptance (issue 40):")
    for line in result["acceptance"]:
        print("  " + line)
    print(f"\n{result['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
