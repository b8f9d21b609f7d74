"""Snapshot the outputs of the demo and every template, and compare two snapshots byte for byte.

    python benchmarks/outputs_snapshot.py make DIR            # about 6 minutes on 2 shared cores
    python benchmarks/outputs_snapshot.py compare DIR1 DIR2   # exit 1 when an output differs

A refactor that must not change what users get is checked by making a snapshot before it (from
main) and one after, then comparing them. ``make`` runs, with fixed seeds and one participant
at a time, every ``humeval init`` template plus one study per criterion type the templates do
not show (slider, magnitude, esa, and a joint task of likert + slider), each through
``run``, ``dry-run`` (random, static, normal) and ``rehearse`` (static and crowd), and
``humeval demo``. It keeps every ``results.json``, table (``tables/``) and figure
(``figures/``) under DIR, named by study and run.

``compare`` reads the same files from both snapshots: tables and figures must be equal byte
for byte; ``results.json`` files must be equal as JSON once the values that are not outputs are
set aside: the keys named in ``VOLATILE`` and ISO 8601 times (wall-clock: the lock time, when
judgements were submitted, the seconds a rehearsal took). It prints one line per file that differs and the count of identical files.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

TEMPLATES = ("pairwise", "rating", "rankme", "demo")
KEPT = ("results.json", "tables", "figures")
# keys whose values are wall-clock times, not outputs: the time the study was locked and the
# seconds measured while a rehearsal ran (they differ between two runs of one commit)
VOLATILE = frozenset({"locked_at", "lock_time", "created", "generated_at", "elapsed", "seconds", "wall_seconds",
                      "median_seconds", "seconds_per_task", "minutes_per_list", "duration"})

#: an ISO 8601 time (when a judgement was submitted, when the rule's first outcome arrived): wall-clock, not output
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
_STANDARD = {"text": "Loch Fyne is a family friendly restaurant serving French food."}
# criteria of the studies that show the types the templates do not (on the rating template's data)
VARIANTS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "slider": ("separate", [
        {"name": "fluency", "type": "slider", "question": "How fluent is this description?", "min": 0, "max": 100,
         "low_label": "not at all", "high_label": "perfectly"},
    ]),
    "magnitude": ("separate", [
        {"name": "fluency", "type": "magnitude", "question": "How fluent is it, compared to the standard?",
         "standard": _STANDARD, "modulus": 100},
    ]),
    "esa": ("separate", [
        {"name": "accuracy", "type": "esa", "question": "Mark the errors, then score the description.",
         "low_anchor": "no facts right", "high_anchor": "perfect"},
    ]),
    "joint": ("joint", [
        {"name": "fluency", "type": "likert", "question": "How fluent is this description?", "points": 5},
        {"name": "adequacy", "type": "slider", "question": "How adequate is it?", "min": 0, "max": 10},
    ]),
}
REHEARSALS = ("static", "crowd")


def _humeval(*args: str, cwd: Path) -> None:
    env = {**os.environ, "HUMEVAL_NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "humeval", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"humeval {' '.join(args)} failed in {cwd}:\n{proc.stdout}\n{proc.stderr}")


def _variant(study: Path, setup: str, criteria: list[dict[str, Any]]) -> None:
    path = study / "humeval.yaml"
    protocol = yaml.safe_load(path.read_text())
    protocol["criteria"] = criteria
    protocol["presentation"]["setup"] = setup
    protocol["dry_run"] = {"sd": 1.0}
    path.write_text(yaml.safe_dump(protocol, sort_keys=False))


def _keep(results: Path, into: Path) -> None:
    """Copy every kept output under ``results`` (one folder per run) into ``into``."""
    for found in sorted(results.rglob("results.json")):
        run = found.parent
        if "rehearsal" in run.relative_to(results).parts:
            continue  # kept by its own call, one per rehearsal kind
        target = into / run.relative_to(results)
        target.mkdir(parents=True, exist_ok=True)
        for name in KEPT:
            if (run / name).is_dir():
                shutil.copytree(run / name, target / name)
            elif (run / name).exists():
                shutil.copy2(run / name, target / name)


def make(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=False)
    with tempfile.TemporaryDirectory(prefix="humeval-snapshot-") as tmp:
        work = Path(tmp)
        studies = [(t, t, None) for t in TEMPLATES] + [(name, "rating", v) for name, v in VARIANTS.items()]
        for name, template, variant in studies:
            study = work / name
            _humeval("init", str(study), "--template", template, "--seed", "3", cwd=work)
            if variant is not None:
                _variant(study, *variant)
            _humeval("lock", ".", cwd=study)
            _humeval("run", ".", cwd=study)
            _humeval("dry-run", ".", cwd=study)
            _keep(study / "results", out / name)  # the dry runs
            for kind in REHEARSALS:
                _humeval("rehearse", ".", "--kind", kind, "--concurrency", "1", "--seed", "5", cwd=study)
                _keep(study / "results" / "rehearsal", out / name / f"rehearsal-{kind}")
                shutil.rmtree(study / "results" / "rehearsal")
            print(f"{name}: done", file=sys.stderr)
        _humeval("demo", str(work / "demo-command"), "--items", "24", "--seed", "2", "--concurrency", "1", cwd=work)
        _keep(work / "demo-command" / "results", out / "demo-command")
    print(f"{sum(1 for p in out.rglob('*') if p.is_file())} files in {out}")


def _strip(value: Any) -> Any:
    """``value`` without what a second run of one commit changes: the ``VOLATILE`` keys and wall-clock times."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str) and TIMESTAMP.fullmatch(value):
        return "<time>"
    return value


def _first_difference(a: Any, b: Any, where: str = "") -> str:
    if type(a) is not type(b):
        return f"{where or '/'}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{where}/{key}: only in {'second' if key not in a else 'first'}"
            if a[key] != b[key]:
                return _first_difference(a[key], b[key], f"{where}/{key}")
    if isinstance(a, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{where}/{i}")
    return f"{where or '/'}: {str(a)[:80]} != {str(b)[:80]}"


def compare(first: Path, second: Path) -> int:
    files = sorted({p.relative_to(first) for p in first.rglob("*") if p.is_file()}
                   | {p.relative_to(second) for p in second.rglob("*") if p.is_file()})
    differ = 0
    for rel in files:
        a, b = first / rel, second / rel
        if not a.exists() or not b.exists():
            print(f"{rel}: only in {first if a.exists() else second}")
            differ += 1
        elif rel.name == "results.json":
            x, y = _strip(json.loads(a.read_text())), _strip(json.loads(b.read_text()))
            if x != y:
                print(f"{rel}: {_first_difference(x, y)}")
                differ += 1
        elif a.read_bytes() != b.read_bytes():
            print(f"{rel}: bytes differ")
            differ += 1
    print(f"{len(files) - differ}/{len(files)} identical")
    return 1 if differ else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("make").add_argument("dir", type=Path)
    cmp = sub.add_parser("compare")
    cmp.add_argument("first", type=Path)
    cmp.add_argument("second", type=Path)
    args = ap.parse_args()
    if args.command == "make":
        make(args.dir)
    else:
        raise SystemExit(compare(args.first, args.second))


if __name__ == "__main__":
    main()
