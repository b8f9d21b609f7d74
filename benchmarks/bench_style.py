"""What style control changes on LLMFAO's crowd votes: plain Bradley-Terry against the style-controlled fit.

    python benchmarks/bench_style.py --boot 200 --seed 0        # HUMEVAL_SHARED_DATA or ../shared/data

Both fits are :func:`humeval.stats.style_control` on the same decisive crowd votes (ties left out): the plain one
without covariates (Bradley-Terry), the other with the four style covariates of :func:`humeval.stats.style_covariates`
(length in characters, Markdown headers, list items, bold spans; normalised differences, standardised). Printed: the
style coefficients with their bootstrap intervals, how far the ranks move (mean and largest absolute change of the
point rank, Kendall's tau between the two orders), the rank ranges that change, and the top 10 side by side.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from humeval.arena.llmfao import read_llmfao_battles
from humeval.stats import kendall, style_control, style_covariates

DATA = Path(os.environ.get("HUMEVAL_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boot", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--votes", default="llmfao-crowd-comparisons.csv",
                        help="the vote file (llmfao-gpt4-crowd-comparisons.csv: GPT-4's verdicts on the same pairs)")
    args = parser.parse_args()
    start = time.perf_counter()
    battles = read_llmfao_battles(DATA / "arena", votes=args.votes)
    z = style_covariates(battles["text_a"].tolist(), battles["text_b"].tolist())
    styled = style_control(battles, z, n_boot=args.boot, seed=args.seed)
    plain = style_control(battles, z.iloc[:, :0], n_boot=args.boot, seed=args.seed)
    print(f"#### LLMFAO {args.votes}: {len(battles):,} votes, {styled.n:,} decisive, "
          f"{len(styled.ranking.systems)} models; {args.boot} bootstrap resamples, seed {args.seed}\n")
    print("| covariate | coefficient (log-odds per sd) | 95% interval |\n|---|---|---|")
    for name, c in styled.coefficients.items():
        print(f"| {name} | {c.estimate:+.3f} | [{c.ci_low:+.3f}, {c.ci_high:+.3f}] |")
    p_rank = {s: i + 1 for i, s in enumerate(plain.ranking.systems)}
    s_rank = {s: i + 1 for i, s in enumerate(styled.ranking.systems)}
    names = list(plain.ranking.systems)
    move = np.array([s_rank[s] - p_rank[s] for s in names])
    tau = kendall(np.array([p_rank[s] for s in names], float), np.array([s_rank[s] for s in names], float))
    ranges = sum(plain.ranking.rank_range(s) != styled.ranking.rank_range(s) for s in names)
    top_p, top_s = set(names[:10]), set(styled.ranking.systems[:10])
    print(f"\nrank change: mean |change| {np.abs(move).mean():.2f}, largest {np.abs(move).max()} "
          f"({names[int(np.argmax(np.abs(move)))]}), {int((move != 0).sum())} of {len(names)} models move; "
          f"Kendall tau {tau.estimate:.3f}; rank ranges changed for {ranges}; top 10 sets share {len(top_p & top_s)}")
    print("\n| style-controlled rank | model | plain rank | plain rating [95%] | style-controlled rating [95%] |")
    print("|---|---|---|---|---|")
    for i, s in enumerate(styled.ranking.systems[:10]):
        a, b = plain.ranking.score(s), styled.ranking.score(s)
        print(f"| {i + 1} | {s} | {p_rank[s]} | {a.estimate:.0f} [{a.ci_low:.0f}, {a.ci_high:.0f}] "
              f"| {b.estimate:.0f} [{b.ci_low:.0f}, {b.ci_high:.0f}] |")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
