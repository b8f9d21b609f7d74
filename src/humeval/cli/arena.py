"""``humeval arena replay FILE``: replay an arena's vote counts under pooled anytime-valid statements;
``humeval arena generate``: stream one prompt through one of a study's arena models.

Votes are drawn without replacement from each pair's counts, in random orders, under each pair policy; per
question (the best model, the top k as a set, the full ranking) the rows give the votes until the statement was
announced against the votes the data hold, and the announcements wrong against Davidson's fit to every vote with a
95% Clopper-Pearson upper bound. The fixed-n bootstrap of the same votes is printed beneath (valid at one look).

With ``--judge FILE`` (LLMFAO: the crowd's CSV and a judge's verdicts on the same comparison ids) the rows are
prediction-powered instead: per judge, its agreement with the crowd, the coverage of the fixed-n PPI++ intervals
over ``--splits`` random labelled subsets, and the human votes until the watched statements resolve with and
without the judge (:func:`humeval.arena.arena_ppi`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from humeval.cli._common import Format, emit_json, emit_rows, err

arena = typer.Typer(name="arena", no_args_is_help=True, add_completion=False,
                    help="Arena tools: replay real vote counts under pooled anytime-valid statements, export a study's "
                         "votes as FastChat battle logs; stream a prompt through one of a study's models "
                         "(docs/arena.md).")


@arena.command("export")
def export(
    directory: Path = typer.Argument(Path("."), help="Study folder."),
    output: Path = typer.Option(None, "--output", "-o",
                                help="The battle log: .json (FastChat's clean_battle array), .jsonl, .parquet or .csv "
                                     "(default results/battles.json)."),
    criterion: str = typer.Option(None, "--criterion", help="One pairwise criterion (default: every pairwise one)."),
    everything: bool = typer.Option(False, "--all", help="Keep attention checks, repeats and excluded votes."),
    dry_run: str = typer.Option(None, "--dry-run", help="Export a dry run's votes (results/dry-run/KIND)."),
) -> None:
    """Write the study's pairwise votes as a FastChat battle log (model_a, model_b, winner, judge, tstamp, ...)."""
    from humeval.arena.export import study_battle_log, write_battle_log
    from humeval.study import StudyFolder

    study = StudyFolder.open(directory)
    results = study.results_dir / "dry-run" / dry_run if dry_run else None
    battles = study_battle_log(study, criterion=criterion, everything=everything, results=results)
    path = write_battle_log(battles, output or (results or study.results_dir) / "battles.json")
    err.print(f"wrote {len(battles):,} votes of {battles['criterion'].nunique() if len(battles) else 0} criterion(s) "
              f"to {path}", highlight=False, markup=False)


@arena.command("replay")
def replay(
    data: Path = typer.Argument(..., help="Votes: counts (JSON: models, X, Y), a FastChat battle log, or a CSV of left, right, winner."),
    models: int = typer.Option(20, "--models", help="Keep the top N models by the fit to every vote."),
    question: str = typer.Option("best,top-k,ranking", "--question", help="Comma list: best, top-k, ranking."),
    top: int = typer.Option(10, "--top", help="k of the top-k question (at most models - 1)."),
    policy: str = typer.Option("adaptive,uniform", "--policy", help="Comma list of pair policies: adaptive, uniform."),
    replays: int = typer.Option(200, "--replays", help="Random orders per question and policy."),
    delta: float = typer.Option(0.05, "--delta", help="Error probability of every announcement, in (0, 1)."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random draw."),
    intransitive: bool = typer.Option(False, "--intransitive", help="Swap the first and third model's wins first (a cycle on purpose)."),
    first_batch: int = typer.Option(1000, "--first-batch", help="Votes in a replay's first batch (later: --growth times the votes so far)."),
    growth: float = typer.Option(0.1, "--growth", help="A batch's votes as a share of the votes so far (an announcement is seen at most that late)."),
    bootstrap: int = typer.Option(200, "--bootstrap", help="Fixed-n bootstrap rounds printed beneath (0: none)."),
    judge: list[Path] = typer.Option([], "--judge", help="A judge's verdicts on the same comparison ids (LLMFAO's GPT-4 or GPT-3.5 CSV; repeatable): prediction-powered rows."),
    labelled_share: float = typer.Option(0.5, "--labelled-share", help="With --judge: the share of votes a human labels."),
    splits: int = typer.Option(1000, "--splits", help="With --judge: random labelled subsets for the fixed-n coverage."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format: table, json or csv."),
) -> None:
    """Replay vote counts exchangeably; votes until each question is answered, and wrong answers with their bound."""
    if judge:
        from humeval.arena import arena_ppi

        ppi_rows = [r.to_json() for r in arena_ppi(data, judge, share=labelled_share, splits=splits,
                                                  replays=replays, delta=delta, seed=seed)]
        emit_rows(ppi_rows, fmt, title=f"arena replay with a judge: {data.name}, {labelled_share:g} of the votes "
                  f"labelled, delta {delta:g}", json_data={"rows": ppi_rows},
                  footer="coverage: fixed-n PPI++ 95% intervals of the centred scores against the fit to every "
                         "human vote; votes_judge / votes_human: human votes until statements_m statements were "
                         "resolved by the asymptotic confidence sequences, with and without the judge")
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from humeval.arena import arena_replay, bootstrap_ranks, summarise

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(label: str, votes: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=votes)

        counts, results = arena_replay(data, models=models, questions=question, policies=policy, top=top,
                                       replays=replays, delta=delta, seed=seed, intransitive=intransitive,
                                       first_batch=first_batch, growth=growth, progress=progress)
    rows = [summarise(r).to_json() for r in results]
    boot = bootstrap_ranks(counts, top=min(top, len(counts.models) - 1), n_boot=bootstrap, seed=seed) if bootstrap else None
    footer = ""
    if boot is not None:
        sets = ", ".join(f"{m} {lo}-{hi}" if lo != hi else f"{m} {lo}"
                         for m, lo, hi in zip(boot.models, boot.rank_low, boot.rank_high, strict=True))
        footer = (f"fixed-n bootstrap of all {counts.votes:,} votes ({boot.n_boot} rounds, valid at one look only): "
                  f"best kept in {boot.best_share:.0%} of rounds, top set in {boot.top_share:.0%}; rank sets: {sets}")
    emit_rows(rows, fmt, title=f"arena replay: {len(counts.models)} models, {counts.votes:,} votes, delta {delta:g}",
              json_data={"models": list(counts.models), "votes": counts.votes, "rows": rows,
                         "bootstrap": None if boot is None else boot.__dict__},
              footer=footer)


@arena.command("generate")
def generate(
    study: Path = typer.Argument(Path("."), help="The study folder or its humeval.yaml (its `arena.models` section)."),
    model: list[str] = typer.Option([], "--model", "-m", help="A name of `arena.models` (repeat for several; none: every model in turn)."),
    prompt: str = typer.Option(..., "--prompt", "-p", help="The prompt to send (`-` reads it from stdin)."),
    max_chars: int | None = typer.Option(None, "--max-chars", help="Replace limits.max_chars."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Replace limits.max_tokens."),
    first_token_seconds: float | None = typer.Option(None, "--first-token-seconds", help="Replace limits.first_token_seconds."),
    total_seconds: float | None = typer.Option(None, "--total-seconds", help="Replace limits.total_seconds."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table: each answer streamed as it comes, then a summary on stderr; json: the generations' records."),
) -> None:
    """Stream one prompt through the arena's models, within their limits, to try the endpoints before launch.

    Each answer is printed as it arrives; its summary says how long the first piece and the whole took, the
    tokens, the cost, and the names the identity filter finds (a battle with them would be dropped). A failed
    generation (timeout, too long, empty, an HTTP error) is reported with its reason, and the command exits 1 when
    any failed. Requests go into the study's arena ledger.
    """
    import sys

    from humeval.arena.models import GenerationError, protocol_endpoints
    from humeval.arena.prompts import IdentityFilter
    from humeval.errors import ProtocolError, did_you_mean

    found = protocol_endpoints(study)
    unknown = [m for m in model if m not in found.endpoints]
    if unknown:
        raise ProtocolError(f"--model {unknown[0]!r}: no such model in arena.models. "
                            f"{did_you_mean(unknown[0], found.endpoints)}")
    text = sys.stdin.read() if prompt == "-" else prompt
    identity = IdentityFilter(found.identity_words)
    changes = {k: v for k, v in {"max_chars": max_chars, "max_tokens": max_tokens,
                                 "first_token_seconds": first_token_seconds, "total_seconds": total_seconds}.items()
               if v is not None}
    names = model or list(found.endpoints)
    records, failed = [], 0
    for name in names:
        endpoint = found.endpoints[name]
        base = endpoint.spec.limits or found.limits
        limits = type(base).model_validate(base.model_dump() | changes)
        if fmt == Format.table and len(names) > 1:
            err.print(f"== {name} ==", markup=False, highlight=False)
        stream = endpoint.stream(text, limits=limits)
        failure: GenerationError | None = None
        try:
            for piece in stream:
                if fmt == Format.table:
                    sys.stdout.write(piece)
                    sys.stdout.flush()
        except GenerationError as exc:
            failure = exc
        failed += failure is not None
        gen = stream.generation
        found_names = identity.battle([gen.text], text)
        records.append(gen.to_json() | {"identity": found_names, "limits": limits.model_dump()})
        if fmt != Format.table:
            continue
        sys.stdout.write("\n")
        sys.stdout.flush()
        first = "no piece" if gen.first_token_seconds is None else f"first piece after {gen.first_token_seconds:.2f} s"
        usage = f"estimated: {gen.usage_estimated}" if gen.usage_estimated else "reported" if gen.tokens_out else "none"
        err.print(f"{name}: {len(gen.text):,} characters, {first}, {gen.seconds:.2f} s in all; {gen.tokens_in} + "
                  f"{gen.tokens_out} tokens ({usage}); cost {gen.cost:.6f} {gen.currency}"
                  + (" (cached)" if gen.cached else "")
                  + (f"; identity filter: {', '.join(found_names)} (a battle with this answer would be dropped)"
                     if found_names else "; identity filter: nothing found"), markup=False, highlight=False)
        if failure is not None:
            err.print(f"generation failed ({failure.reason}): {failure}", markup=False, highlight=False)
    if fmt != Format.table:
        emit_json(records[0] if len(model) == 1 else records)
        for r in records:
            if r["error"]:
                err.print(f"{r['model']}: generation failed ({r['error']})", markup=False, highlight=False)
    if failed:
        raise typer.Exit(1)
