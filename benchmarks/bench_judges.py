"""Benchmark: prediction-powered means with a simulated judge of known quality.

Run: ``python benchmarks/bench_judges.py [--runs 1000] [--labelled 200] [--items 2000] [--json]``.

For a judge whose correlation with the human scores is rho (0.5, 0.7, 0.9), each run draws
``--items`` items, human scores on a 1-5-like scale (mean 3, sd 1) and the judge's scores
on its own scale (a metric near 0.87 with sd 0.02, as raw BERTScore), labels a uniform
random ``--labelled`` of them, and computes the 95% interval of the mean three ways: human
labels only, PPI++ on the raw judge scores, and PPI++ on the judge put on the human scale
(``calibrate=True``). All runs of one rho are one vectorised call
(:func:`humeval.stats.ppi_mean_arrays`).

Printed per rho: coverage of the true mean (3) by each interval over the runs; the tuned
weight; and the human labels the judge saves at equal interval width. A normal interval's
width goes as 1/sqrt(n), so the human-only study needs ``(w_ppi / w_human)^2`` times as
many labels to be as narrow as PPI with the judge: that share is printed beside the
theory's ``1 - rho^2`` (an infinite pool of judged items) and ``1 - rho^2 N / (N + n)`` (the
variance of the optimally weighted PPI++ estimate with ``N`` unlabelled items).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import argparse
import json
import time
from typing import Any

import numpy as np

from humeval.stats import ppi_mean_arrays

TRUE_MEAN = 3.0
RHOS = (0.5, 0.7, 0.9)


def simulate(rho: float, *, runs: int, labelled: int, items: int, seed: int = 0) -> dict[str, Any]:
    """Coverage and interval widths of ``runs`` simulated studies with a judge of correlation ``rho``."""
    rng = np.random.default_rng([seed, round(rho * 1000)])
    quality = rng.standard_normal((runs, items))
    human = TRUE_MEAN + quality
    judge = 0.87 + 0.02 * (rho * quality + np.sqrt(1 - rho**2) * rng.standard_normal((runs, items)))
    # a uniform random labelled subset per run: the first `labelled` of a random permutation
    order = np.argsort(rng.random((runs, items)), axis=1)
    human, judge = np.take_along_axis(human, order, 1), np.take_along_axis(judge, order, 1)
    y, f, fu = human[:, :labelled], judge[:, :labelled], judge[:, labelled:]
    raw = ppi_mean_arrays(y, f, fu)
    cal = ppi_mean_arrays(y, f, fu, calibrate=True)

    def covers(lo: np.ndarray, hi: np.ndarray) -> float:
        return float(np.mean((lo <= TRUE_MEAN) & (TRUE_MEAN <= hi)))

    w_h = cal["human_ci_high"] - cal["human_ci_low"]
    w_cal, w_raw = cal["ci_high"] - cal["ci_low"], raw["ci_high"] - raw["ci_low"]
    unlabelled = items - labelled
    return {
        "rho": rho, "runs": runs, "labelled": labelled, "items": items,
        "coverage_human": covers(cal["human_ci_low"], cal["human_ci_high"]),
        "coverage_ppi_raw": covers(raw["ci_low"], raw["ci_high"]),
        "coverage_ppi_calibrated": covers(cal["ci_low"], cal["ci_high"]),
        "coverage_hits_calibrated": int(np.sum((cal["ci_low"] <= TRUE_MEAN) & (TRUE_MEAN <= cal["ci_high"]))),
        "lam_raw_median": float(np.median(raw["lam"])),
        "lam_calibrated_median": float(np.median(cal["lam"])),
        "width_ratio_raw": float(np.mean(w_raw / w_h)),
        "width_ratio_calibrated": float(np.mean(w_cal / w_h)),
        "labels_needed_share": float(np.mean((w_cal / w_h) ** 2)),
        "labels_needed_share_raw": float(np.mean((w_raw / w_h) ** 2)),
        "theory_share": 1 - rho**2,
        "theory_share_finite": 1 - rho**2 * unlabelled / (unlabelled + labelled),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--labelled", type=int, default=200)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object per rho instead of the table")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = [simulate(rho, runs=args.runs, labelled=args.labelled, items=args.items, seed=args.seed) for rho in RHOS]
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print(f"PPI with a simulated judge: {args.runs} runs, n = {args.labelled} labelled of N = {args.items} items, "
          "95% intervals, true mean 3")
    print(f"{'rho':>4} {'cover human':>11} {'cover raw':>9} {'cover cal':>9} {'lam raw':>7} {'lam cal':>7} "
          f"{'width raw':>9} {'width cal':>9} {'labels needed':>13} {'theory 1-rho^2':>14} {'theory (N)':>10} "
          f"{'saved':>6}")
    for r in rows:
        print(f"{r['rho']:>4.1f} {r['coverage_human']:>11.3f} {r['coverage_ppi_raw']:>9.3f} "
              f"{r['coverage_ppi_calibrated']:>9.3f} {r['lam_raw_median']:>7.2f} {r['lam_calibrated_median']:>7.2f} "
              f"{r['width_ratio_raw']:>9.3f} {r['width_ratio_calibrated']:>9.3f} {r['labels_needed_share']:>13.3f} "
              f"{r['theory_share']:>14.3f} {r['theory_share_finite']:>10.3f} {1 - r['labels_needed_share']:>6.1%}")
    print("width: PPI interval width over the human-only width (mean over runs); labels needed: the share of the "
          "human-only labels PPI needs for the same width, (width cal)^2; saved = 1 - labels needed")
    print(f"({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
