"""``humeval sample``: select the items to evaluate (study or standalone file), or evaluate samplers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from humeval.cli._common import Format, emit_json, emit_rows, err, run_stage_command
from humeval.sampling.registry import SAMPLERS

_METHOD_HELP = f"Sampler: {SAMPLERS.help_text()} (auto: every item at rate 1, else stratified by data.properties or random)."


def _params(values: list[str] | None) -> dict[str, Any]:
    from humeval.errors import DataError

    out: dict[str, Any] = {}
    for item in values or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise DataError(f"--param: expected KEY=VALUE, got {item!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def _floats(text: str, what: str) -> list[float]:
    from humeval.errors import DataError

    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise DataError(f"{what}: expected comma-separated numbers, got {text!r}") from None


def sample(
    directory: Path = typer.Argument(Path("."), help="Study folder (ignored with --data)."),
    force: bool = typer.Option(False, "--force", help="Re-run even if the inputs are unchanged."),
    data: list[Path] = typer.Option(None, "--data", help="Standalone: a long-format file (item id = sample_id or item_id). Repeat for --evaluate."),
    method: str = typer.Option("auto", "--method", "-m", help=_METHOD_HELP),
    rate: float = typer.Option(0.5, "--rate", "-r", help="Share of items to select, in (0, 1]."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sampler (standalone mode)."),
    param: list[str] = typer.Option(None, "--param", "-p", help="Sampler parameter KEY=VALUE (JSON values), repeatable."),
    simulate_scores: bool = typer.Option(False, "--simulate-scores", help="Run every phase with the human.* scores already in the data."),
    scores: Path = typer.Option(None, "--scores", help="Standalone: human scores collected so far (item_id, system, human.*)."),
    metrics: str = typer.Option("auto", "--metrics", help="Metric columns: auto (stored, else computed), stored, compute."),
    cache: Path = typer.Option(None, "--cache", help="Metric cache folder (default ~/.cache/humeval/metrics)."),
    evaluate: bool = typer.Option(False, "--evaluate", help="Evaluate samplers against random on data with complete human scores (default: the shared CASF sets)."),
    methods: str = typer.Option("heuristic,stratified,systematic,balanced,8m,sm,ol,casf", "--methods", help="--evaluate: comma-separated samplers."),
    rates: str = typer.Option("0.5", "--rates", help="--evaluate: comma-separated rates."),
    random_seeds: int = typer.Option(1000, "--random-seeds", help="--evaluate: random subsets forming the random distribution."),
    method_seeds: int = typer.Option(5, "--method-seeds", help="--evaluate: seeds per method."),
    plot: Path = typer.Option(None, "--plot", help="--evaluate: write a figure (PNG/PDF/SVG)."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table | json | csv"),
) -> None:
    """Select the items to evaluate.

    Study mode (`humeval sample DIR`) runs the protocol's sampler and writes items.jsonl; a
    phased sampler (casf) runs the next phase each time human scores of the items selected so
    far are in DIR/human_scores.jsonl (or .csv: item_id, system, human.<aspect>). Standalone
    mode (`--data FILE`) prints {"selected": [...], "phases": [...]}.
    """
    if evaluate:
        _evaluate(data, methods, rates, random_seeds, method_seeds, seed, param, metrics, cache, plot, fmt)
        return
    if data:
        _standalone(data, method, rate, seed, _params(param), simulate_scores, scores, metrics, cache, fmt)
        return
    _study(directory, force, simulate_scores)


def _study(directory: Path, force: bool, simulate: bool) -> None:
    # imported human scores are an input of the stage: new scores run the next phase
    result = run_stage_command(directory, "sample", force, options={"simulate_scores": simulate} if simulate else None)
    if result.summary.get("next"):
        err.print(f"next: {result.summary['next']}", highlight=False, markup=False)


def _standalone(
    files: list[Path], method: str, rate: float, seed: int, params: dict[str, Any], simulate: bool,
    scores: Path | None, metrics: str, cache: Path | None, fmt: Format,
) -> None:
    from humeval.data.readers import read_table
    from humeval.errors import DataError
    from humeval.sampling import check_rate, get_sampler, resolve_method
    from humeval.sampling.prepare import normalise_long
    from humeval.sampling.select import select_items

    if len(files) != 1:
        raise DataError(f"--data: give one file to sample from (got {len(files)}); several are for --evaluate")
    check_rate(rate, where="--rate")
    name = resolve_method(method, rate)
    sampler = get_sampler(name, **params)
    table, run = select_items(
        normalise_long(read_table(files[0])), sampler, rate, seed,
        simulate_scores=simulate,
        scores=read_table(scores) if scores is not None else None,
        scores_source=str(scores),
        metrics=metrics,
        cache_dir=cache,
    )
    selected = [str(i) for i in table.item_ids[run.rows]]
    phases = [int(p) for p in run.phases]
    if run.waiting:
        err.print(
            f"phase {run.phases_done} of {len(run.plan)} needs human scores of the {len(selected)} selected items: "
            "pass them with --scores FILE (item_id, system, human.*) or replay the data's scores with --simulate-scores",
            highlight=False,
        )
    if fmt == Format.json:
        emit_json({"selected": selected, "phases": phases})
        return
    rows = [{"order": i, "item_id": s, "phase": p} for i, (s, p) in enumerate(zip(selected, phases, strict=True))]
    emit_rows(rows, fmt, title=f"sample {name} rate {rate:g} seed {seed}")


def _evaluate(
    files: list[Path] | None, methods: str, rates: str, random_seeds: int, method_seeds: int, seed: int,
    param: list[str] | None, metrics: str, cache: Path | None, plot: Path | None, fmt: Format,
) -> None:
    from humeval.data.casf import CASF_SETS, load_casf
    from humeval.data.readers import read_table
    from humeval.sampling import get_sampler
    from humeval.sampling.evaluate import evaluate
    from humeval.sampling.plot import plot_evaluation
    from humeval.sampling.prepare import prepare_table

    params = _params(param)
    names = [m.strip() for m in methods.split(",") if m.strip()]
    samplers = {"random": get_sampler("random")} | {m: get_sampler(m, **params) for m in names if m != "random"}
    if files:
        frames = {p.stem: read_table(p) for p in files}
    else:
        frames = {n: load_casf(n) for n in CASF_SETS}
    tables = {n: prepare_table(f, metrics, cache_dir=cache) for n, f in frames.items()}
    result = evaluate(
        tables, samplers, _floats(rates, "--rates"), random_seeds=random_seeds, method_seeds=method_seeds,
        seed=seed, progress=lambda msg: err.print(msg, highlight=False, markup=False),
    )
    if plot is not None:
        err.print(f"wrote {plot_evaluation(result, plot)}", highlight=False, markup=False)
    data = result.to_json()
    rows = [
        {"dataset": r["dataset"], "aspect": r["aspect"], "method": r["method"], "rate": r["rate"],
         "tau_b": r["tau_b"], "top1": r["top1"],
         "random q05-q95": f"{r['quantiles']['q05']:.2f}..{r['quantiles']['q95']:.2f}" if r["quantiles"] else "",
         "percentile": r["percentile"], "percentile 95% CI": _interval(r), "beats_random": r["beats_random"]}
        for r in data["rows"]
    ]
    emit_rows(rows, fmt, title="sampler evaluation (Kendall tau-b, subset vs full ranking)", json_data=data)
    if fmt == Format.table:
        emit_rows(data["summary"], fmt, title="mean over data sets")
        if data["leave_one_out"]:
            emit_rows([{"rate": r["rate"], "mean_tau_b": r["mean_tau_b"], "percentile": r["percentile"],
                        "percentile 95% CI": _interval(r), "beats_random": r["beats_random"],
                        "chosen": ", ".join(f"{d}: {m}" for d, m in r["chosen"].items())}
                       for r in data["leave_one_out"]], fmt,
                      title="method chosen without the data set it is scored on (leave one data set out)")


def _interval(row: dict) -> str:
    """The percentile's 95 % interval as text ("" for random itself)."""
    if row.get("percentile_low") is None:
        return ""
    return f"{row['percentile_low']:.2f}..{row['percentile_high']:.2f}"
