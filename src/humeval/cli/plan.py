"""``humeval plan``: fit a pilot's difficulty distribution and predict effort per strategy and delta."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import Format, emit_json, emit_rows, err
from humeval.policies.registry import STRATEGIES
from humeval.stopping.registry import RULES

__all__ = ["plan"]


def plan(
    pilot: Path = typer.Argument(..., help="Pilot judgements: humeval's export (results/judgements.jsonl), an AMT batch CSV, or a CSV with request and choice (A/B or 1/0) columns."),
    request_col: str = typer.Option("request", "--request-col", help="Column naming the request (pair)."),
    choice_col: str = typer.Option("choice", "--choice-col", help="Column with the preferred system (A/B or 1/0)."),
    system_a: str = typer.Option("", "--system-a", help="The system counted as A (default: AMT batch: first row's Input.model1; humeval judgements: the first system of the pair, sorted)."),
    criterion: str = typer.Option("", "--criterion", help="humeval judgements only: the 2afc criterion (default: the only one)."),
    capability: tuple[float, float] = typer.Option((0.8, 1.0), "--capability", help="Assumed capability range LOW HIGH."),
    difficulty_var: float | None = typer.Option(None, "--difficulty-var", help="Fix the variance (needed with one judgement per request)."),
    strategy: str = typer.Option("one,max3,majority5", "--strategy", help=f"Comma list of labelling strategies: {STRATEGIES.help_text()} (N odd)."),
    delta: str = typer.Option("0.01,0.001", "--delta", help="Comma list of error probabilities."),
    rule: str = typer.Option("anytime", "--rule", help=f"Stopping rule: {RULES.help_text()}."),
    n_requests: int = typer.Option(5000, "--n-requests", help="Horizon of the predicted study."),
    iterations: int = typer.Option(200, "--iterations", help="Simulated studies per prediction."),
    seed: int = typer.Option(21, "--seed", help="Seed."),
    fmt: Format = typer.Option(Format.table, "--format", help="Output format."),
    plot: Path | None = typer.Option(None, "--plot", help="Write the effort plot here."),
    lists: int = typer.Option(0, "--lists", help="Sessions: the design's participant lists holding the watched pair (0: no session plan; `humeval budget` counts them from the design)."),
    watched: int = typer.Option(10, "--watched", help="Sessions: watched pair tasks per list."),
    minutes_per_list: float = typer.Option(5.0, "--minutes-per-list", help="Sessions: mean minutes a participant needs for a list."),
    arrivals_per_hour: float | None = typer.Option(None, "--arrivals-per-hour", help="Sessions: participants who start per hour while places are open (without it wall time is not predicted)."),
    sessions: int = typer.Option(2, "--sessions", help="Sessions: stopping.sessions (W); W = 1, 2, 3 are shown beside it."),
    crowd: Path | None = typer.Option(None, "--crowd", help="Sessions: a crowd file (CSV or JSONL: arrived, seconds_per_task or session_seconds, completed) or an AMT batch CSV to take arrivals and paces from (docs/budget.md, 'The crowd'); default: a Poisson stream at --arrivals-per-hour."),
    patience: float = typer.Option(0.0, "--patience", help="Sessions: seconds an arrival who finds no open place waits for one (0: turned away)."),
) -> None:
    """Plan a pairwise study from a pilot: fitted difficulty and predicted labelling effort."""
    from humeval.errors import HumevalError
    from humeval.policies.registry import parse_strategies
    from humeval.simulate.plan import (
        fit_pilot,
        predict_effort,
        read_pilot,
    )
    from humeval.simulate.plots import plot_effort

    data = read_pilot(pilot, system_a=system_a, criterion=criterion, request=request_col, choice=choice_col)
    frame, request_col, choice_col = data.frame, "request", "choice"
    err.print(f"{data.source} {pilot.name}: A = {data.system_a}, {len(frame)} judgements"
              + (f" ({data.dropped} rows left out: ties, attention checks, repeats)" if data.dropped else ""))
    try:
        deltas = [float(d) for d in delta.split(",") if d.strip()]
    except ValueError:
        raise HumevalError(f"--delta must be a comma list of numbers in (0, 1), got {delta!r}") from None
    fit = fit_pilot(frame, request=request_col, choice=choice_col, capability=(float(capability[0]), float(capability[1])),
                    difficulty_var=difficulty_var, seed=seed)
    err.print(f"fitted mu = {fit.mu:.4f} (95% CI {fit.mu_ci[0]:.4f}..{fit.mu_ci[1]:.4f}), var = {fit.difficulty_var:.4f}")
    names = [s.name for s in parse_strategies(strategy)]
    results = predict_effort(fit, names, deltas, rule=rule, n_requests=n_requests, iterations=iterations, seed=seed)
    if plot is not None:
        plot_effort(plot, results, title=f"predicted effort, mu={fit.mu:.3f}")
    c_mean = (fit.capability[0] + fit.capability[1]) / 2
    weak_mu = min(fit.mu_ci, key=abs)  # the confidence limit nearer no effect
    tunings = _tunings(fit.share_for_a, (1 + c_mean * weak_mu) / 2, deltas, rule)
    plan_rows = (_sessions(fit, rule, deltas[0], lists, watched, minutes_per_list, arrivals_per_hour, sessions, seed,
                           crowd, patience)
                 if lists > 0 else ([], "", ""))
    if fmt == Format.json:
        emit_json({"fit": fit.to_dict(), "results": [r.to_dict() for r in results],
                   "tuning": [t.to_json() for t in tunings], "sessions": plan_rows[0]})
        return
    rows = [{"strategy": r.strategy, "delta": r.delta, "rule": r.rule, "mean_effort": round(r.mean_effort, 1),
             "ci_low": round(r.ci_low, 1), "ci_high": round(r.ci_high, 1), "decided_share": r.decided_share}
            for r in results]
    emit_rows(rows, fmt, title="predicted labelling effort (99% CI)",
              footer=f"fit: mu={fit.mu:.4f} [{fit.mu_ci[0]:.4f}, {fit.mu_ci[1]:.4f}], var={fit.difficulty_var:.4f}, "
                     f"capability U{fit.capability}, {fit.requests} requests / {fit.judgements} judgements")
    if lists > 0:
        emit_rows(*plan_rows[:1], fmt, title=plan_rows[1], footer=plan_rows[2])
    if tunings:
        emit_rows([{"delta": t.delta, "p": round(t.p, 4), "stopping.tuned_for": t.tuned_for,
                    "prior_strength": round(t.prior_strength, 2), "expected_n": round(t.expected_n, 1),
                    "default_expected_n": round(t.default_expected_n, 1), "saved": f"{t.gain:.1%}",
                    "at weak p": "" if t.weak_p is None else
                    f"{t.weak_p:.3f}: {t.weak_expected_n:.0f} vs {t.weak_default_expected_n:.0f}"}
                   for t in tunings], fmt,
                  title="tuning at the pilot's preference share (one worker per request; exact expected judgements)",
                  footer="declare stopping.tuned_for in the protocol before lock; any value keeps the guarantee. "
                         "'at weak p': tuned vs default expected judgements at the fit's confidence limit nearer no effect")


def _sessions(fit, rule: str, delta: float, lists: int, watched: int, minutes: float, arrivals: float | None,
              own: int, seed: int, crowd_file: Path | None = None, patience: float = 0.0) -> tuple[list[dict], str, str]:
    """The session plan of ``humeval budget`` without a study: places, unused judgements and wall time per W."""
    from humeval.simulate.arrivals import read_crowd
    from humeval.simulate.crowd import simulate_crowd
    from humeval.stopping import get_rule

    r_rule = get_rule(rule, delta)
    crowd = None if crowd_file is None else read_crowd(crowd_file)
    if patience < 0:
        from humeval.errors import DataError

        raise DataError(f"--patience: seconds an arrival waits for a place are a number >= 0, got {patience!r}")
    if patience > 0 and crowd is None and arrivals is None:
        from humeval.errors import DataError

        raise DataError("--patience: a waitlist needs arrivals: pass --arrivals-per-hour or --crowd")
    rows = []
    for w in sorted({min(v, lists) for v in (1, 2, 3, own)}):
        r = simulate_crowd(r_rule, lists=lists, watched=watched, minutes_per_list=minutes, arrivals_per_hour=arrivals,
                           sessions=w, fit=fit, runs=2000, seed=seed, crowd=crowd, patience=patience)
        sm = r.summary()
        rows.append({"W": f"{w}" + (" (chosen)" if w == own else ""), "places": round(sm["places"].mean, 2),
                     "places 5-95%": f"{sm['places'].q05:g}-{sm['places'].q95:g}", "fixed places": lists, "used": round(sm["used"].mean, 1),
                     "unused": round(sm["unused"].mean, 1),
                     "wall hours": "-" if "wall_hours" not in sm else round(sm["wall_hours"].mean, 2),
                     "wall 5-95%": "-" if "wall_hours" not in sm else
                     f"{sm['wall_hours'].q05:.2f}-{sm['wall_hours'].q95:.2f}",
                     "wall / fixed": "-" if "wall_ratio" not in sm else round(sm["wall_ratio"].mean, 2),
                     "decided": round(r.decided_share, 3)})
    return (rows, f"sessions at delta={delta:g} (means over 2000 simulated collections)",
            r.signature() + ("" if arrivals or crowd is not None else
                             "; wall time not predicted: pass --arrivals-per-hour or --crowd"))


def _tunings(share: float, weak: float, deltas: list[float], rule: str) -> list:
    """The recommended ``stopping.tuned_for`` per delta, for the mixture rules (none without an effect)."""
    from humeval.stopping.registry import TUNABLE
    from humeval.stopping.tuning import recommend_tuning

    if rule not in TUNABLE or not 0.0 < share < 1.0 or abs(share - 0.5) < 1e-3:
        return []
    return [recommend_tuning(share, d, weak_p=weak) for d in deltas]
