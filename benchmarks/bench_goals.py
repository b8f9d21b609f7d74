"""Goals over K systems: judgements to a decision and wrong answers, adaptive against uniform pair choice.

    python benchmarks/bench_goals.py --iterations 1000 --delta 0.05

For every K in ``--systems``, profile, goal and policy, :func:`humeval.simulate.multi.simulate_goal`
runs ``--iterations`` simulated studies (Bradley-Terry ground truth, one judgement per
request, horizon ``--max-judgements``) and prints one Markdown row: mean judgements (99%
bootstrap CI), the share decided within the horizon, the share with a wrong answer, the
share in which any pair was ever resolved wrongly, and adaptive/uniform. ``top-k`` uses
``--top``. The same cells come one at a time from ``humeval simulate --systems K --profile P
--goal G --policy adaptive,uniform --delta 0.05 --format json``.
"""

from __future__ import annotations

import argparse

from scipy.stats import binom

from humeval.simulate.multi import PROFILES, simulate_goal


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", default="4,8,16")
    ap.add_argument("--goals", default="best,top-k,ranking,pair")
    ap.add_argument("--profiles", default=",".join(PROFILES))
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--top", type=int, default=2)
    ap.add_argument("--max-judgements", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=21)
    args = ap.parse_args()
    limit = binom.ppf(0.999, args.iterations, args.delta) / args.iterations
    print(f"wrong shares above {limit:.3f} (the 99.9% binomial quantile at delta={args.delta:g}, "
          f"{args.iterations} runs) would contradict the guarantee\n")
    print("| K | goal | profile | policy | judgements (99% CI) | decided | wrong | any pair wrong | adaptive/uniform |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in (int(x) for x in args.systems.split(",")):
        for goal in args.goals.split(","):
            for profile in args.profiles.split(","):
                effort = {}
                for policy in ("adaptive", "uniform"):
                    r = simulate_goal(k, profile, goal, policy, delta=args.delta,
                                      top=args.top if goal == "top-k" else None, iterations=args.iterations,
                                      max_judgements=args.max_judgements, seed=args.seed)
                    effort[policy] = r.mean_effort
                    ratio = f"{effort['adaptive'] / r.mean_effort:.2f}" if policy == "uniform" else ""
                    print(f"| {r.k} | {goal}{'-' + str(r.top) if goal == 'top-k' else ''} | {profile} | {policy} "
                          f"| {r.mean_effort:,.0f} ({r.ci_low:,.0f}-{r.ci_high:,.0f}) | {r.decided_share:.3f} "
                          f"| {r.wrong_share:.3f} | {r.wrong_pair_share:.3f} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
