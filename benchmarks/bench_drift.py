"""Drift: the live rule's decisions that the fixed design's test would not make, and how many the drift check flags.

    python benchmarks/bench_drift.py                 # 4,000 runs per setting, the fixed design 200 outcomes (~5 s)
    python benchmarks/bench_drift.py --runs 20000 --fixed 200 400   # the docs/stopping.md numbers (~35 s)

A crowd whose preference for A moves linearly from 0.65 to 0.35 over the fixed design's collection (N outcomes,
tied over them), and two crowds that do not move (P(A) 0.6 and 0.5). Per run, all at once (no loop over runs or
outcomes): the live rule (``get_rule("anytime", delta)``, ``decide_paths`` on the running counts) watches the
outcomes as they arrive; the fixed design's test is the exact two-sided binomial test at level delta on all N.
A live decision "the fixed design would not make" is one for a side that test does not reject for.

The drift check is the preregistered one (``stopping.drift_check: halves``): the outcomes the decision used, split
into halves in arrival order, compared by the exact split test given the rule's stop
(:func:`humeval.stats.drift.stopped_split_pvalues`) at ``--alpha``. Last, for comparison only (not built, it
costs collection): a confirmation wave of ``--wave`` outcomes collected when the fixed design would have ended,
flagged when it prefers the other side than the decision (exact one-sided binomial test against 1/2 at
``--alpha``; the wave is independent of the stop, so under a constant preference that favours the decided side,
or none, it flags at most alpha).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.stats import binom

from humeval.stats.drift import stopped_split_pvalues
from humeval.stats.proportion import wilson_interval
from humeval.stopping import get_rule


def _share(k: int, n: int) -> str:
    if n == 0:
        return "-"
    lo, hi = wilson_interval(k, n)
    return f"{k}/{n} = {k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def run(p_start: float, p_end: float, *, fixed: int, runs: int, delta: float, alpha: float, wave: int,
        seed: int) -> dict[str, object]:
    """One setting: the counts the table prints."""
    rng = np.random.default_rng(seed)
    rule = get_rule("anytime", delta)
    p = np.linspace(p_start, p_end, fixed)  # the crowd's P(A) at each place of the fixed design's collection
    x = (rng.random((runs, fixed)) < p).astype(np.int64)
    s = x.cumsum(axis=1)
    live = rule.decide_paths(s)
    total = s[:, -1]
    pv = np.minimum(1.0, 2 * np.minimum(binom.cdf(total, fixed, 0.5), binom.sf(total - 1, fixed, 0.5)))
    fixed_side = np.where(pv <= delta, np.sign(2 * total - fixed), 0)
    decided = np.flatnonzero(live.decided)
    n = live.n[decided]
    s_n = s[decided, n - 1]
    m = n // 2
    halves = stopped_split_pvalues(rule.boundary(fixed), n, s_n, m, s[decided, m - 1], p0=0.5) <= alpha
    not_fixed = live.outcome[decided] != fixed_side[decided]
    early_favourite = live.outcome[decided] == (1 if p_start >= p_end else -1)
    # the confirmation wave: `wave` outcomes from the crowd at the end of the fixed design's collection; flagged
    # when they prefer the other side (exact one-sided binomial test against 1/2; independent of the stop)
    late = (rng.random((decided.size, wave)) < p[-1]).astype(np.int64).sum(axis=1)
    for_decided = np.where(live.outcome[decided] == 1, late, wave - late)
    confirm = binom.cdf(for_decided, wave, 0.5) <= alpha
    return {"decided": decided.size, "early_favourite": int(early_favourite.sum()), "fixed_decides": int((fixed_side != 0).sum()),
            "not_fixed": int(not_fixed.sum()), "flag_not_fixed": int(halves[not_fixed].sum()),
            "flag_decided": int(halves.sum()), "confirm_not_fixed": int(confirm[not_fixed].sum()),
            "confirm_decided": int(confirm.sum()), "median_n": float(np.median(n)) if n.size else math.nan,
            "p_at_median": float(p[int(np.median(n)) - 1]) if n.size else math.nan}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=4000)
    ap.add_argument("--fixed", type=int, nargs="+", default=[200], help="the fixed design's outcomes N (one or more)")
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--alpha", type=float, default=0.05, help="the drift check's level (analysis.alpha)")
    ap.add_argument("--wave", type=int, default=100, help="outcomes of the confirmation wave (comparison only)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"anytime rule, delta {args.delta:g}; drift check at alpha {args.alpha:g}; {args.runs} runs per setting; "
          f"seed {args.seed}")
    for fixed in args.fixed:
        for k, (a, b) in enumerate([(0.65, 0.35), (0.6, 0.6), (0.5, 0.5)]):
            t0 = time.perf_counter()
            r = run(a, b, fixed=fixed, runs=args.runs, delta=args.delta, alpha=args.alpha, wave=args.wave,
                    seed=args.seed + k)
            crowd = f"P(A) {a:g} -> {b:g}" if a != b else f"P(A) {a:g} constant"
            print(f"\nN = {fixed}, {crowd} ({time.perf_counter() - t0:.1f} s)")
            print(f"  live rule decides:                    {_share(r['decided'], args.runs)}"
                  f" (median n {r['median_n']:.0f}, where the crowd's P(A) is {r['p_at_median']:.3f}); for the early "
                  f"favourite {r['early_favourite']}")
            print(f"  fixed design's binomial test decides: {_share(r['fixed_decides'], args.runs)}")
            print(f"  live decisions the fixed test would not make: {r['not_fixed']}")
            print(f"    flagged by the drift check (halves):   {_share(r['flag_not_fixed'], r['not_fixed'])}")
            print(f"    flagged by a confirmation wave of {args.wave}: {_share(r['confirm_not_fixed'], r['not_fixed'])}")
            print(f"  all live decisions flagged (halves):     {_share(r['flag_decided'], r['decided'])}")
            print(f"  all live decisions flagged (wave):       {_share(r['confirm_decided'], r['decided'])}")


if __name__ == "__main__":
    main()
