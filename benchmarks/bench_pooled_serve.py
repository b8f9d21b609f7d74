"""Votes to a live decision: a goal on pooled statements (``stopping.pooling``) against the direct goal.

    python benchmarks/bench_pooled_serve.py --runs 100 --models 5     # HUMEVAL_SHARED_DATA or ../shared/data

The top ``--models`` models of Chatbot Arena's counts, their strengths from Davidson's fit to every vote among them;
decisive votes simulated from those strengths (the store feeds decisive votes only) with unlimited votes per pair,
as a live arena would collect them. Each question is run ``--runs`` times by the code ``serve`` runs: the pooled goal
(:func:`humeval.simulate.multi.simulate_pooled_goal`: epochs of ``--epoch``+ votes, the pair weights set at each
epoch's start) and the direct goal (:func:`humeval.simulate.multi.simulate_goal`: pairwise tests at
delta / (K (K - 1) / 2), the pair choice of ``stopping.pair_choice``), both with adaptive and with uniform pairs.
One Markdown row per question, goal and pairs: the share decided within ``--max-votes``, the mean votes (an
undecided run counts the votes it used: a lower bound of its cost) with a 95 % bootstrap interval, the mean over
decided runs, the share of wrong answers against the strengths, and pooled / direct mean votes. Bounded: the
whole run stops after ``--budget`` seconds (rows not reached are said so).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

DATA = Path(os.environ.get("HUMEVAL_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def main() -> None:
    from humeval.arena.counts import read_arena_counts
    from humeval.simulate.multi import simulate_goal, simulate_pooled_goal

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA / "arena" / "chatbotarena_20240814.json")
    ap.add_argument("--models", type=int, default=5)
    ap.add_argument("--top", type=int, default=2)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--epoch", type=int, default=200)
    ap.add_argument("--max-votes", type=int, default=200_000)
    ap.add_argument("--questions", default="best,top-k")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=float, default=600.0, help="seconds; rows after it are skipped")
    args = ap.parse_args()
    counts = read_arena_counts(args.data).top(args.models)
    theta = counts.fit().theta
    k = len(counts.models)
    print(f"### Top {k} of {args.data.name}: {', '.join(counts.models)}\n")
    print("strengths (Davidson, all votes): " + ", ".join(f"{m} {t:+.3f}" for m, t in zip(counts.models, theta, strict=True)))
    print(f"\ndelta {args.delta:g}, {args.runs} runs per row, seed {args.seed}, horizon {args.max_votes:,} votes, "
          f"epochs of {args.epoch}+ votes\n")
    print("| question | goal | pairs | decided | mean votes (95% CI) | mean votes, decided | wrong | pooled / direct |")
    print("|---|---|---|---|---|---|---|---|")
    start = time.monotonic()
    for q in args.questions.split(","):
        top = args.top if q == "top-k" else None
        label = q if q != "top-k" else f"top-{args.top}"
        for pairs in ("adaptive", "uniform"):
            if time.monotonic() - start > args.budget:
                print(f"| {label} | - | {pairs} | budget of {args.budget:.0f} s spent: not run | | | | |")
                continue
            direct = simulate_goal(k, "fitted", q, pairs, delta=args.delta, top=top, iterations=args.runs,
                                   max_judgements=args.max_votes, seed=args.seed, strengths=theta)
            pooled = simulate_pooled_goal(theta, q, pairs, delta=args.delta, top=top, iterations=args.runs,
                                          max_judgements=args.max_votes, epoch=args.epoch, seed=args.seed)
            for name, r in (("direct", direct), ("pooled", pooled)):
                ratio = f"{pooled.mean_effort / direct.mean_effort:.2f}" if name == "pooled" else ""
                print(f"| {label} | {name} | {pairs} | {r.decided_share:.2f} | {r.mean_effort:,.0f} "
                      f"({r.ci_low:,.0f}-{r.ci_high:,.0f}) | {r.mean_effort_decided:,.0f} | {r.wrong_share:.3f} | {ratio} |")
    print(f"\n{time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
