"""Benchmark: the full Table 3 (3 difficulties x 5 strategies x 1000 iterations), timed.

Goal (issue 3): < 10 s on 2 cores and >= 100x faster than a straightforward per-label
Python loop. The loop baseline is timed on a sample of iterations and extrapolated per
label (running it in full would take tens of minutes).

    /work/venv/bin/python benchmarks/bench_simulate.py [--processes 2] [--iterations 1000]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from humeval.simulate import SimulationConfig, simulate_many
from humeval.simulate.population import legacy_parity_inputs

HORIZON = {0.25: 3500, 0.125: 5000, 0.0625: 15000}
STRATEGIES = ("majority7", "majority5", "max3", "fixed", "one")
VOTES = {"majority7": 7, "majority5": 5, "max3": 3, "fixed": 1, "one": 1}


def loop_baseline(iterations: int, seed: int = 0) -> tuple[float, int]:
    """Per-label loop in the style of the authors' code (paths only, lastrun-free); seconds and labels."""
    rng = np.random.default_rng(seed)
    cap, d = legacy_parity_inputs(21, 0.25, 0.1, 100, 0.8, 1.0)
    labels = 0
    t0 = time.perf_counter()
    for _ in range(iterations):
        for st in STRATEGIES:
            fixed = int(rng.integers(100))
            total = 0
            for j in range(HORIZON[0.25]):
                votes = 0
                k = VOTES[st]
                workers = rng.choice(100, k, replace=False) if st.startswith("majority") else None
                for v in range(k):
                    w = fixed if st == "fixed" else (workers[v] if workers is not None else int(rng.integers(100)))
                    votes += int(rng.random() < (cap[w] * d[j] + 1) / 2)
                    labels += 1
                    if st == "max3" and v == 1 and votes in (0, 2):
                        break
                total += int(2 * votes > k)
                _ = total / (j + 1) - np.sqrt(np.log(1000) / (2 * (j + 1)))
    return time.perf_counter() - t0, labels


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--loop-iterations", type=int, default=2)
    args = ap.parse_args()
    configs = [SimulationConfig(mu=m, n_requests=h, iterations=args.iterations, parity=True) for m, h in HORIZON.items()]
    simulate_many([SimulationConfig(mu=0.25, n_requests=100, iterations=2, parity=True)], ["one"], ["hoeffding-lastrun"])
    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    t0, c0 = time.perf_counter(), cpu()
    reports = simulate_many(configs, STRATEGIES, ("hoeffding-lastrun",), seed=21, processes=args.processes)
    elapsed, cpu_s = time.perf_counter() - t0, cpu() - c0
    labels = sum(HORIZON[m] * sum(min(VOTES[s], 2.4 if s == "max3" else VOTES[s]) for s in STRATEGIES) * args.iterations
                 for m in HORIZON)
    print(f"full Table 3 ({args.iterations} iterations, {args.processes} processes): {elapsed:.2f} s "
          f"wall, {cpu_s:.2f} s CPU over all processes (~{labels / 1e6:.0f}M labels, {labels / elapsed / 1e6:.0f}M labels/s)")
    for rep in reports:
        print(f"  mu={rep.config.mu:<6g} " + "  ".join(f"{r.strategy}={r.mean_effort:.0f}" for r in rep.results))
    loop_s, loop_labels = loop_baseline(args.loop_iterations)
    per_label = loop_s / loop_labels
    projected = per_label * labels
    print(f"per-label loop: {loop_labels} labels in {loop_s:.2f} s ({per_label * 1e6:.2f} us/label); "
          f"projected full table {projected / 60:.1f} min (1 process) -> speed-up {projected / elapsed:.0f}x")


if __name__ == "__main__":
    main()
