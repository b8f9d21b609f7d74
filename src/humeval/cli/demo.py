"""``humeval demo``: an example study run end to end through the real server by a simulated crowd."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from humeval.cli._common import Format, emit_json, emit_rows, err


def demo(
    directory: Path = typer.Argument(Path("example-study"), help="Folder to create the demo study in (must not hold a study)."),
    items: int = typer.Option(48, "--items", "-n", min=4, help="Items of the generated data set."),
    seed: int = typer.Option(1, "--seed", min=0, help="Seed of the data, the study and the simulated crowd."),
    concurrency: int = typer.Option(1, "--concurrency", "-c", min=1, max=256,
                                    help="Participants at work at once (1: the same numbers on every run)."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table | json (the summary as one object)"),
) -> None:
    """Create an example study (three systems; a pairwise comparison with dynamic stopping; RankME on two criteria),
    lock it, serve it on 127.0.0.1 over SQLite and let a simulated crowd (capability, position bias, spammers) do it
    until the stopping rule decides; then collate, exclude, analyze and report. Prints the decision, the judgements
    taken against the fixed design, agreement, rankings with intervals and where the report is."""
    from humeval.demo import demo as run_demo

    result = run_demo(directory, items=items, seed=seed, concurrency=concurrency, progress=True,
                      step=lambda line: err.print(line, highlight=False, markup=False, soft_wrap=True))
    summary = result.summary()
    err.print(f"demo done in {summary['seconds']:.1f}s", highlight=False)
    if fmt == Format.json:
        emit_json(summary)
        return
    _print(summary)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


def _interval(row: dict[str, Any], key: str = "estimate") -> str:
    if row[key] is None:
        return "–"
    ci = (f" [{row['ci_low']:.4g}, {row['ci_high']:.4g}]" if row["ci_low"] is not None
          else " [not enough data]" if row.get("no_interval") else "")
    return f"{row[key]:.4g}{ci}"


def _print(s: dict[str, Any]) -> None:
    lines = ["", f"humeval demo: {s['study']}", "", "Decision (dynamic stopping)"]
    for d in s["decisions"]:
        guarantee = "anytime-valid" if d["anytime_valid"] else "valid only at a fixed n"
        said = (f"decided for {d['decision']} after n = {d['n']} decisive judgements" if d["outcome"] in ("A", "B")
                else f"did not decide (n = {d['n']}, {d['outcome']})")
        lines.append(f"  {d['criterion']}, {d['a']} vs {d['b']}: the {d['rule']} rule (delta {d['delta']:g}, "
                     f"{guarantee}) {said}")
        if d.get("fixed_design") and d.get("saved") is not None:
            lines.append(f"  judgements of this comparison: {d['collected']} taken; the fixed design takes "
                         f"{d['fixed_design']} ({d['saved']} saved, {_pct(d['saved'], d['fixed_design'])})")
        if d.get("places") is not None and d.get("fixed_places"):
            spared = d["fixed_places"] - d["places"]
            lines.append(f"  places (sessions paid) for this comparison: {d['places']}; the fixed design pays "
                         f"{d['fixed_places']} ({spared} saved, {_pct(spared, d['fixed_places'])})")
    c, x, col = s["collection"], s["exclusion"], s["collation"]
    lines += ["", "Collection (real server, SQLite, simulated crowd)",
              (f"  {c['judgements']} judgements from {c['participants_active']} participants in {c['seconds']:.1f}s; "
               f"the fixed design's participant lists hold {c['fixed_design']} (attention checks included)"),
              (f"  excluded by the preregistered rules: {x['participants_excluded']} of {x['participants_total']} "
               f"participants ({x['judgements_excluded']} answers)")]
    if c["rerun_rounds"]:
        lines.append(f"  re-run of the tasks the excluded participants left short: {c['rerun_judgements']} judgements "
                     f"in {c['rerun_rounds']} round(s) of re-run lists, as `humeval collate` deals them")
    if col["complete"]:
        lines.append(f"  collation: complete ({col['tasks_decided']} pair tasks complete by the decision)")
    else:
        lines.append(f"  collation: {col['judgements_missing']} judgements still short in {col['tasks_incomplete']} of "
                     f"{col['tasks']} tasks after exclusion: a re-run file is in results/rehearsal/rerun/")
    print("\n".join(lines) + "\n", flush=True)
    level = f"{100 * s['confidence_level']:.0f}%"
    emit_rows([{"criterion": a["criterion"], "measure": a["method"], f"estimate [{level} CI]": _interval(a),
                "n": a["n"], "verdict": a["verdict"] or ""} for a in s["agreement"] if a["estimate"] is not None],
              Format.table, title="Agreement (measures that do not apply, e.g. the ICC of choices, are in the report)")
    print(flush=True)
    emit_rows([{"criterion": r["criterion"], "method": r["method"], "rank": r["rank"], "system": r["system"],
                f"score [{level} CI]": _interval(r, "score"), "n": r["n"]} for r in s["rankings"]],
              Format.table, title=f"Rankings (rank range and score with {level} intervals)")
    print(f"\nreport: {s['report']}\n{s['signature']}", flush=True)
