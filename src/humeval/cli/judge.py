"""``humeval judge``: ask the study's LLM judges for their files (a logged pipeline stage)."""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import Format, emit_rows, err, print_stage


def judge(
    directory: Path = typer.Argument(Path("."), help="Study folder (data.judges with an `llm` section)."),
    name: list[str] = typer.Option([], "--judge", "-j", help="Ask only this judge (repeatable; default: every judge with `llm`)."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged (cached answers are not asked again)."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table | json | csv"),
) -> None:
    """Ask each judge's OpenAI-compatible endpoint for verdicts (each pair in both orders) or scores; write the judge's file, log model, prompt hash, requests, tokens and cost."""
    from humeval.pipeline import judge as run_judge
    from humeval.study import StudyFolder

    result = run_judge(StudyFolder.open(directory), judges=list(name) or None, force=force)
    if fmt == Format.table:
        print_stage(result)
    else:
        err.print(f"judge: {'unchanged, skipped' if result.skipped else 'done'}", highlight=False)
    keys = ("model", "requests", "from_cache", "tokens_in", "tokens_out", "cost", "currency", "usage_estimated",
            "refusals", "unparseable", "swaps_disagreed", "position_consistency", "rows")
    # sent_all and spend_max: every request the ledger holds for the judge (all runs, a killed one included) and what
    # they cost at most (unanswered ones at their prompt's estimate plus max_tokens)
    rows = [{"judge": j, **{k: s.get(k) for k in keys}, "sent_all": s.get("spend", {}).get("requests_sent"),
             "spend_max": s.get("spend", {}).get("cost_max")} for j, s in result.summary.get("judges", {}).items()]
    # unchanged inputs: nothing was asked now, and the figures are the last run's (on a paid API, "requests 200"
    # printed again would read as 200 more paid requests)
    title = ("unchanged since the last run, nothing asked now: the last run's figures (--force to run again)"
             if result.skipped else "judges asked")
    emit_rows(rows, fmt, title=title, json_data={**result.summary, "skipped": result.skipped})
