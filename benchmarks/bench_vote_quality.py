"""The per-participant sequential outlier test on a simulated crowd with planted bad voters, and on LLMFAO's workers.

    python benchmarks/bench_vote_quality.py --crowds 20 --seed 0     # HUMEVAL_SHARED_DATA or ../shared/data

Each simulated crowd: 8 models with Bradley-Terry strengths evenly spaced in [-1.2, 1.2], 60 honest voters and 5 of
each bad kind (Min et al. 2025): ``random`` (a coin flip), ``always-a`` (the output shown first), ``rigger`` (votes
for the weak model m6 whenever it is shown, and meets it in half of its battles; honest otherwise). Pairs are
drawn uniformly, sides at random; every voter casts ``votes`` votes. :func:`humeval.stats.vote_outliers` at
alpha 0.05 (each participant at alpha / 75). Printed per number of votes per voter: the share of each bad kind
flagged, the share of honest voters flagged, the share of crowds with any honest voter flagged (the family-wise
error the level bounds by alpha), and the median vote at which a flagged voter was flagged. Then LLMFAO's crowd
workers (votes in the file's order): how many are flagged and by which direction.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from humeval.simulate.voters import VOTER_KINDS as KINDS
from humeval.simulate.voters import planted_crowd as crowd
from humeval.stats import vote_outliers

DATA = Path(os.environ.get("HUMEVAL_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crowds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"#### Simulated crowds: 60 honest voters, 5 of each bad kind, 8 models; {args.crowds} crowds per row, "
          f"seed {args.seed}, alpha {args.alpha}\n")
    print("| votes per voter | random flagged | always-a flagged | rigger flagged | honest flagged | crowds with an "
          "honest flag | median vote of the flag |")
    print("|---|---|---|---|---|---|---|")
    for votes in (20, 40, 100, 200):
        rng = np.random.default_rng([args.seed, votes])
        hits = {k: [] for k in KINDS}
        any_honest, when = [], []
        for _ in range(args.crowds):
            who, a, b, won, kind = crowd(rng, votes)
            r = vote_outliers(who, a, b, won, alpha=args.alpha)
            kind_of = dict(zip(who, kind, strict=True))
            for p, f, t in zip(r.participants, r.flagged, r.flagged_at, strict=True):
                hits[KINDS[kind_of[p]]].append(bool(f))
                if f:
                    when.append(int(t))
            any_honest.append(any(f for p, f in zip(r.participants, r.flagged, strict=True) if kind_of[p] == 0))
        print(f"| {votes} | {np.mean(hits['random']):.2f} | {np.mean(hits['always-a']):.2f} | "
              f"{np.mean(hits['rigger']):.2f} | {np.mean(hits['honest']):.4f} ({sum(hits['honest'])} of "
              f"{len(hits['honest'])}) | {np.mean(any_honest):.2f} | {np.median(when) if when else '-'} |")
    from humeval.arena.llmfao import read_llmfao_battles

    battles = read_llmfao_battles(DATA / "arena")
    won = np.where(battles["winner"] == "model_a", 1.0, np.where(battles["winner"] == "model_b", 0.0, np.nan))
    r = vote_outliers(battles["judge"], battles["model_a"], battles["model_b"], won, alpha=args.alpha)
    flagged = r.flagged_participants()
    dirs = {}
    for f, d in zip(r.flagged, r.direction, strict=True):
        if f:
            dirs[d.split(":")[0]] = dirs.get(d.split(":")[0], 0) + 1
    votes_flagged = int(r.votes[r.flagged].sum())
    print(f"\nLLMFAO crowd: {len(r.participants)} workers, {r.extra['decisive_votes']:,} decisive votes; flagged "
          f"{len(flagged)} workers ({votes_flagged:,} decisive votes), by direction {dirs}; median decisive votes per "
          f"worker {int(np.median(r.votes))}")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
