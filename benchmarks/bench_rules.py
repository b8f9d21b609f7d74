"""The two-system rules side by side: expected judgements / Wald's bound, errors, and the default's choice.

    python benchmarks/bench_rules.py            # the docs/stopping.md table (about 2 minutes on 2 cores)
    python benchmarks/bench_rules.py --fast     # delta 0.05, mu 0.1..0.4, 300 betting runs (CI runs this)

Cells: delta in {0.05, 0.01, 0.001} x effect mu in {0.03, 0.05, 0.1, 0.2, 0.4}, the preference
share p = (1 + mu) / 2. Rules:

- the Beta(20, 20) mixture (the default before this comparison), a Beta mixture and Robbins'
  normal mixture both tuned for 1,000 judgements: exact expected judgements (``humeval.stopping.exact``: the
  distribution of the count carried forward judgement by judgement; no Monte Carlo error);
- the betting test of Waudby-Smith & Ramdas (predictable plug-in bets, hedged): its bets depend on
  the path, so it is simulated (``--runs`` paths per cell; mean with its standard error).

Then every candidate default (Beta mixtures with prior strength a) is scored by its worst ratio,
over the cells, to the best of those four rules; the smallest worst ratio wins (the last column:
``anytime``, the default chosen so, a = 14). Last, the null
error (p = 1/2) of every rule within a horizon of 20,000 judgements at delta 0.05 and 0.01.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from humeval.stopping.betting import betting_paths
from humeval.stopping.exact import operating_characteristics, wald_bound
from humeval.stopping.hoeffding import HoeffdingRule
from humeval.stopping.mixture import BetaMixtureRule
from humeval.stopping.tuning import reference_rules, rule_efforts
from humeval.stopping.union_hoeffding import UnionHoeffdingRule

CANDIDATES = (5.0, 10.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 20.0, 30.0)


def betting_effort(p: float, delta: float, runs: int, seed: int) -> tuple[float, float, float]:
    """Mean judgements (and its standard error) and wrong share of the betting test, by simulation."""
    rng = np.random.default_rng(seed)
    horizon = int(max(40 * wald_bound(delta, p), 2000))
    n = np.zeros(runs)
    outcome = np.zeros(runs)
    todo = np.arange(runs)
    chunk = 8 * int(wald_bound(delta, p)) + 200
    # paths drawn in chunks of judgements: almost every path stops in the first chunk
    x = (rng.random((runs, min(chunk, horizon))) < p).astype(np.int8)
    dec = betting_paths(x, delta)
    n[:], outcome[:] = dec.n, dec.outcome
    todo = np.flatnonzero(dec.outcome == 0)
    if todo.size:  # the rest run to the horizon
        x = np.concatenate([x[todo], (rng.random((todo.size, horizon - x.shape[1])) < p).astype(np.int8)], axis=1)
        dec = betting_paths(x, delta)
        n[todo] = np.where(dec.outcome == 0, horizon, dec.n)
        outcome[todo] = dec.outcome
    return float(n.mean()), float(n.std(ddof=1) / np.sqrt(runs)), float(np.mean(outcome == -1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fast", action="store_true")
    ap.add_argument("--runs", type=int, default=2000, help="betting paths per cell")
    ap.add_argument("--seed", type=int, default=20261123)
    args = ap.parse_args()
    deltas = (0.05,) if args.fast else (0.05, 0.01, 0.001)
    mus = (0.1, 0.2, 0.4) if args.fast else (0.03, 0.05, 0.1, 0.2, 0.4)
    runs = 300 if args.fast else args.runs
    t0 = time.perf_counter()
    print("expected judgements / Wald bound ln(1/delta)/KL(p||1/2), p = (1 + mu)/2\n")
    header = (f"{'delta':>6} {'mu':>5} {'Wald':>8} | {'a = 20':>8} {'mix-1000':>8} {'norm-1000':>9} {'betting (se)':>13}"
              f" | {'best':<9} | {'anytime':>7}")
    print(header)
    print("-" * len(header))
    best: dict[tuple[float, float], float] = {}
    cand_n: dict[tuple[float, float, float], float] = {}
    for delta in deltas:
        cands = {f"a={a:g}": BetaMixtureRule(delta, a) for a in CANDIDATES}
        for mu in mus:
            p = (1 + mu) / 2
            wald = wald_bound(delta, p)
            refs = {r.rule: r.expected_n for r in rule_efforts(p, delta)}
            bet_n, bet_se, _ = betting_effort(p, delta, runs, args.seed)
            names = ["mixture (a = 20)", "mixture (tuned for 1000)", "normal-mixture (tuned for 1000)"]
            row = [refs[k] for k in names] + [bet_n]
            names.append("betting")
            short = ["a = 20", "mix-1000", "norm-1000", "betting"]
            best[delta, mu] = min(row)
            for r in rule_efforts(p, delta, cands):
                cand_n[delta, mu, float(r.rule[2:])] = r.expected_n
            print(f"{delta:>6g} {mu:>5g} {wald:>8.0f} | " + " ".join(f"{v / wald:>8.2f}" for v in row[:2])
                  + f" {row[2] / wald:>9.2f} {bet_n / wald:>7.2f} ({bet_se / wald:.2f})"
                  + f" | {short[int(np.argmin(row))]:<9} | {refs['anytime'] / wald:>7.2f}")
    print("\ncandidate defaults: worst ratio, over the cells, to the best of the four rules")
    scores = {a: max(cand_n[d, m, a] / best[d, m] for d in deltas for m in mus) for a in CANDIDATES}
    for a, s in scores.items():
        print(f"  Beta({a:g}, {a:g}) mixture: {s:.3f}")
    chosen = min(scores, key=scores.__getitem__)
    from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH

    print(f"smallest worst ratio: prior strength {chosen:g} ({scores[chosen]:.3f}); the default `anytime` uses "
          f"{DEFAULT_PRIOR_STRENGTH:g}; a = 20 scores {scores[20.0]:.3f}")

    print("\nnull error (p = 1/2) within 20,000 judgements")
    for delta in (0.05,) if args.fast else (0.05, 0.01):
        rules = {**reference_rules(delta), "hoeffding-union": UnionHoeffdingRule(delta), "hoeffding (not valid)": HoeffdingRule(delta)}
        for name, rule in rules.items():
            oc = operating_characteristics(rule.boundary(20_000), 0.5)
            print(f"  delta {delta:g}  {name:<32} {oc.decide_a + oc.decide_b:.4f} (exact)")
        null_runs = 200 if args.fast else 1000
        rng = np.random.default_rng(args.seed)
        dec = betting_paths((rng.random((null_runs, 20_000)) < 0.5).astype(np.int8), delta)
        share = float(np.mean(dec.outcome != 0))
        print(f"  delta {delta:g}  {'betting':<32} {share:.4f} (+/- {2 * np.sqrt(share * (1 - share) / null_runs + 1e-12):.4f}, {null_runs} paths)")
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
