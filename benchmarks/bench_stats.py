"""Benchmark: humeval.stats on realistic and large inputs (2 cores).

Run: ``python benchmarks/bench_stats.py [--items N] [--raters R] [--boot B]``. Prints one
line per case: wall time (best of ``--repeat``) and, where the ``krippendorff`` package is
installed (a GPL test oracle, never imported by humeval itself), its time on a subset
small enough for it (it allocates units x V x V floats for V distinct values) and the
absolute difference of the two alphas. Data generation is not timed.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("MKL_NUM_THREADS", "2")

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import humeval.stats as hs


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def ratings(items: int, raters: int, seed: int = 0, missing: float = 0.2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = np.exp(
        rng.normal(4.5, 0.3, size=items) + rng.normal(0, 0.2, size=(raters, items))
    )  # ME-like, continuous
    data[rng.random(data.shape) < missing] = np.nan
    return data


def battles(n: int, k: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    skill = rng.normal(size=k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p = 1 / (1 + np.exp(-(skill[a] - skill[b])))
    u = rng.random(n)
    winner = np.where(u < 0.1, "tie", np.where(u < 0.1 + 0.9 * p, "model_a", "model_b"))
    names = np.array([f"m{i}" for i in range(k)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})


def trueskill_package_loop(log: pd.DataFrame, n_boot: int, seed: int) -> np.ndarray:
    """The former ``trueskill_ranking`` core: one ``trueskill.rate_1vs1`` call per battle and sample, the same random
    stream (a permutation, then each sample's indices). Returns the mus, full data first then each sample."""
    import trueskill

    systems = sorted(set(log["model_a"]) | set(log["model_b"]))
    code = {s: i for i, s in enumerate(systems)}
    a, b = log["model_a"].map(code).to_numpy(), log["model_b"].map(code).to_numpy()
    outcome = np.where(log["winner"] == "model_a", 1.0, np.where(log["winner"] == "model_b", 0.0, 0.5))
    sigma, ties = 25 / 3, float((outcome == 0.5).mean())
    env = trueskill.TrueSkill(mu=25.0, sigma=sigma, beta=sigma / 2, tau=sigma / 100,
                              draw_probability=min(max(ties, 0.01), 0.99), backend=None)
    rng = np.random.default_rng(seed)
    out = []
    for rep in range(n_boot + 1):
        idx = rng.permutation(a.size) if rep == 0 else rng.integers(0, a.size, a.size)
        ratings = [env.create_rating() for _ in systems]
        for t in idx:
            i, j = (b[t], a[t]) if outcome[t] == 0.0 else (a[t], b[t])
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], drawn=bool(outcome[t] == 0.5),
                                                         env=env)
        out.append([r.mu for r in ratings])
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trueskill-loop-boot", type=int, default=100,
                        help="largest n_boot timed with the former package loop (about 80 ms per sample of 1,000 "
                             "battles)")
    args = parser.parse_args()
    try:
        import krippendorff  # GPL oracle, optional
    except ImportError:  # pragma: no cover - optional comparison
        krippendorff = None

    data = ratings(args.items, args.raters)
    values = int((~np.isnan(data)).sum())
    print(
        f"# {args.raters} participants x {args.items} items, {values} continuous values (20% missing)"
    )
    for level in ("interval", "ordinal", "ratio", "nominal"):
        d = np.round(data / 20) if level == "nominal" else data
        t, res = best(
            lambda d=d, level=level: hs.krippendorff_alpha(d, level, n_boot=0), args.repeat
        )
        line = f"krippendorff_alpha[{level}] point: {t * 1000:8.1f} ms  alpha={res.estimate:.6f}"
        # the package builds a (units x V x V) array: keep it small for distinct continuous values
        m = 2000 if level == "nominal" else 100
        small = d[:, :m]
        if krippendorff is not None and level != "ratio":
            t_small, ours = best(
                lambda s=small, level=level: hs.krippendorff_alpha(s, level, n_boot=0), 1
            )
            t_ref, ref = best(
                lambda s=small, level=level: krippendorff.alpha(
                    reliability_data=s, level_of_measurement=level
                ),
                1,
            )
            line += (
                f" | {m} items: ours {t_small * 1000:.1f} ms, krippendorff pkg {t_ref * 1000:.1f} ms, "
                f"|diff| {abs(ours.estimate - ref):.1e}"
            )
        print(line)
    for level in ("interval", "nominal", "ratio", "ordinal"):
        # ratio's bootstrap is O(n_boot V^2): run it on integer ME scores, as collected (V ~ 200)
        d = (
            np.round(data / 20)
            if level == "nominal"
            else np.round(data)
            if level == "ratio"
            else data
        )
        n_boot = args.boot if level != "ordinal" else max(50, args.boot // 10)
        t, res = best(
            lambda d=d, level=level, b=n_boot: hs.krippendorff_alpha(d, level, n_boot=b, seed=0), 1
        )
        distinct = np.unique(d[~np.isnan(d)]).size
        print(
            f"krippendorff_alpha[{level}] + {n_boot} bootstrap ({distinct} distinct values): {t:6.2f} s  "
            f"CI=({res.ci_low:.4f}, {res.ci_high:.4f})"
        )

    x = np.nan_to_num(data.T, nan=100.0)
    for form in ("1,k", "2,1"):
        t, res = best(lambda form=form: hs.icc(x, form), args.repeat)
        print(f"icc({form}) {x.shape[0]} x {x.shape[1]}: {t * 1000:.1f} ms  {res.estimate:.4f}")
    counts = np.stack(
        [
            np.random.default_rng(1).multinomial(args.raters, [0.5, 0.3, 0.2])
            for _ in range(args.items)
        ]
    )
    t, res = best(lambda: hs.fleiss_kappa(counts, n_boot=args.boot, seed=0), 1)
    print(f"fleiss_kappa {args.items} items + {args.boot} bootstrap: {t * 1000:.1f} ms")

    scores = pd.DataFrame(
        np.random.default_rng(2).normal(size=(args.items, 10)), columns=[f"s{i}" for i in range(10)]
    )
    t, _ = best(lambda: hs.rank_by_scores(scores, n_boot=args.boot, seed=0), 1)
    print(
        f"rank_by_scores 10 systems x {args.items} items, {args.boot} paired-bootstrap samples: {t:.2f} s"
    )
    t, _ = best(
        lambda: hs.paired_bootstrap(scores["s0"], scores["s1"], n_boot=args.boot, seed=0),
        args.repeat,
    )
    print(f"paired_bootstrap {args.items} items, {args.boot} samples: {t * 1000:.1f} ms")

    log = battles(50_000, 20)
    t, res = best(lambda: hs.bradley_terry(log, n_boot=args.boot, seed=0), 1)
    print(
        f"bradley_terry 50k battles, 20 systems, {args.boot} bootstrap: {t:.2f} s  top={res.systems[0]}"
    )
    t, _ = best(lambda: hs.elo(log, n_boot=100, seed=0), 1)
    print(f"elo 50k battles, 100 bootstrap orders (vectorised over samples): {t:.2f} s")
    three = battles(1000, 3, seed=1)
    for n_boot in (100, 1000):
        t, res = best(lambda n_boot=n_boot: hs.trueskill_ranking(three, n_boot=n_boot, seed=0), args.repeat)
        line = f"trueskill 1,000 battles, 3 systems, {n_boot} bootstrap samples: vectorised {t:.3f} s"
        if n_boot <= args.trueskill_loop_boot:
            t_loop, mus = best(lambda n_boot=n_boot: trueskill_package_loop(three, n_boot, 0), 1)
            diff = max(abs(e.estimate - mus[0][int(name[1:])]) for name, e in zip(res.systems, res.scores, strict=True))
            line += f", package loop {t_loop:.2f} s ({t_loop / t:.0f}x), max |mu diff| {diff:.1e}"
        print(line)


if __name__ == "__main__":
    main()
