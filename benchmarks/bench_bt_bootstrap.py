"""Bradley-Terry with 1000 bootstrap rounds on an arena-sized log: humeval against a FastChat-style L-BFGS.

    python benchmarks/bench_bt_bootstrap.py --battles 1500000 --models 100 --boot 1000

A synthetic battle log (``--models`` systems with normal strengths, sd 1 on the logit scale,
pairs drawn with Zipf-like popularity, 10% ties; seed 0) is generated in each child process
(not timed). Each method runs in its own process so its peak RSS is its own; printed: wall
time, CPU time, peak RSS (and the RSS with only the log loaded), and the largest rating
difference to humeval's point estimate.

* ``humeval``: :func:`humeval.stats.bradley_terry` (battles aggregated to category counts,
  bootstrap replicates as multinomial resamples of those counts, mapped to K x K win matrices
  with a sparse product, batched Newton warm-started at the full-data fit).
* ``lbfgs``: the approach of FastChat's arena notebooks, written here with scipy (not copied):
  per round, resample the raw battles with replacement and minimise the BT logistic loss over
  the battles with ``scipy.optimize.minimize(method="L-BFGS-B")``. ``--lbfgs-rounds`` rounds
  are run and the time is scaled linearly to ``--boot`` rounds (printed as such).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd


def battle_log(n: int, k: int, seed: int = 0) -> pd.DataFrame:
    """Generated in chunks of 100,000 battles so that generating it does not set the peak RSS."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, k)
    pop = 1.0 / np.arange(1, k + 1) ** 0.6
    pop /= pop.sum()
    a_all, b_all, w_all = (np.empty(n, dtype=np.int16) for _ in range(3))
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        a = rng.choice(k, m, p=pop)
        b = rng.integers(0, k - 1, m)
        b = np.where(b >= a, b + 1, b)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        u = rng.random(m)
        a_all[start:start + m], b_all[start:start + m] = a, b
        w_all[start:start + m] = np.where(u < 0.1, 2, np.where(u < 0.1 + 0.9 * p, 0, 1))
    cat = pd.CategoricalDtype([f"model-{i:03d}" for i in range(k)])
    return pd.DataFrame({
        "model_a": pd.Categorical.from_codes(a_all, dtype=cat),
        "model_b": pd.Categorical.from_codes(b_all, dtype=cat),
        "winner": pd.Categorical.from_codes(w_all, categories=["model_a", "model_b", "tie"]),
    })


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_humeval(log: pd.DataFrame, boot: int) -> dict:
    from humeval.stats import bradley_terry

    r = bradley_terry(log, n_boot=boot, seed=0)
    return {"ratings": {s: r.score(s).estimate for s in r.systems}}


def run_lbfgs(log: pd.DataFrame, rounds: int) -> dict:
    from scipy.optimize import minimize

    systems = sorted(set(log["model_a"].astype(str)) | set(log["model_b"].astype(str)))
    index = {s: i for i, s in enumerate(systems)}
    a = log["model_a"].astype(str).map(index).to_numpy()
    b = log["model_b"].astype(str).map(index).to_numpy()
    y = np.where(log["winner"] == "model_a", 1.0, np.where(log["winner"] == "model_b", 0.0, 0.5))
    k, n = len(systems), len(a)

    def fit(ai: np.ndarray, bi: np.ndarray, yi: np.ndarray) -> np.ndarray:
        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            z = theta[ai] - theta[bi]
            p = 1 / (1 + np.exp(-z))
            ll = -(yi * np.log(p + 1e-300) + (1 - yi) * np.log(1 - p + 1e-300)).sum()
            g = p - yi
            grad = np.bincount(ai, g, k) - np.bincount(bi, g, k)
            return float(ll), grad
        res = minimize(loss, np.zeros(k), jac=True, method="L-BFGS-B", options={"maxiter": 500})
        return res.x - res.x.mean()

    theta = fit(a, b, y)
    rng = np.random.default_rng(0)
    boots = []
    for _ in range(rounds):
        idx = rng.integers(0, n, n)
        boots.append(fit(a[idx], b[idx], y[idx]))
    ratings = 1000 + 400 / np.log(10) * theta
    return {"ratings": dict(zip(systems, ratings.tolist(), strict=True))}


def child(method: str, n: int, k: int, boot: int, rounds: int) -> None:
    import scipy.optimize  # noqa: F401  (libraries loaded before the baseline: it is the log's and theirs)

    import humeval.stats  # noqa: F401

    log = battle_log(n, k)
    base = rss_mb()
    t, c = time.perf_counter(), time.process_time()
    out = run_humeval(log, boot) if method == "humeval" else run_lbfgs(log, rounds)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    print(json.dumps({"method": method, "wall": wall, "cpu": cpu, "rss_peak_mb": rss_mb(), "rss_log_mb": base, **out}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--battles", type=int, default=1_500_000)
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--lbfgs-rounds", type=int, default=5)
    ap.add_argument("--child", default="")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.battles, args.models, args.boot, args.lbfgs_rounds)
        return
    results = {}
    for method in ("humeval", "lbfgs"):
        out = subprocess.run([sys.executable, __file__, "--child", method, "--battles", str(args.battles),
                              "--models", str(args.models), "--boot", str(args.boot),
                              "--lbfgs-rounds", str(args.lbfgs_rounds)], capture_output=True, text=True, check=True)
        results[method] = json.loads(out.stdout.strip().splitlines()[-1])
    h, lb = results["humeval"], results["lbfgs"]
    diff = max(abs(h["ratings"][s] - lb["ratings"][s]) for s in h["ratings"])
    scale = args.boot / max(args.lbfgs_rounds, 1)
    print(f"{args.battles:,} battles, {args.models} models, {args.boot} bootstrap rounds")
    print(f"humeval bradley_terry : {h['wall']:.2f} s wall, {h['cpu']:.2f} s CPU, peak RSS {h['rss_peak_mb']:.0f} MB "
          f"(log and libraries alone {h['rss_log_mb']:.0f} MB)")
    print(f"L-BFGS on raw battles : {lb['wall']:.2f} s wall, {lb['cpu']:.2f} s CPU for the fit + {args.lbfgs_rounds} "
          f"rounds (~{lb['cpu'] * scale:.0f} s CPU scaled to {args.boot} rounds), peak RSS {lb['rss_peak_mb']:.0f} MB "
          f"(log alone {lb['rss_log_mb']:.0f} MB)")
    print(f"largest rating difference of the point estimates: {diff:.2e} Elo points")


if __name__ == "__main__":
    main()
