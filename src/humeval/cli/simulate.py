"""``humeval simulate``: labelling effort of strategies under stopping rules (agent-based model)."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import Format, emit_json, emit_rows, err
from humeval.policies.registry import STRATEGIES
from humeval.stopping.registry import RULES

__all__ = ["simulate"]

# options of one kind of simulation each: given to the other kind they would be ignored, so they are refused
_PAIR_ONLY = ("mu", "difficulty_var", "capability", "workers", "n_requests", "strategy", "rule", "parity",
              "position_bias", "spammers", "adversarial", "processes", "address", "plot")
_GOAL_ONLY = ("profile", "top", "policy", "explore", "max_judgements")


def simulate(
    ctx: typer.Context,
    mu: float = typer.Option(0.25, "--mu", help="Mean request difficulty (A better when > 0; 0 = the null)."),
    difficulty_var: float = typer.Option(0.1, "--difficulty-var", help="Variance of the request difficulty."),
    capability: tuple[float, float] = typer.Option((0.8, 1.0), "--capability", help="Worker capability range LOW HIGH in [0, 1]."),
    workers: int = typer.Option(100, "--workers", help="Size of the worker pool."),
    n_requests: int = typer.Option(3500, "--n-requests", help="Horizon: most requests per iteration."),
    iterations: int = typer.Option(1000, "--iterations", help="Simulated studies per strategy."),
    delta: float = typer.Option(0.001, "--delta", help="Error probability of the stopping rule, in (0, 1)."),
    strategy: str = typer.Option("one,fixed,max3,majority5,majority7", "--strategy", help=f"Comma list: {STRATEGIES.help_text()} (N odd)."),
    rule: str = typer.Option("anytime", "--rule", help=f"Comma list: {RULES.help_text()}."),
    seed: int = typer.Option(21, "--seed", help="Seed of every random draw (printed in the signature)."),
    fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
    parity: bool = typer.Option(False, "--parity", help="The authors' set-up: legacy RandomState(seed) pool and one shared request list."),
    position_bias: float = typer.Option(0.0, "--position-bias", help="Shift towards the system shown first, in [-1, 1]."),
    spammers: float = typer.Option(0.0, "--spammers", help="Share of workers answering at random."),
    adversarial: float = typer.Option(0.0, "--adversarial", help="Share of workers answering against their judgement."),
    prior_strength: float = typer.Option(14.0, "--prior-strength", help="Beta(a, a) prior of the mixture rule (the default rule's: 14)."),
    processes: int = typer.Option(1, "--processes", help="Local processes (results do not depend on it)."),
    address: str = typer.Option("", "--address", help="Dask scheduler address for a cluster (optional)."),
    plot: Path | None = typer.Option(None, "--plot", help="Write the effort plot here and the bound plot (Fig. 1) next to it."),
    systems: int = typer.Option(2, "--systems", help="K systems with Bradley-Terry ground truth (with --goal or K > 2: goal simulation)."),
    profile: str = typer.Option("clear-winner", "--profile", help="Strengths of the K systems: equal, clear-winner, close-leaders, long-tail."),
    goal: str = typer.Option("", "--goal", help="Goal over K systems: pair, best, top-k, ranking (default best when K > 2)."),
    top: int = typer.Option(1, "--top", help="k of goal top-k."),
    policy: str = typer.Option("adaptive,uniform", "--policy", help="Comma list of pair choices: adaptive, uniform."),
    explore: float = typer.Option(0.1, "--explore", help="Exploration floor of the adaptive pair choice, in [0, 1]."),
    max_judgements: int = typer.Option(1_000_000, "--max-judgements", help="Goal simulation: horizon in judgements per run."),
) -> None:
    """Simulate labelling strategies and stopping rules; mean effort with 99% bootstrap CIs.

    With --goal or --systems > 2: K systems with Bradley-Terry strengths (--profile) and a goal
    (pair, best, top-k, ranking) decided by pairwise mixture tests, pairs chosen by --policy.
    Options of one kind of simulation are refused by the other.
    """
    if systems < 2:
        from humeval.errors import ProtocolError

        raise ProtocolError(f"simulate: --systems must be at least 2, got {systems}")
    goal_run = bool(goal) or systems > 2
    _refuse_ignored(ctx, goal_run, goal or "best")
    if goal_run:
        _simulate_goal(systems, profile, goal or "best", top, policy, explore, delta, iterations, max_judgements,
                       seed, prior_strength, fmt)
        return
    from humeval.policies.registry import parse_strategies
    from humeval.simulate.config import SimulationConfig
    from humeval.simulate.run import simulate as run

    config = SimulationConfig(
        mu=mu, difficulty_var=difficulty_var, capability=(float(capability[0]), float(capability[1])),
        workers=workers, n_requests=n_requests, iterations=iterations, delta=delta,
        position_bias=position_bias, spammer_share=spammers, adversarial_share=adversarial,
        parity=parity, prior_strength=prior_strength,
    )
    names = [s.name for s in parse_strategies(strategy)]
    rules = [r.strip() for r in rule.split(",") if r.strip()]
    err.print(f"simulating {len(names)} strategies x {len(rules)} rules x {iterations} iterations ...")
    report = run(config, names, rules, seed, processes, address or None)
    if plot is not None:  # matplotlib and SciPy: imported for a plot only
        from humeval.simulate.plots import plot_bound, plot_effort

        plot_effort(plot, report.results, title=f"mu={mu:g}, delta={delta:g}")
        bound = plot.with_name(f"{plot.stem}_bound{plot.suffix or '.png'}")
        plot_bound(bound, mu=mu, delta=delta, n_requests=n_requests, seed=seed,
                   capability=config.capability, difficulty_var=difficulty_var)
        err.print(f"wrote {plot} and {bound}")
    if fmt == Format.json:
        emit_json(report.to_json())
        return
    rows = [
        {
            "strategy": r.strategy, "rule": r.rule, "mean_effort": round(r.mean_effort, 1),
            "ci_low": round(r.ci_low, 1), "ci_high": round(r.ci_high, 1),
            "decided_share": r.decided_share, "wrong_share": r.wrong_share, "iterations": r.iterations,
            "wald_bound": None if r.wald_bound is None else round(r.wald_bound, 1),
        }
        for r in report.results
    ]
    emit_rows(rows, fmt, title="labelling effort (99% bootstrap CI)", footer=report.signature)


def _refuse_ignored(ctx: typer.Context, goal_run: bool, goal: str) -> None:
    """A :class:`ProtocolError` naming every option given that the chosen simulation would ignore."""
    from humeval.errors import ProtocolError

    def given(name: str) -> bool:  # on the command line or from an environment variable (by name: Typer may vendor click)
        source = ctx.get_parameter_source(name)
        return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")

    def flags(names: list[str]) -> str:
        return ", ".join("--" + n.replace("_", "-") for n in names)

    def apply(names: list[str]) -> str:
        return "applies" if len(names) == 1 else "apply"

    if goal_run:
        bad = [n for n in _PAIR_ONLY if given(n)]
        if bad:
            raise ProtocolError(
                f"simulate: {flags(bad)} {apply(bad)} to the two-system simulation (--systems 2 without --goal) and would be "
                f"ignored by the goal simulation over {ctx.params['systems']} systems (goal {goal}); its options are "
                f"{flags(list(_GOAL_ONLY))}, --iterations, --delta, --prior-strength, --seed"
            )
        if given("top") and goal != "top-k":
            raise ProtocolError(f"simulate: --top applies to --goal top-k only, and the goal is {goal}")
        return
    bad = [n for n in _GOAL_ONLY if given(n)]
    if bad:
        raise ProtocolError(
            f"simulate: {flags(bad)} {apply(bad)} to the goal simulation (--goal, or --systems above 2) and would be ignored "
            "by the two-system simulation; add --goal pair|best|top-k|ranking or --systems K"
        )


def _simulate_goal(k: int, profile: str, goal: str, top: int, policy: str, explore: float, delta: float,
                   iterations: int, max_judgements: int, seed: int, prior_strength: float, fmt: Format) -> None:
    from humeval.simulate.multi import simulate_goal

    policies = list(dict.fromkeys(p.strip() for p in policy.split(",") if p.strip()))
    err.print(f"simulating goal {goal} over {k} systems ({profile}) x {len(policies)} policies x {iterations} runs ...")
    results = [simulate_goal(k, profile, goal, p, delta=delta, top=top if goal == "top-k" else None,
                             iterations=iterations, max_judgements=max_judgements, seed=seed, explore=explore,
                             prior_strength=prior_strength) for p in policies]
    if fmt == Format.json:
        emit_json({"results": [r.to_dict() for r in results], "seed": seed,
                   "signature": results[0].signature if results else ""})
        return
    rows = [
        {
            "policy": r.policy, "goal": r.goal, "profile": r.profile, "K": r.k, "mean_effort": round(r.mean_effort, 1),
            "ci_low": round(r.ci_low, 1), "ci_high": round(r.ci_high, 1), "decided_share": r.decided_share,
            "wrong_share": r.wrong_share, "wrong_pair_share": r.wrong_pair_share, "iterations": r.iterations,
        }
        for r in results
    ]
    emit_rows(rows, fmt, title="judgements to a decision (99% bootstrap CI)",
              footer=" ; ".join(r.signature for r in results))
