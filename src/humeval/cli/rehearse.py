"""``humeval rehearse``: synthetic participants do the study through the real server and store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from humeval.cli._common import err, out


def rehearse(
    directory: Path = typer.Argument(Path("."), help="Study folder (run `humeval run` first)."),
    participants: int = typer.Option(0, "--participants", "-n", min=0, show_default=False,
                                     help="Synthetic participants to send (default: as many as the study needs)."),
    kind: str = typer.Option("static", "--kind", "-k", help="Dummy values: random | static | normal; or crowd: simulated "
                             "participants (capability, position bias, spammers who answer attention checks at random, cheap clickers); or replay: "
                             "recorded workers replay their votes of --crowd-votes."),
    db: str = typer.Option("", "--db", help="An EMPTY store for the rehearsal: SQLite file or postgresql://... "
                           "(default: results/rehearsal/study.db, recreated; never the study's study.db)."),
    seed: int = typer.Option(-1, "--seed", show_default=False, help="Seed of the dummy values (default: study.seed)."),
    workers: int = typer.Option(0, "--workers", "-w", min=0, max=64, show_default=False,
                                help="Server processes, as `humeval serve --workers` (default: 1 with SQLite, 2 with PostgreSQL)."),
    concurrency: int = typer.Option(8, "--concurrency", "-c", min=1, max=256, help="Participants at work at once."),
    timeout: float = typer.Option(600.0, "--timeout", min=1.0, help="Seconds allowed for the collection."),
    capability: tuple[float, float] = typer.Option((0.7, 1.0), "--capability", help="crowd: capability range LOW HIGH, "
                                                   "in (0, 1] (1: always judges by the systems' quality)."),
    position_bias: float = typer.Option(0.1, "--position-bias", min=-1.0, max=1.0,
                                        help="crowd: pull towards the output shown first, in [-1, 1]."),
    spammers: float = typer.Option(0.1, "--spammers", min=0.0, max=0.99,
                                   help="crowd: share of spammers, who answer everything at random."),
    first_clickers: float = typer.Option(0.1, "--first-clickers", min=0.0, max=1.0,
                                         help="crowd: share of cheap clickers who always choose the output shown "
                                              "first (and a scale's first point), attention checks included."),
    straight_liners: float = typer.Option(0.1, "--straight-liners", min=0.0, max=1.0,
                                          help="crowd: share of cheap clickers who give one answer to every task "
                                               "(the same point of every scale, the same side of every pair)."),
    rerun_rounds: int = typer.Option(0, "--rerun-rounds", min=0, max=10,
                                     help="Re-run what collation finds short (excluded participants' tasks) up to "
                                          "this many times, with new participants, until it is complete."),
    crowd_votes: Path = typer.Option(None, "--crowd-votes", help="replay: recorded votes, LLMFAO's "
                                     "llmfao-crowd-comparisons.csv or a CSV/JSONL of item_id, model_a, model_b, winner, "
                                     "judge; each participant is one worker and answers each battle with its vote.",
                                     show_default=False),
) -> None:
    """Rehearse the collection: start `humeval serve` on 127.0.0.1, let synthetic participants do the study through
    the JSON API, export the store, then collate, exclude, analyze and report into results/rehearsal/."""
    from humeval.rehearsal.participants import Population
    from humeval.rehearsal.rehearse import rehearse as run_rehearsal

    population = Population(capability=capability, position_bias=position_bias, spammer_share=spammers,
                            first_share=first_clickers, straight_share=straight_liners) if kind == "crowd" else None
    result = run_rehearsal(
        directory, participants=participants or None, kind=kind, seed=None if seed < 0 else seed, db=db or None,
        workers=workers, concurrency=concurrency, timeout=timeout, progress=True, population=population,
        rerun_rounds=rerun_rounds, crowd_votes=crowd_votes,
    )
    required = f" of {result.judgements_required} required" if result.judgements_required is not None else ""
    err.print(
        f"[bold]rehearse[/] ({result.kind}): {result.participants_active} of {result.participants} participants "
        f"submitted {result.judgements} judgements{required} in {result.seconds:.2f}s "
        f"({result.items_per_second:g} items/s){_places(result)}; store {result.store}",
        highlight=False, soft_wrap=True,
    )
    if result.rerun_lists:
        err.print(f"  re-run: {result.summary['rerun_judgements']} judgements in {result.rerun_lists} new lists "
                  f"({result.summary['rerun_rounds']} round(s))", highlight=False, soft_wrap=True)
    err.print(f"  collation: {'complete' if result.complete else 'incomplete (see rerun/)'}; "
              f"participants excluded: {result.participants_excluded}", highlight=False, soft_wrap=True)
    if "replayed" in result.summary:
        counts = result.summary["replayed"]
        err.print("  replayed votes: " + ", ".join(f"{v} {k}" for k, v in counts.items()) +
                  " (own: the worker's vote on the battle; others: another worker's; pair: a vote on the pair on "
                  "another prompt)", highlight=False, soft_wrap=True)
    if result.ambiguous_outputs:
        err.print(f"  [yellow]{result.ambiguous_outputs} outputs share their text with another system's output of the "
                  "same item; participants scored them alike[/]", highlight=False, soft_wrap=True)
    if result.analysis_error:
        err.print(f"[yellow]the rehearsal stopped before the analysis[/]: {result.analysis_error}", highlight=False, soft_wrap=True)
    else:
        err.print(f"  wrote {result.report} and {result.results} ({result.elapsed:.1f}s in all)",
                  highlight=False, soft_wrap=True, markup=False)
        out.print(result.signature, markup=False, highlight=False, soft_wrap=True)


def _places(result: Any) -> str:
    """The places the rehearsal used (``list`` strategy), beside the budget's prediction when there is one."""
    if result.places is None:
        return ""
    predicted = f" ({result.places_predicted} predicted)" if result.places_predicted is not None else ""
    return (f"; places {result.places}{predicted}, {result.turned_away} turned away, "
            f"{result.sessions_cut} sessions cut at the decision")
