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
    ap.add_argument("--part", choices=("all", "counts", "llmfao", "oracle"), default="all",
                    help="counts: Chatbot Arena's replay; llmfao: the crowd votes with the GPT-4 and GPT-3.5 judges; "
                         "oracle: votes simulated from the all-votes fit, the earlier and the focal weights, the "
                         "weights at the true strengths, a lower bound, and what the replay's data allow")
    ap.add_argument("--sim-runs", type=int, default=50)
    ap.add_argument("--no-focal", action="store_true", help="counts: the earlier adaptive weights (every needed "
                    "statement) instead of the focal statements")
    ap.add_argument("--llmfao-splits", type=int, default=1000)
    ap.add_argument("--llmfao-replays", type=int, default=50)
    ap.add_argument("--labelled-share", type=float, default=0.5)
    args = ap.parse_args()
    start = time.perf_counter()
    if args.part in ("all", "llmfao"):
        llmfao(args)
    if args.part in ("all", "oracle"):
        oracle(args)
    if args.part in ("llmfao", "oracle"):
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
                                       intransitive=intransitive, progress=progress, focal=not args.no_focal)
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


def oracle(args: argparse.Namespace) -> None:
    """Votes simulated from Davidson's fit to all the counts of the kept models (unlimited votes per pair): uniform,
    the earlier adaptive weights, the focal weights, the focal weights at the true strengths, a lower bound on any
    policy's votes for ``best``, and the share of replays the counts' own votes could decide at most."""
    import numpy as np

    from humeval.arena.counts import read_arena_counts
    from humeval.arena.replay import davidson_probs, duel_lower_bound, duel_times, simulate_statements
    from humeval.stopping.pooled import statement_delta

    counts = read_arena_counts(args.data).top(args.models)
    fit = counts.fit()
    th, nu, k = fit.theta, float(fit.nu), len(counts.models)
    probs = davidson_probs(th, nu)
    top = min(args.top, k - 1)
    print(f"\n### Oracle: votes simulated from the all-votes Davidson fit of the top {k} models (unlimited votes per "
          f"pair); delta {args.delta:g}, {args.sim_runs} runs\n")
    print("| question | pairs | decided | mean votes | / uniform |")
    print("|---|---|---|---|---|")
    for goal in ("best", "top-k"):
        base = None
        for name, pol, orc, foc in (("uniform", "uniform", None, True), ("adaptive, earlier weights", "adaptive", None, False),
                                    ("adaptive, focal statements", "adaptive", None, True),
                                    ("adaptive, focal, true strengths", "adaptive", th, True)):
            st, _ = simulate_statements(probs, goal, top=top, policy=pol, runs=args.sim_runs, delta=args.delta,
                                        max_votes=400_000 if goal == "best" else 1_000_000, seed=args.seed + 2,
                                        first_batch=1000, oracle_theta=orc, focal=foc)
            v = np.where(st.decided_at >= 0, st.decided_at, st.votes).mean()
            base = v if base is None else base
            q = goal if goal == "best" else f"top-{top}"
            print(f"| {q} | {name} | {st.decided.mean():.2f} | {v:,.0f} | {v / base:.2f} |")
    order = np.argsort(-th)
    b, r = int(order[0]), int(order[1])
    level = statement_delta(args.delta, k - 1)
    duels, bound = duel_lower_bound(th, nu, b, r, level, runs=1000, seed=args.seed)
    print(f"\nbest: any pair policy needs at least {bound:,.0f} votes on average ({duels:,.0f} duels of "
          f"{counts.models[b]} and {counts.models[r]} at level {level:.3g}, at most max(P(decisive), 1/2) duels "
          "per vote): the bound's ratio to uniform is below 0.5, so 0.5x is a question of the weights when votes "
          "are unlimited")
    # what the replay's counts hold for that statement: direct decisive votes plus, through every opponent m, the
    # expected discordant pairs of min(decisive (b, m), decisive (r, m)) matched votes
    wins, _ = counts.matrices()
    dec = wins + wins.T
    held = float(dec[b, r])
    for m in range(k):
        if m in (b, r) or dec[b, m] == 0 or dec[r, m] == 0:
            continue
        q1, q2 = wins[b, m] / dec[b, m], wins[r, m] / dec[r, m]
        held += min(dec[b, m], dec[r, m]) * (q1 * (1 - q2) + (1 - q1) * q2)
    p = float(1 / (1 + np.exp(-(th[b] - th[r]))))
    share = float((duel_times(p, level, runs=1000, seed=args.seed) <= held).mean())
    print(f"replay: the counts hold about {held:,.0f} duels of that pair ({int(dec[b, r])} of them direct decisive "
          f"votes), enough for the statement in {share:.0%} of duel orders: no pair policy can "
          "announce the best model in more replays, and one that spends the pair's votes first runs out of them")


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
