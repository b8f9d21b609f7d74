"""Start-up cost of small jobs: each line a fresh interpreter, the median wall clock of --repeat runs.

    python benchmarks/bench_startup.py [--repeat 7]

Measures ``humeval --version``, ``from humeval.stats import krippendorff_alpha`` (beside
``import krippendorff``, the stand-alone package, when it is installed), the imports of
``humeval simulate``, and the import of the collection server, and says which of pandas,
SciPy, scikit-learn, matplotlib and pyarrow each one loaded. ``python -c pass`` is the floor.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time

HEAVY = ("pandas", "scipy", "sklearn", "matplotlib", "pyarrow")
REPORT = f"import sys, json; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"

JOBS = {
    "python -c pass (floor)": ["-c", "pass"],
    "humeval --version": ["-m", "humeval", "--version"],
    "from humeval.stats import krippendorff_alpha": ["-c", f"from humeval.stats import krippendorff_alpha; {REPORT}"],
    "import krippendorff (the package)": ["-c", f"import krippendorff; {REPORT}"],
    "humeval simulate (its imports)": ["-c", "import humeval.cli.simulate; from humeval.simulate import SimulationConfig, "
                                       f"simulate; {REPORT}"],
    "the collection server (import)": ["-c", f"import humeval.collect, humeval.server.app; {REPORT}"],
}


def run(args: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args()
    rows = []
    for name, job in JOBS.items():
        if name.startswith("import krippendorff") and importlib.util.find_spec("krippendorff") is None:
            continue
        run(job)  # warm the file cache
        times, loaded = [], ""
        for _ in range(args.repeat):
            t, loaded = run(job)
            times.append(t)
        rows.append({"job": name, "median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
                     "heavy_modules": json.loads(loaded) if loaded.startswith("[") else None})
    load = __import__("os").getloadavg()[0]
    if args.json:
        print(json.dumps({"load_average_1min": load, "jobs": rows}, indent=2))
        return 0
    print(f"load average (1 min): {load:.2f}; median / min of {args.repeat} runs")
    for r in rows:
        heavy = "" if r["heavy_modules"] is None else f"  loads: {', '.join(r['heavy_modules']) or 'none of ' + '/'.join(HEAVY)}"
        print(f"{r['job']:<48} {r['median_s']:6.3f} s / {r['min_s']:6.3f} s{heavy}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
