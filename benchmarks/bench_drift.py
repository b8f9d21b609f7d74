"""Drift: the live rule's decisions that the fixed design's test would not make, and how many the drift check flags.

    python benchmarks/bench_drift.py                 # 4,000 runs per setting, the fixed design 200 outcomes (~5 s)
    python benchmarks/bench_drift.py --runs 20000 --fixed 200 400   # the docs/stopping.md numbers (~15 s)

A crowd whose preference for A moves linearly from 0.65 to 0.35 over the fixed design's collection (N outcomes,
tied over them), and two crowds that do not move (P(A) 0.6 and 0.5). Per run, all at once (no loop over runs or
outcomes): the live rule (``get_rule("anytime", delta)``, ``decide_paths`` on the running counts) watches the
outcomes as they arrive; the fixed design's test is the exact two-sided binomial test at level delta on all N.
A live decision "the fixed design would not make" is one for a side that test does not reject for.

The drift check is the preregistered one (``stopping.drift_check: halves``): the outcomes the decision used, split
into halves in arrival order, compared by the exact split test given the rule's stop
(:func:`humeval.stats.drift.stopped_split_pvalues`) at ``--alpha``. Last, the other preregistered check (built as
``stopping.drift_check: wave``, it costs collection): a confirmation wave of ``--wave`` outcomes collected when the fixed design would have ended,
flagged when it prefers the other side than the decision (exact one-sided binomial test against 1/2 at
``--alpha``; the wave is independent of the stop, so under a constant preference that favours the decided side,
or none, it flags at most alpha).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.stats import binom, norm

from humeval.stats.drift import confirmation_power, curtailed_wave, stopped_split_pvalues
from humeval.stats.proportion import wilson_interval
from humeval.stopping import get_rule


def _share(k: int, n: int) -> str:
    if n == 0:
        return "-"
    lo, hi = wilson_interval(k, n)
    return f"{k}/{n} = {k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def run(p_start: float, p_end: float, *, fixed: int, runs: int, delta: float, alpha: float, wave: list[int],
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
    # the oracle trend bound: the score test of the true trend on the decision's n outcomes (not conditioned on
    # the stop), its power from the crowd's P(A) at positions 1..n; one row per distinct n
    ns = np.unique(n)
    t = np.arange(1, fixed + 1)
    oracle_by_n = np.zeros(ns.size)
    for i, k in enumerate(ns):  # one vector operation per distinct n (at most N of them)
        c = t[:k] - (k + 1) / 2
        mu, sd = float((c * p[:k]).sum()), float(np.sqrt((c ** 2 * p[:k] * (1 - p[:k])).sum()))
        oracle_by_n[i] = norm.cdf(abs(mu) / sd - norm.ppf(1 - alpha)) if sd > 0 and p_start != p_end else alpha
    oracle = oracle_by_n[np.searchsorted(ns, n)]
    # confirmation waves: outcomes from the crowd at the end of the fixed design's collection, for the decided side
    side_a = (live.outcome[decided] == 1)[:, None]
    waves: dict[int, dict[str, float]] = {}
    for w in wave:
        draws = rng.random((decided.size, w)) < p[-1]
        flagged, needed = curtailed_wave(np.where(side_a, draws, ~draws).astype(np.int64), alpha)
        waves[w] = {"not_fixed": int(flagged[not_fixed].sum()), "decided": int(flagged.sum()),
                    "needed": float(needed.mean()) if needed.size else math.nan}
    # the largest wave right after the decision: the crowd at positions n + 1 .. n + w (no wait)
    w = max(wave)
    at = np.minimum(n[:, None] + np.arange(w)[None, :], fixed - 1)
    draws = rng.random((decided.size, w)) < p[at]
    soon, _ = curtailed_wave(np.where(side_a, draws, ~draws).astype(np.int64), alpha)
    return {"decided": decided.size, "early_favourite": int(early_favourite.sum()), "fixed_decides": int((fixed_side != 0).sum()),
            "not_fixed": int(not_fixed.sum()), "flag_not_fixed": int(halves[not_fixed].sum()),
            "flag_decided": int(halves.sum()), "oracle_not_fixed": float(oracle[not_fixed].mean()) if not_fixed.any()
            else math.nan, "waves": waves, "soon_not_fixed": int(soon[not_fixed].sum()), "soon_decided": int(soon.sum()),
            "median_n": float(np.median(n)) if n.size else math.nan,
            "p_at_median": float(p[int(np.median(n)) - 1]) if n.size else math.nan}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=4000)
    ap.add_argument("--fixed", type=int, nargs="+", default=[200], help="the fixed design's outcomes N (one or more)")
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--alpha", type=float, default=0.05, help="the drift check's level (analysis.alpha)")
    ap.add_argument("--wave", type=int, nargs="+", default=[69, 100],
                    help="outcomes of the confirmation wave (one or more sizes; 69: power 0.8 against a late share of "
                         "0.35 at alpha 0.05, humeval.stats.drift.confirmation_wave_size)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"anytime rule, delta {args.delta:g}; drift check at alpha {args.alpha:g}; {args.runs} runs per setting; "
          f"seed {args.seed}")
    for w in args.wave:  # exact, no simulation: the wave's flag rate when its crowd is tied, and at a late share 0.35
        print(f"a wave of {w}: flags at most {float(confirmation_power(w, 0.5, args.alpha)[0]):.4f} of decisions when "
              f"the later crowd is tied (exact size), {float(confirmation_power(w, 0.35, args.alpha)[0]):.4f} when it "
              f"gives the decided side 0.35")
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
            print(f"    oracle trend bound (any check on the used judgements): {r['oracle_not_fixed']:.3f}")
            for w, c in r["waves"].items():
                print(f"    flagged by a confirmation wave of {w} at the fixed end: "
                      f"{_share(c['not_fixed'], r['not_fixed'])} (curtailed: {c['needed']:.1f} outcomes on average)")
            print(f"    flagged by a wave of {max(args.wave)} right after the decision: "
                  f"{_share(r['soon_not_fixed'], r['not_fixed'])}")
            what = " (false flags: the crowd does not move)" if a == b else ""
            print(f"  all live decisions flagged{what}: halves {_share(r['flag_decided'], r['decided'])}")
            for w, c in r["waves"].items():
                print(f"    wave of {w} at the fixed end: {_share(c['decided'], r['decided'])}")
            print(f"    wave of {max(args.wave)} right after the decision: {_share(r['soon_decided'], r['decided'])}")

if __name__ == "__main__":
    main()
