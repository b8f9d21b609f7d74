"""The collection benchmark against another revision: ``bench_server.py`` run alternately on this tree and on REV.

    python benchmarks/bench_against.py e40d88f --runs 3 -- --configs sqlite:1,postgresql:2 --levels 50 --seconds 10 --flow next,html

REV (any git revision of this repository) is unpacked with ``git archive`` into a temporary folder. Each run starts
this folder's ``bench_server.py --json`` (the arguments after ``--``) twice: with this tree's ``humeval`` first, then
with REV's, put first on ``PYTHONPATH`` (the servers it starts inherit it), ``--runs`` times. Alternating is the
point: runs of one configuration vary by up to 30 % on a shared machine, so only runs made side by side compare.
Both sides run in this environment, with its installed dependencies.

Prints, per flow, configuration and level, the judgements per second of every run of each side, the ratio of their
medians (this tree / REV) and each side's median CPU per judgement (humeval + PostgreSQL). A cell that measured
nothing in a run is left out of that run's numbers and said so; a side without a measured run says "measured
nothing", never 0. ``--json`` prints every run's own JSON with the summary.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COLUMNS = ["flow", "configuration", "annotators", "this tree (runs)", "REV (runs)", "ratio (medians)",
           "CPU/item, this tree", "CPU/item, REV"]


def unpack(rev: str, into: Path) -> Path:
    """``rev`` of this repository, unpacked into ``into``; its ``src`` folder."""
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                           capture_output=True, text=True, check=False)
    if found.returncode != 0:
        raise SystemExit(f"bench_against: {rev!r} is not a revision of {ROOT} (git rev-parse found no commit)")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", found.stdout.strip()],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    if not (into / "src" / "humeval").is_dir():
        raise SystemExit(f"bench_against: {rev} has no src/humeval to run")
    return into / "src"


def bench(src: Path, args: list[str]) -> dict[str, Any]:
    """One run of this folder's ``bench_server.py --json`` with ``src``'s humeval; its JSON."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, str(HERE / "bench_server.py"), *args, "--json"], env=env,
                          stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench_against: bench_server.py with {src} exited with {done.returncode} (its output is above)")
    return json.loads(done.stdout)


def cells(run: dict[str, Any]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """A run's measured cells by (flow, configuration, annotators)."""
    return {(c["flow"], f"{c['store']}:{c['processes']}", x["annotators"]): x
            for c in run["configs"] for x in c["cells"] if x["measured"]}


def summary(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per cell: each side's judgements per second (one per run that measured it), the ratio of the medians and each
    side's median CPU per judgement (humeval, PostgreSQL: None for SQLite or when not measured)."""
    sides = [[cells(run) for run in ours], [cells(run) for run in theirs]]
    keys = sorted({key for side in sides for run in side for key in run})
    out = []
    for key in keys:
        row: dict[str, Any] = {"flow": key[0], "configuration": key[1], "annotators": key[2]}
        for name, side in zip(("this", "rev"), sides, strict=True):
            got = [run[key] for run in side if key in run]
            pg = [x["postgres_cpu_ms_per_item"] for x in got if x.get("postgres_cpu_ms_per_item") is not None]
            row[name] = {"items_per_s": [x["items_per_s"] for x in got],
                         "humeval_cpu_ms": statistics.median(x["humeval_cpu_ms_per_item"] for x in got) if got else None,
                         "postgres_cpu_ms": statistics.median(pg) if pg else None}
        a, b = row["this"]["items_per_s"], row["rev"]["items_per_s"]
        row["ratio"] = statistics.median(a) / statistics.median(b) if a and b else None
        out.append(row)
    return out


def _runs(xs: list[float]) -> str:
    return ", ".join(f"{x:.0f}" for x in xs) if xs else "measured nothing"


def _cpu(side: dict[str, Any]) -> str:
    if side["humeval_cpu_ms"] is None:
        return "measured nothing"
    pg = side["postgres_cpu_ms"]
    return f"{side['humeval_cpu_ms']:.2f}" + ("" if pg is None else f" + {pg:.2f}") + " ms"


def table(rows: list[dict[str, Any]], rev: str) -> list[str]:
    head = [c.replace("REV", rev) for c in COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(f"| {r['flow']} | {r['configuration']} | {r['annotators']} | {_runs(r['this']['items_per_s'])} | "
                     f"{_runs(r['rev']['items_per_s'])} | {ratio} | {_cpu(r['this'])} | {_cpu(r['rev'])} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passed = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rev", help="the git revision to compare with (a release's commit or tag)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each side, alternated (default 3)")
    ap.add_argument("--json", action="store_true", help="print the summary and every run as JSON")
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.runs < 1:
        ap.error(f"--runs: expected 1 or more, got {args.runs}")
    if "--json" in passed:
        ap.error("--json goes before --: bench_server.py is always run with --json here")
    with tempfile.TemporaryDirectory(prefix="humeval-against-") as tmp:
        theirs_src = unpack(args.rev, Path(tmp))
        ours: list[dict[str, Any]] = []
        theirs: list[dict[str, Any]] = []
        for i in range(args.runs):
            print(f"run {i + 1} of {args.runs}: this tree, then {args.rev}", file=sys.stderr, flush=True)
            ours.append(bench(ROOT / "src", passed))
            theirs.append(bench(theirs_src, passed))
    rows = summary(ours, theirs)
    command = "python benchmarks/bench_against.py " + " ".join(argv)
    if args.json:
        print(json.dumps({"command": command, "rev": args.rev, "summary": rows, "this": ours, "theirs": theirs}, indent=2))
    out = sys.stderr if args.json else sys.stdout
    print(f"\n`{command}`; {os.cpu_count()} CPUs; judgements per second of each run, alternated\n", file=out)
    for line in table(rows, args.rev):
        print(line, file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
