"""Readers of users' files: the memory a FastChat battle log takes to read, and the speed of JSON lines.

``fastchat``: writes a FastChat battle log as ``clean_battle_data.py`` does (``json.dump(battles, fout,
indent=2)``: one array, each battle with two conversations of 2-4 turns, moderation and tag objects) of
``--mb`` megabytes, then reads it in a child process as ``humeval import --format fastchat`` does
(``read_judgement_file(path, "fastchat")``) and, for comparison, with every column kept
(``read_battle_table(path)``, as ``humeval.stats.read_battles`` does). The child resets its peak resident memory
(``/proc/self/clear_refs``), notes its resident memory before reading (the baseline: Python, pandas, humeval
imported, and a 50 kB log read once, for what pandas imports on first use) and reports the peak beyond it as a multiple of the file's size. Target: at most 1.5x for the import.

``jsonl``: ``--lines`` JSON lines of outputs (an item, a system, 5-40 words, an input, a list of references),
read with ``humeval.files.iter_jsonl`` and with a plain ``json.loads`` loop, best CPU seconds of three.

``--parquet``: the same battles written as an arena Parquet file (conversations as lists of structs) and read the
same two ways (the import reads only the columns it needs from the file).

    python benchmarks/bench_readers.py [--mb 200] [--lines 500000] [--only fastchat|jsonl] [--parquet] [--keep DIR]

Prints one line per measurement and a JSON summary. Bounded: each child has a timeout (600 s).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"
WORDS = ["the", "model", "answers", "question", "with", "a", "short", "and", "clear", "reply", "about", "history",
         "science", "code", "poem", "story", "why", "how", "because", "first", "then", "finally", "example",
         "python", "function", "returns", "list", "value", "error"]


def _text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def battle(rng: random.Random, i: int) -> dict[str, Any]:
    """One battle with FastChat's fields and value types (clean_battle_data.py)."""
    models = ["gpt-4", "claude-v1", "vicuna-13b", "koala-13b", "alpaca-13b", "llama-13b"]
    a, b = rng.sample(models, 2)

    def conversation() -> list[dict[str, str]]:
        turns = []
        for _ in range(rng.randint(1, 2)):
            turns += [{"role": "user", "content": _text(rng, 5, 30)}, {"role": "assistant", "content": _text(rng, 40, 160)}]
        return turns

    return {"question_id": f"{i:016x}", "model_a": a, "model_b": b,
            "winner": rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"]), "judge": f"arena_user_{rng.randint(1, 9999)}",
            "conversation_a": conversation(), "conversation_b": conversation(), "turn": 1, "anony": True,
            "language": "English", "tstamp": 1682351591.1322 + i,
            "openai_moderation": {"categories": {"harassment": False, "hate": False}, "flagged": False},
            "toxic_chat_tag": {"roberta-large": {"flagged": False, "probability": 0.01}}}


def write_fastchat(path: Path, megabytes: float, seed: int = 0) -> int:
    """A FastChat battle log of about ``megabytes`` MB written as json.dump(battles, fout, indent=2) does; its battles."""
    rng = random.Random(seed)
    target, n = megabytes * 1e6, 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        while fh.tell() < target:
            text = json.dumps(battle(rng, n), indent=2)
            fh.write(("," if n else "") + "\n  " + text.replace("\n", "\n  "))
            n += 1
        fh.write("\n]")
    return n


def _status(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def child(path: str, reader: str) -> None:
    """Read ``path`` with ``reader`` (``import`` or ``all-columns``) and print rows, seconds and peak memory."""
    import gc

    import pandas  # noqa: F401  (imported before the baseline, as humeval's readers import it)

    from humeval.data.battles import read_battle_table
    from humeval.formats.external import read_judgement_file

    def read(file: str | Path) -> Any:
        return read_judgement_file(file, "fastchat") if reader == "import" else read_battle_table(file)

    with tempfile.TemporaryDirectory() as tmp:  # a first, small read imports what pandas imports on first use
        small = Path(tmp) / "small.json"
        write_fastchat(small, 0.05)
        read(small)
    gc.collect()
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")  # reset the peak (VmHWM) to the resident memory now
    base = _status("VmRSS")
    t0 = time.perf_counter()
    frame = read(path)
    seconds = time.perf_counter() - t0
    size = Path(path).stat().st_size
    peak = _status("VmHWM") - base
    print(json.dumps({"reader": reader, "rows": len(frame), "seconds": round(seconds, 2), "file_mb": round(size / 1e6, 1),
                      "peak_mb": round(peak / 1e6, 1), "ratio": round(peak / size, 2)}))


def measure(path: Path, reader: str, timeout: float = 600) -> dict[str, Any]:
    """:func:`child` in a process of its own: its JSON line."""
    proc = subprocess.run([sys.executable, __file__, "--child", str(path), "--reader", reader], capture_output=True,
                          text=True, timeout=timeout, check=False, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    if proc.returncode != 0:
        raise RuntimeError(f"child {reader} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_jsonl(path: Path, lines: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(json.dumps({"item_id": f"item-{i}", "system": f"sys{i % 3}", "output": _text(rng, 5, 40),
                                 "input": _text(rng, 3, 10), "references": [_text(rng, 3, 10)], "len": i % 97}) + "\n")


def time_jsonl(path: Path) -> dict[str, float]:
    """Best CPU seconds of three: humeval's iter_jsonl, and a plain json.loads loop over the lines."""
    sys.path.insert(0, str(SRC))
    from humeval.files import iter_jsonl

    def plain() -> int:
        with path.open(encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip() and json.loads(line) is not None)

    out = {}
    for name, run in (("iter_jsonl", lambda: sum(1 for _ in iter_jsonl(path))), ("json.loads loop", plain)):
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            run()
            best = min(best, time.process_time() - t0)
        out[name] = round(best, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--lines", type=int, default=500_000)
    parser.add_argument("--only", choices=["fastchat", "jsonl"])
    parser.add_argument("--parquet", action="store_true", help="fastchat: the same battles as an arena Parquet file")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--reader", default="import", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.reader)
        return
    summary: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if args.only in (None, "fastchat"):
            path = folder / "clean_battle.json"
            battles = write_fastchat(path, args.mb)
            if args.parquet:  # the same battles as arena Parquet (conversations as lists of structs)
                import pandas as pd

                with path.open(encoding="utf-8") as fh:
                    pd.DataFrame(json.load(fh)).to_parquet(path.with_suffix(".parquet"), index=False)
                path = path.with_suffix(".parquet")
            print(f"fastchat: {path.stat().st_size / 1e6:.1f} MB, {battles} battles", flush=True)
            for reader in ("import", "all-columns"):
                summary[f"fastchat {reader}"] = result = measure(path, reader)
                print(f"  {reader}: peak {result['peak_mb']} MB beyond the baseline = {result['ratio']}x the file, "
                      f"{result['seconds']} s", flush=True)
        if args.only in (None, "jsonl"):
            path = folder / "outputs.jsonl"
            write_jsonl(path, args.lines)
            summary["jsonl"] = result = {"lines": args.lines, "mb": round(path.stat().st_size / 1e6, 1),
                                         **time_jsonl(path)}
            print(f"jsonl: {result}", flush=True)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
