"""Replay of Chatbot Arena's votes: votes until each question is answered, adaptive against uniform pairs.

    python benchmarks/bench_arena.py --replays 200 --models 20      # HUMEVAL_SHARED_DATA or ../shared/data

For the real counts and for the same counts made intransitive on purpose (the first and third model's wins
swapped), each question (the best model, the top k as a set, the full ranking as rank sets) is replayed
``--replays`` times under adaptive and uniform pairs (:func:`humeval.arena.arena_replay`, the API of
``humeval arena replay``). One Markdown row per question and policy: the share of replays that announced, the
share announced by the direct statements alone (the goals of docs/stopping.md), the median votes until the
announcement against the votes the data hold, the mean votes over every replay (an
undecided one counts the votes it used: a lower bound of its cost), wrong announcements against Davidson's fit to
every vote with the 95% Clopper-Pearson upper bound (and against each pair's own majority), the share where the fit
check withdrew pooling, the mean rank-set width at the end, and adaptive / uniform mean votes. Beneath: the fixed-n
bootstrap of all votes (what the leaderboard's intervals say, valid at one look only).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from humeval.arena import arena_ppi, arena_replay, bootstrap_ranks, summarise

DATA = Path(os.environ.get("HUMEVAL_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA / "arena" / "chatbotarena_20240814.json")
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--replays", type=int, default=200)
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--questions", default="best,top-k,ranking")
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--part", choices=("all", "counts", "llmfao"), default="all",
                    help="counts: Chatbot Arena's replay; llmfao: the crowd votes with the GPT-4 and GPT-3.5 judges")
    ap.add_argument("--llmfao-splits", type=int, default=1000)
    ap.add_argument("--llmfao-replays", type=int, default=50)
    ap.add_argument("--labelled-share", type=float, default=0.5)
    args = ap.parse_args()
    start = time.perf_counter()
    if args.part in ("all", "llmfao"):
        llmfao(args)
    if args.part == "llmfao":
        print(f"\n{time.perf_counter() - start:.0f} s", file=sys.stderr)
        return
    for intransitive in (False, True):
        last = [0.0]

        def progress(label: str, votes: int, total: int, last: list[float] = last) -> None:
            now = time.perf_counter()
            if now - last[0] > 5:
                last[0] = now
                print(f"  {label}: {votes:,} of {total:,} votes ({now - start:.0f} s)", file=sys.stderr, flush=True)

        counts, results = arena_replay(args.data, models=args.models, questions=args.questions, top=args.top,
                                       replays=args.replays, delta=args.delta, seed=args.seed,
                                       intransitive=intransitive, progress=progress)
        what = "made intransitive (1st and 3rd model's wins swapped)" if intransitive else "as published"
        print(f"\n### {len(counts.models)} models, {counts.votes:,} votes, {what}; delta {args.delta:g}, "
              f"{args.replays} replays\n")
        print("| question | policy | announced | direct only | median votes (share of data) | mean votes, all replays "
              "| wrong (95% upper) | wrong vs pair majority | fit withdrawn | rank-set width | adaptive / uniform |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        rows = [summarise(r) for r in results]
        mean_of = {(r.question, r.policy): r.votes_mean_all for r in rows}
        for r in rows:
            med = "-" if r.votes_median is None else f"{r.votes_median:,} ({r.share_of_data:.2f})"
            ratio = ""
            if r.policy == "adaptive" and (r.question, "uniform") in mean_of:
                ratio = f"{r.votes_mean_all / mean_of[(r.question, 'uniform')]:.2f}"
            print(f"| {r.question} | {r.policy} | {r.decided:.3f} | {r.direct_only_decided:.3f} | {med} | {r.votes_mean_all:,} | {r.wrong} "
                  f"({r.wrong_upper95:.3f}) | {r.wrong_vs_pair_majority} | {r.misfit:.3f} | {r.rank_width:.2f} | "
                  f"{ratio} |")
        if args.bootstrap:
            boot = bootstrap_ranks(counts, top=min(args.top, len(counts.models) - 1), n_boot=args.bootstrap,
                                   seed=args.seed)
            sets = ", ".join(f"{m} {lo}" if lo == hi else f"{m} {lo}-{hi}"
                             for m, lo, hi in zip(boot.models, boot.rank_low, boot.rank_high, strict=True))
            print(f"\nfixed-n bootstrap of all votes ({boot.n_boot} rounds, one look): the best kept in "
                  f"{boot.best_share:.0%} of rounds, the top set in {boot.top_share:.0%}; rank sets: {sets}")
    print(f"\n{time.perf_counter() - start:.0f} s", file=sys.stderr)


def llmfao(args: argparse.Namespace) -> None:
    """LLMFAO's crowd votes with GPT-4's and GPT-3.5's verdicts on the same comparisons (prediction-powered)."""
    d = DATA / "arena"
    rows = arena_ppi(d / "llmfao-crowd-comparisons.csv",
                     [d / "llmfao-gpt4-crowd-comparisons.csv", d / "llmfao-gpt3-crowd-comparisons.csv"],
                     share=args.labelled_share, splits=args.llmfao_splits, replays=args.llmfao_replays,
                     delta=args.delta, seed=args.seed)
    print(f"\n### LLMFAO: 8,931 crowd votes, 59 models; {args.labelled_share:g} of the votes labelled; "
          f"{args.llmfao_splits} splits, {args.llmfao_replays} watched replays, delta {args.delta:g}\n")
    print("| judge | agreement (decisive) | residual correlation | between-comparison share | lambda "
          "| coverage PPI (95% over splits) | per model, least-most | coverage human-only | fixed-n votes saved | statements | human votes, "
          "judge | human votes, no judge | judge / no judge | resolved, judge / no judge | wrong, judge / no judge |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.judge} | {r.decisive_agreement:.3f} | {r.residual_correlation:.3f} | {r.between_share:.3f} | "
              f"{r.lam:.3f} | {r.coverage:.3f} ({r.coverage_low:.3f}-{r.coverage_high:.3f}) | "
              f"{r.coverage_model_min:.3f}-{r.coverage_model_max:.3f} | "
              f"{r.coverage_human:.3f} | {r.fixed_n_saving:.1%} | {r.statements_m} | {r.votes_judge:,.0f} | "
              f"{r.votes_human:,.0f} | {r.votes_ratio:.3f} | {r.resolved_judge:.0f} / {r.resolved_human:.0f} | "
              f"{r.wrong_judge} / {r.wrong_human} |")


if __name__ == "__main__":
    main()
