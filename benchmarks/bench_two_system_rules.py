"""Two systems: mean judgements to a decision / Wald's bound, for the default rule and three alternatives.

    python benchmarks/bench_two_system_rules.py --paths 400 --null-paths 2000

Outcomes are Bernoulli(p) with p = (1 + mu) / 2 (mu: the preference margin 2p - 1; one worker,
no difficulty spread). For every delta in ``--deltas`` and mu in ``--mus`` each rule runs on the
same ``--paths`` simulated paths (common random numbers, seed 0) and the table prints its mean
judgements to a decision divided by Wald's lower bound ln(1/delta) / KL(p || 1/2)
(:func:`humeval.simulate.theory.wald_bound`); undecided paths count the horizon (10 x the bound).

Rules (all two-sided and anytime-valid; the first two are :class:`humeval.stopping.BetaMixtureRule`):

* ``anytime``: humeval's default, the Beta(20, 20) mixture martingale;
* ``beta-1000``: the same mixture with the prior tuned for about 1,000 judgements (prior s.d. of
  p equal to sqrt(ln(1/delta) / (2 * 1000)), the margin it would detect at n = 1,000);
* ``normal-mixture``: Robbins' normal mixture for the 1/2-sub-Gaussian sum S_n - n/2: decide when
  |S_n - n/2| >= sqrt((v + rho) (ln((v + rho) / rho) + 2 ln(1/delta))), v = n/4, with rho tuned for
  v = 250 (n = 1,000) by Howard et al. (2021, eq. 3.5's rule of thumb
  rho = m / (2 ln(1/delta) + ln(1 + 2 ln(1/delta))));
* ``betting``: two betting martingales (Waudby-Smith & Ramdas 2023) on X - 1/2 with predictable
  plug-in bets lambda_t = min(1, sqrt(2 ln(2/delta) / (s2_{t-1} t ln(1 + t)))), s2 the running
  variance (prior 1/4), averaged; decide when the average reaches 1/delta.

Then ``--strengths`` scans Beta(a, a) prior strengths for the one that minimises the worst ratio
to the best of the four rules over the table, and the null error (p = 1/2) of every rule is
measured at delta 0.05 and 0.01 up to ``--null-horizon`` judgements.
"""

from __future__ import annotations

import argparse

import numpy as np

from humeval.simulate.theory import wald_bound
from humeval.stopping import BetaMixtureRule, first_passage


def beta_prior_for(n0: float, delta: float) -> float:
    """Beta(a, a) strength whose s.d. of p is sqrt(ln(1/delta) / (2 n0))."""
    sd = np.sqrt(np.log(1 / delta) / (2 * n0))
    return max(0.05, (1 / (4 * sd**2) - 1) / 2)


def normal_mixture_a(n: np.ndarray, delta: float, m: float = 250.0) -> np.ndarray:
    """Smallest S deciding A after n outcomes for the two-sided normal mixture."""
    ld = np.log(1 / delta)
    rho = m / (2 * ld + np.log(1 + 2 * ld))
    v = n / 4.0
    radius = np.sqrt((v + rho) * (np.log((v + rho) / rho) + 2 * ld))
    return np.ceil(n / 2 + radius - 1e-9).astype(np.int64)


def betting_stop(x: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """First n with (K+ + K-)/2 >= 1/delta for paths x (0/1); returns (n, outcome) as first_passage."""
    z = x - 0.5
    t = np.arange(1, x.shape[1] + 1, dtype=float)
    prev_n = t - 1
    csum = np.cumsum(x, axis=1)
    csq = np.cumsum(x * x, axis=1)
    s_prev = np.concatenate([np.zeros((x.shape[0], 1)), csum[:, :-1]], axis=1)
    q_prev = np.concatenate([np.zeros((x.shape[0], 1)), csq[:, :-1]], axis=1)
    mean = (0.5 + s_prev) / (1 + prev_n)
    var = (0.25 + q_prev - 2 * mean * s_prev + prev_n * mean**2) / (1 + prev_n)
    lam = np.minimum(1.0, np.sqrt(2 * np.log(2 / delta) / (np.maximum(var, 1e-4) * t * np.log1p(t))))
    lp = np.cumsum(np.log1p(lam * z), axis=1)
    lm = np.cumsum(np.log1p(-lam * z), axis=1)
    lm_avg = np.logaddexp(lp, lm) - np.log(2)
    hit = lm_avg >= np.log(1 / delta)
    any_hit = hit.any(axis=1)
    first = hit.argmax(axis=1)
    rows = np.arange(x.shape[0])
    outcome = np.where(any_hit, np.where(lp[rows, first] > lm[rows, first], 1, -1), 0)
    return np.where(any_hit, first + 1, 0), outcome


def run_rules(p: float, delta: float, paths: int, horizon: int, rng: np.random.Generator,
              strengths: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Mean effort (undecided: horizon) and wrong share of every rule, in blocks of paths."""
    names = [*strengths, "normal-mixture", "betting"]
    effort = {r: [] for r in names}
    wrong = {r: [] for r in names}
    n = np.arange(1, horizon + 1)
    bounds = {r: BetaMixtureRule(delta, a).boundary(horizon) for r, a in strengths.items()}
    bounds["normal-mixture"] = normal_mixture_a(n, delta)
    block = max(1, 4_000_000 // horizon)
    truth = 1 if p > 0.5 else (-1 if p < 0.5 else 0)
    for start in range(0, paths, block):
        m = min(block, paths - start)
        x = (rng.random((m, horizon)) < p).astype(np.int32)
        s = np.cumsum(x, axis=1)
        for r in names:
            if r == "betting":
                stop, out = betting_stop(x.astype(float), delta)
            else:
                d = first_passage(s, bounds[r])
                stop, out = d.n, d.outcome
            effort[r].append(np.where(stop > 0, stop, horizon))
            wrong[r].append((out != 0) if truth == 0 else (out == -truth))
    return {r: (float(np.concatenate(effort[r]).mean()), float(np.concatenate(wrong[r]).mean())) for r in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deltas", default="0.05,0.01,0.001")
    ap.add_argument("--mus", default="0.03,0.05,0.1,0.2,0.4")
    ap.add_argument("--paths", type=int, default=400)
    ap.add_argument("--null-paths", type=int, default=2000)
    ap.add_argument("--null-horizon", type=int, default=20000)
    ap.add_argument("--strengths", default="2,5,10,20,50,100,200")
    args = ap.parse_args()
    deltas = [float(x) for x in args.deltas.split(",")]
    mus = [float(x) for x in args.mus.split(",")]
    scan = [float(x) for x in args.strengths.split(",")]
    print("| delta | mu | Wald bound | anytime (a=20) | beta-1000 | normal-mixture | betting | best |")
    print("|---|---|---|---|---|---|---|---|")
    ratios: dict[tuple[float, float], dict[str, float]] = {}
    for delta in deltas:
        for mu in mus:
            p = (1 + mu) / 2
            wb = wald_bound(delta, p)
            horizon = int(10 * wb)
            strengths = {"anytime": 20.0, "beta-1000": beta_prior_for(1000, delta)}
            strengths |= {f"a={a:g}": a for a in scan}
            rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(int(delta * 1e6), int(mu * 1e3))))
            res = run_rules(p, delta, args.paths, horizon, rng, strengths)
            r = {k: v[0] / wb for k, v in res.items()}
            ratios[(delta, mu)] = r
            four = {k: r[k] for k in ("anytime", "beta-1000", "normal-mixture", "betting")}
            best = min(four, key=four.get)
            print(f"| {delta:g} | {mu:g} | {wb:,.0f} | {r['anytime']:.2f} | {r['beta-1000']:.2f} "
                  f"| {r['normal-mixture']:.2f} | {r['betting']:.2f} | {best} |", flush=True)
    print("\nworst ratio to the best of the four rules, over the table, per Beta(a, a) prior strength:")
    for name in ["anytime", "beta-1000", "normal-mixture", "betting", *(f"a={a:g}" for a in scan)]:
        worst = max(r[name] / min(r[k] for k in ("anytime", "beta-1000", "normal-mixture", "betting"))
                    for r in ratios.values())
        print(f"  {name:15s} {worst:.3f}")
    print(f"\nnull error (p = 1/2, horizon {args.null_horizon:,}, {args.null_paths} paths):")
    for delta in (0.05, 0.01):
        rng = np.random.default_rng(np.random.SeedSequence(1, spawn_key=(int(delta * 1e6),)))
        res = run_rules(0.5, delta, args.null_paths, args.null_horizon, rng,
                        {"anytime": 20.0, "beta-1000": beta_prior_for(1000, delta)})
        print(f"  delta {delta:g}: " + ", ".join(f"{k} {v[1]:.4f}" for k, v in res.items()))


if __name__ == "__main__":
    main()
