"""Benchmark: selection time and peak memory of each sampler on synthetic data (default 100 000 items x 10 systems).

Targets: issue 4, CASF selects 50 % of 100k items x 10 systems in under 60 s on 2 cores;
issue 15, under 20 s and 2 GiB. Run: ``python benchmarks/bench_sampling.py [--items N]
[--systems M] [--methods casf,ol]``. The data are generated once (not timed) and written to a
temporary pickle; every method then runs in a fresh child process, so its wall time, CPU time
and peak resident memory (``VmHWM``) are its own (reshaping into arrays and importing
scikit-learn included). ``--legacy`` adds the redundancy graph as computed before issue 15
(regular-expression tokenisation and pandas factorize, kept below as the alternative), beside
the current one, each in its own child process.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("MKL_NUM_THREADS", "2")

import argparse
import hashlib
import json
import pickle
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
import scipy.sparse as sp

from humeval.sampling import ItemTable, get_sampler, sample_size
from humeval.sampling.redundancy import (
    DEFAULT_THRESHOLD,
    MAX_DF,
    MIN_DF_CAP,
    bigram_matrix,
    similar_pairs,
)


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


def legacy_bigram_matrix(outputs: np.ndarray) -> sp.csr_matrix:
    """The redundancy bigram matrix as computed up to commit 8b33eca (the alternative the benchmark compares)."""
    n, m = outputs.shape
    texts = outputs.ravel().tolist()
    text = "\x01".join(texts).lower()
    tokens = np.asarray(re.findall(r"\w+|\x01", text), dtype=object)
    is_sep = tokens == "\x01"
    owner = np.cumsum(is_sep)[~is_sep]
    ids = pd.factorize(tokens[~is_sep])[0].astype(np.int64)
    same = owner[1:] == owner[:-1]
    pair = ids[:-1][same] * (int(ids.max(initial=0)) + 1) + ids[1:][same]
    codes, _ = pd.factorize(pair)
    items = sp.csr_matrix(
        (np.ones(len(codes), dtype=np.float32), (owner[1:][same] // m, codes)), shape=(n, int(codes.max(initial=-1)) + 1)
    )
    items.sum_duplicates()
    items.data[:] = 1.0
    df = np.diff(items.tocsc().indptr)
    common = df > max(MIN_DF_CAP, MAX_DF * n)
    if common.any():
        items.data[common[items.indices]] = 0.0
    items.eliminate_zeros()
    items.sort_indices()
    return items


def peak_rss() -> int:
    """Peak resident memory of this process in bytes (``VmHWM``; ``ru_maxrss`` would include the parent's
    peak, which Linux carries over ``exec``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(task: str, data: str, rate: float) -> None:
    """Run one task on the pickled long table and print one JSON line: wall, cpu, peak RSS, result."""
    t0, c0 = time.perf_counter(), time.process_time()
    with open(data, "rb") as fh:
        frame = pickle.load(fh)
    load = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    table = ItemTable.from_long(frame)
    del frame
    if task in ("graph", "legacy-graph"):
        matrix = bigram_matrix(table.outputs) if task == "graph" else legacy_bigram_matrix(table.outputs)
        graph = similar_pairs(matrix, DEFAULT_THRESHOLD)
        result = f"{graph.nnz // 2} redundant pairs, sha256 {hashlib.sha256(graph.indices.tobytes()).hexdigest()[:12]}"
    else:
        size = sample_size(table.n_items, rate)
        selection = get_sampler(task).select(table, size, seed=0)
        ids = ",".join(selection.item_ids).encode()
        result = f"{size} items, {max(selection.phases) + 1} phase(s), sha256 {hashlib.sha256(ids).hexdigest()[:12]}"
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = peak_rss()
    print(json.dumps({"task": task, "wall": wall, "cpu": cpu, "peak": peak, "load": load, "result": result}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--rate", type=float, default=0.5)
    parser.add_argument("--methods", default="random,stratified,systematic,heuristic,balanced,sm,8m,ol,casf")
    parser.add_argument("--legacy", action="store_true", help="also time the redundancy graph as computed before")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.data, args.rate)
        return
    t0 = time.perf_counter()
    frame = synthetic(args.items, args.systems)
    print(f"generate {args.items} x {args.systems}: {time.perf_counter() - t0:.1f} s (not counted)", flush=True)
    tasks = (["legacy-graph"] if args.legacy else []) + ["graph", *args.methods.split(",")]
    print("each task in a fresh process; time and memory include reshaping the long table into arrays", flush=True)
    print("wall = elapsed time, cpu = process CPU time (all threads); on a busy machine wall > cpu", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "frame.pkl")
        with open(data, "wb") as fh:
            pickle.dump(frame, fh, protocol=5)
        del frame
        for task in tasks:
            out = subprocess.run(
                [sys.executable, __file__, "--child", task, "--data", data, "--rate", str(args.rate)],
                capture_output=True, text=True, check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            label = {"graph": "redundancy graph (now)", "legacy-graph": "redundancy graph (before)"}.get(task, task)
            verdict = ""
            if task == "casf":
                ok = r["wall"] < 20 and r["peak"] < 2 * 2**30
                verdict = f"  target < 20 s and < 2 GiB: {'OK' if ok else 'MISSED'}"
            print(f"{label:>26}: wall {r['wall']:6.1f} s, cpu {r['cpu']:6.1f} s, peak RSS {r['peak'] / 2**30:5.2f} GiB: "
                  f"{r['result']}{verdict}", flush=True)


if __name__ == "__main__":
    main()
