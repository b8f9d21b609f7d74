"""``humeval budget``: what the study will cost before launch (judgements, time, reward, fee, total)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from humeval.cli._common import Format, emit_json, emit_rows, out
from humeval.policies.registry import STRATEGIES

__all__ = ["budget"]


def budget(
    directory: Path = typer.Argument(Path("."), help="Study folder (after `humeval design`)."),
    pilot: Path | None = typer.Option(None, "--pilot", help="Dynamic stopping: pilot judgements (humeval's export, an AMT batch or a request/choice CSV); default results/judgements.jsonl, then the rehearsal's. Judges: the pilot's human judgements (humeval's export; default results/judgements.jsonl)."),
    strategy: str = typer.Option("", "--strategy", help=f"Dynamic stopping: comma list of labelling strategies ({STRATEGIES.help_text()}; default: the protocol's, one, max3, majority5)."),
    delta: str = typer.Option("", "--delta", help="Dynamic stopping: comma list of error probabilities (default: the protocol's)."),
    iterations: int = typer.Option(200, "--iterations", help="Dynamic stopping: simulated studies per prediction."),
    system_a: str = typer.Option("", "--system-a", help="Dynamic stopping: the system counted as A in the pilot."),
    crowd_runs: int = typer.Option(2000, "--crowd-runs", help="Dynamic stopping with sessions: simulated collections per setting."),
    precision: float | None = typer.Option(None, "--precision", help="Judges: the half-width of a system mean's 95% interval to reach (default: what the design's items give with humans alone)."),
    difficulty_var: float | None = typer.Option(None, "--difficulty-var", help="Dynamic stopping: the variance of the "
                                                "items' difficulty (default: fitted from items the pilot judged more "
                                                "than once; 0, items of equal difficulty, when it judged each once)."),
    crowd: Path | None = typer.Option(None, "--crowd", help="Dynamic stopping with sessions: the crowd to plan with, a CSV or JSONL with a row per participant (arrived, seconds_per_task or session_seconds, completed) or an AMT batch-results CSV (default: with crowd.arrivals_per_hour, a bursty crowd fitted to AMT batches; docs/budget.md)."),
    patience: float | None = typer.Option(None, "--patience", help="Dynamic stopping with sessions: seconds an arrival who finds no open place waits for one (default: the protocol's stopping.waitlist_seconds, 600 unless set, as the store does; 0: turned away)."),
    pausers: float | None = typer.Option(None, "--pausers", help="Dynamic stopping with sessions: the share of participants (who do not quit) that pause once past the lease: settled, paid, their answered outcomes fed, the list given on (default 0; besides those a --crowd file's task times show)."),
    fmt: Format = typer.Option(Format.table, "--format", help="table | json | csv"),
) -> None:
    """Budget a study before launch: places, judgements, minutes, reward, hourly pay vs the minimum, fee, total;
    with judges in the analysis plan, the human labels each saves at the study's precision (from a pilot)."""
    from humeval.costs import budget as compute
    from humeval.errors import HumevalError

    try:
        deltas = [float(d) for d in delta.split(",") if d.strip()] or None
    except ValueError:
        raise HumevalError(f"--delta must be a comma list of numbers in (0, 1), got {delta!r}") from None
    strategies = [s.strip() for s in strategy.split(",") if s.strip()] or None
    result = compute(directory, pilot=pilot, strategies=strategies, deltas=deltas, iterations=iterations, system_a=system_a,
                     crowd_runs=crowd_runs, precision=precision, difficulty_var=difficulty_var, crowd=crowd,
                     patience=patience, pausers=pausers)
    if fmt == Format.json:
        emit_json(result.to_json())
        return
    c = result.currency
    rows = result.rows()
    emit_rows(rows, fmt, title=f"budget: {result.study}")
    if result.effort:
        effort = [{"strategy": e.strategy, "delta": e.delta, "rule": e.rule, "judgements": e.judgements,
                   "99% CI": f"{e.judgements_low:g}..{e.judgements_high:g}", "decided": e.decided_share,
                   "places": e.places, f"total ({c})": f"{e.total:.2f}", f"total CI ({c})": f"{e.total_low:.2f}..{e.total_high:.2f}"}
                  for e in result.effort]
        emit_rows(effort, fmt, title="dynamic stopping: predicted judgements until the decision (99% CI of the mean)")
    if result.sessions:
        emit_rows(result.session_rows(), fmt,
                  title="sessions: places, money and wall time with the same crowd (mean [95% CI of the mean] and the 5-95% range of one collection, over simulated runs)",
                  footer=next((p.signature for p in result.sessions if p.protocol), result.sessions[-1].signature))
    if result.judges:
        emit_rows([j.row() for j in result.judges], fmt,
                  title="judges: human labels for the same precision without and with the judge (from the pilot's rho)")
    if result.judge_runs:
        emit_rows(judge_cost_rows(result.judge_runs), fmt,
                  title="LLM judges: predicted before the run (requests not yet cached; input tokens ~ characters / 4, output tokens at most max_tokens each) and the last run (logbook)")
    for note in result.notes:
        out.print(f"note: {note}", highlight=False)


def judge_cost_rows(judges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per judge: what its run would ask and cost now, what its last run asked and cost (marked estimated when
    some usage was missing or invalid), and every request sent so far (the ledger) with what it cost at most."""
    rows = []
    for j in judges:
        last = j.get("last_run") or {}
        spent = j.get("spent") or {}
        c = j["currency"]

        rows.append({"judge": j["judge"], "model": j["model"], "requests to send": j["requests"], "cached": j["cached"],
                     "input tokens (est.)": j["tokens_in"], "output tokens (max)": j["tokens_out_max"],
                     "cost at most": f"{j['cost_max']:.4f} {c}",
                     "last run: requests": last.get("requests", "-"),
                     "last run: cost": f"{last['cost']:.4f} {c}{_estimated(last, 'cost_estimated')}" if last else "-",
                     "its answers: tokens in/out": f"{last['tokens_in_all']}/{last['tokens_out_all']}" if last else "-",
                     "its answers: cost": f"{last['cost_all']:.4f} {c}{_estimated(last, 'cost_all_estimated')}" if last else "-",
                     "sent so far": spent.get("requests_sent", 0),
                     "spent so far, at most": f"{spent.get('cost_max', 0.0):.4f} {c}"})
    return rows


def _estimated(summary: dict[str, Any], flag: str) -> str:
    """`` (estimated)`` when a judge's run summary says its cost rests on usage estimated from the text."""
    return " (estimated)" if summary.get(flag) else ""
