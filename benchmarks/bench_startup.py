"""Start-up cost of the command line: each job a fresh interpreter, the median wall clock of --repeat runs.

    python benchmarks/bench_startup.py [--repeat 5] [--json PATH] [--only validate,lock,log]

Every command of ``humeval`` is run in its cheapest meaningful form: ``humeval CMD --help`` for
each (the command's module imported, its options built), and ``validate``, ``lock`` and ``log``
on the rating template (``humeval init --template rating``, written once in a temporary folder;
``lock`` gets a fresh copy of it on every run, as a lock is written once), plus a small
``simulate`` and three library imports (a statistic, the stand-alone ``krippendorff`` package
when installed, the collection server). ``humeval --version`` is the baseline and ``python -c
pass`` the floor. Each row says which of pandas, SciPy, NumPy, scikit-learn, matplotlib, pyarrow
and SQLAlchemy the job loaded (reported at exit by a ``sitecustomize`` in this script's
temporary folder). Beside the wall clock, each row gives the median CPU time (user + system) of
the job, which a loaded machine inflates much less. ``--json PATH`` also writes every row, the
load average and the number of cores.

The times depend on the machine's load: compare rows of one run, or runs on an idle machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("pandas", "scipy", "numpy", "sklearn", "matplotlib", "pyarrow", "sqlalchemy")
# a sitecustomize that writes, at exit, which heavy modules the process held (to a file named by the environment)
SITE = f"""
import atexit, json, os, sys
_out = os.environ.get("HUMEVAL_IMPORT_REPORT")
if _out:
    atexit.register(lambda: open(_out, "w").write(json.dumps([m for m in {HEAVY!r} if m in sys.modules])))
"""


def commands() -> list[str]:
    """Every command of the CLI, in the order of ``humeval --help``."""
    from humeval.cli.app import COMMANDS

    return list(COMMANDS)


def jobs(study: Path) -> dict[str, list[str] | None]:
    """Job name -> arguments after ``python`` (None: ``lock`` on a fresh copy of the study)."""
    out: dict[str, list[str] | None] = {
        "python -c pass (floor)": ["-c", "pass"],
        "humeval --version (baseline)": ["-m", "humeval", "--version"],
        "humeval validate (rating template)": ["-m", "humeval", "validate", str(study)],
        "humeval lock (rating template)": None,
        "humeval log (rating template)": ["-m", "humeval", "log", str(study)],
        "humeval simulate (60 requests, 3 iterations)": ["-m", "humeval", "simulate", "--n-requests", "60",
                                                         "--iterations", "3", "--strategy", "one", "--rule", "anytime"],
    }
    for name in commands():
        out[f"humeval {name} --help"] = ["-m", "humeval", name, "--help"]
    # library imports (docs/deployment.md): a statistic alone, its stand-alone package, the collection server
    out["from humeval.stats import krippendorff_alpha"] = ["-c", "from humeval.stats import krippendorff_alpha"]
    if importlib.util.find_spec("krippendorff") is not None:
        out["import krippendorff (the package)"] = ["-c", "import krippendorff"]
    out["the collection server (import)"] = ["-c", "import humeval.collect, humeval.server.app"]
    return out


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(args: list[str], env: dict[str, str], report: Path) -> tuple[float, float, list[str] | None]:
    """Wall clock and CPU time (user + system) of one run, and the heavy modules it loaded."""
    report.unlink(missing_ok=True)
    c0, t0 = _cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, check=False)
    elapsed, cpu = time.perf_counter() - t0, _cpu() - c0
    if done.returncode != 0:
        raise SystemExit(f"failed: python {' '.join(args)}\n{done.stderr}")
    return elapsed, cpu, json.loads(report.read_text()) if report.is_file() else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="runs per job (the median is reported)")
    ap.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the rows as JSON here")
    ap.add_argument("--only", default="", help="comma list: run only jobs whose name contains one of these words")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="humeval-bench-startup-") as tmp:
        root = Path(tmp)
        (root / "site").mkdir()
        (root / "site" / "sitecustomize.py").write_text(SITE, encoding="utf-8")
        report = root / "imports.json"
        paths = [str(root / "site"), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
        env = os.environ | {"PYTHONPATH": os.pathsep.join(paths), "HUMEVAL_IMPORT_REPORT": str(report),
                            "COLUMNS": "100"}
        template = root / "rating"
        subprocess.run([sys.executable, "-m", "humeval", "init", str(template), "--template", "rating"],
                       env=env, check=True, capture_output=True)
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        rows = []
        for name, job in jobs(template).items():
            if wanted and not any(w in name for w in wanted) and "baseline" not in name:
                continue
            times, cpus, loaded = [], [], None
            for k in range(args.repeat + 1):  # the first run warms the file cache and is not counted
                if job is None:  # a lock is written once: a fresh copy of the study each time
                    copy = root / f"lock-{k}"
                    shutil.copytree(template, copy)
                    t, c, loaded = run_once(["-m", "humeval", "lock", str(copy)], env, report)
                    shutil.rmtree(copy)
                else:
                    t, c, loaded = run_once(job, env, report)
                if k:
                    times.append(t)
                    cpus.append(c)
            rows.append({"job": name, "median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
                         "cpu_median_s": round(statistics.median(cpus), 3), "heavy_modules": loaded})
            print(f"  {name}: {rows[-1]['median_s']:.3f} s", file=sys.stderr, flush=True)
    load = os.getloadavg()
    baseline = next(r["median_s"] for r in rows if "baseline" in r["job"])
    print(f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1 / 5 / 15 min) on {os.cpu_count()} cores; "
          f"median and min wall clock of {args.repeat} runs, median CPU time (user + system: less sensitive to load)")
    print(f"{'job':<50} {'median':>8} {'min':>8} {'cpu':>8} {'x baseline':>10}  heavy modules loaded")
    for r in rows:
        heavy = "?" if r["heavy_modules"] is None else (", ".join(r["heavy_modules"]) or "none")
        print(f"{r['job']:<50} {r['median_s']:7.3f}s {r['min_s']:7.3f}s {r['cpu_median_s']:7.3f}s "
              f"{r['median_s'] / baseline:10.1f}  {heavy}")
    if args.json is not None:
        args.json.write_text(json.dumps({"load_average": list(load), "cores": os.cpu_count(), "repeat": args.repeat,
                                         "python": sys.version.split()[0], "jobs": rows}, indent=2) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
