"""Benchmark: selection time of each sampler on synthetic data (default 100 000 items x 10 systems).

Target (issue 4): CASF selects 50 % of 100k items x 10 systems in under 60 s on 2 cores,
redundancy included. Run: ``python benchmarks/bench_sampling.py [--items N] [--systems M]``.
Data generation is not timed; reshaping the long table into arrays is timed separately.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("MKL_NUM_THREADS", "2")

import argparse
import time

import numpy as np
import pandas as pd

from humeval.sampling import ItemTable, get_sampler, sample_size
from humeval.sampling.casf import redundancy_graph


def synthetic(n_items: int, n_systems: int, seed: int = 0, words: int = 20) -> pd.DataFrame:
    """Long table shaped like NLG outputs, with 8 metric columns and 2 human aspects.

    Each output mixes function words (Zipf over 300 words shared by all items) with the
    item's own content words (60 per item, drawn from a 2M-word vocabulary), so outputs of
    one item overlap and different items share mostly function-word bigrams, as in real
    summaries or translations. Metrics and human scores follow a latent quality.
    """
    rng = np.random.default_rng(seed)
    rows = n_items * n_systems
    lengths = rng.integers(words // 2, words * 3 // 2, rows)
    total = int(lengths.sum())
    owner = np.repeat(np.repeat(np.arange(n_items), n_systems), lengths)
    function = np.minimum(rng.zipf(1.5, total) - 1, 299)
    content = 300 + (owner * 7919 + rng.integers(0, 60, total)) % 2_000_000
    tokens = np.where(rng.random(total) < 0.5, function, content)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    flat = np.char.add("w", tokens.astype(str))
    outputs = [" ".join(flat[bounds[i] : bounds[i + 1]]) for i in range(rows)]
    for i in range(1, n_items, 100):  # 1 % of the items repeat the previous item's outputs: redundant pairs
        outputs[i * n_systems : (i + 1) * n_systems] = outputs[(i - 1) * n_systems : i * n_systems]
    item_quality = rng.normal(size=n_items)
    system_quality = np.linspace(-0.5, 0.5, n_systems)
    latent = (item_quality[:, None] + system_quality[None, :] + rng.normal(scale=0.8, size=(n_items, n_systems))).ravel()
    frame = pd.DataFrame(
        {
            "item_id": np.repeat(np.arange(n_items), n_systems).astype(str),
            "system": np.tile([f"sys{j}" for j in range(n_systems)], n_items),
            "output": outputs,
        }
    )
    for k, name in enumerate(["bert_score_f", "mover_score", "rouge1_f", "rouge2_f", "rougel_f", "bart_score_avg_f", "BLEU_4", "METEOR"]):
        frame[f"auto.{name}"] = latent * (0.3 + 0.05 * k) + rng.normal(size=rows)
    frame["human.a"] = latent + rng.normal(scale=0.5, size=rows)
    frame["human.b"] = 0.5 * latent + rng.normal(scale=0.5, size=rows)
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--rate", type=float, default=0.5)
    parser.add_argument("--methods", default="random,stratified,systematic,heuristic,balanced,sm,8m,ol,casf")
    args = parser.parse_args()
    t0 = time.perf_counter()
    frame = synthetic(args.items, args.systems)
    print(f"generate {args.items} x {args.systems}: {time.perf_counter() - t0:.1f} s (not counted)", flush=True)
    t0 = time.perf_counter()
    table = ItemTable.from_long(frame)
    reshape = time.perf_counter() - t0
    print(f"reshape to item arrays: {reshape:.1f} s", flush=True)
    size = sample_size(table.n_items, args.rate)
    t0, c0 = time.perf_counter(), time.process_time()
    graph = redundancy_graph(table, 0.5)
    print(f"redundancy graph (part of casf below): wall {time.perf_counter() - t0:.1f} s, "
          f"cpu {time.process_time() - c0:.1f} s, {graph.nnz // 2} redundant pairs", flush=True)
    print("wall = elapsed time, cpu = process CPU time (all threads); on a busy machine wall > cpu", flush=True)
    for method in args.methods.split(","):
        fresh = ItemTable(table.item_ids, table.systems, table.outputs, table.metrics, table.human, table.properties)
        t0, c0 = time.perf_counter(), time.process_time()
        selection = get_sampler(method).select(fresh, size, seed=0)
        wall, cpu = time.perf_counter() - t0 + reshape, time.process_time() - c0 + reshape
        ok = len(set(selection.item_ids)) == size
        verdict = "< 60 s OK" if wall < 60 else ">= 60 s FAIL"
        print(f"{method:>10}: wall {wall:6.1f} s, cpu {cpu:6.1f} s (reshape included): {size} items, "
              f"{max(selection.phases) + 1} phase(s), distinct {ok}  {verdict}", flush=True)


if __name__ == "__main__":
    main()
