"""``humeval reproduce thomson-design`` and ``thomson-dummy``: the example study of Thomson & Belz (2025).

The paper's example (section 4.1): WebNLG categories Airport, Building, City x triple sizes
1-4 = 12 property combinations; stratified sampling selects 15 items per combination (180
items), 3 systems (A, B, C), 6 judgements per output on a 5-point grammaticality scale,
each participant rates 36 items "(1 of each property combination for each system)": "a
total of 3,240 total judgments, obtained from 90 distinct participants" (section 4.1,
second paragraph; 12 x 15 x 3 = 540 outputs x 6 = 3,240 judgements, / 36 = 90 lists).
Exclusion of participants who gave the same score to all 36 outputs (4.2);
Kruskal-Wallis (the normality test rejects) and Krippendorff's alpha, ordinal (4.5).

We build that study in a temporary folder and run the real pipeline on it: ``sample``
(stratified by category and size, equal allocation, from a pool of 20-30 placeholder
items per combination, "Example Text" as in the paper), ``design`` (``design.balance:
[category, size]``: the balanced lists), ``lock``; ``thomson-design`` counts and checks
the lists of two runs with the same seed; ``thomson-dummy`` then runs ``dry-run``, which
pushes Random, Static (A=2, B=3, C=4) and Normal (sd 1.0, rounded and clipped) dummy
judgements through collate, exclude, analyze and report (Table 2). Dummy data are random,
so Random and Normal match the paper in kind, not to the digit; Static is exact (H = N - 1,
alpha = 1).
"""

from __future__ import annotations

import statistics
import tempfile
from collections import Counter
from itertools import product
from pathlib import Path
from typing import Any

from humeval.errors import DataError
from humeval.files import read_json, write_jsonl, write_text
from humeval.hashing import sha256_file
from humeval.lock import lock_study
from humeval.pipeline import run_stage
from humeval.protocol.load import PROTOCOL_FILE
from humeval.reproduce import Reproduction, Row
from humeval.stages.dry_run import dry_run_dir
from humeval.study import StudyFolder

__all__ = ["DESIGN_PAPER", "PAPER", "design_counts", "thomson_design", "thomson_dummy", "write_study"]

CATEGORIES = ("Airport", "Building", "City")
SIZES = (1, 2, 3, 4)
SYSTEMS = ("A", "B", "C")
ITEMS_PER_COMBINATION = 15
JUDGEMENTS = 6

#: Table 2 of the paper: Kruskal-Wallis statistic, its p-value and Krippendorff's alpha (ordinal)
PAPER: dict[str, dict[str, Any]] = {
    "random": {"H": 0.89, "p": 0.64, "alpha": 0.01},
    "static": {"H": 3239.00, "p": "< 0.001", "alpha": 1.00},
    "normal": {"H": 1282.57, "p": "< 0.001", "alpha": 0.40},
}

#: section 4.1 of the paper: what the design must give (stated: combinations, items per
#: combination, systems, judgements per item, items per participant, 3,240 judgements,
#: 90 participants; derived: 12 x 15 = 180 selected items)
DESIGN_PAPER: dict[str, Any] = {
    "property combinations": 12,
    "selected items": 180,
    "items per combination": 15,
    "systems": 3,
    "items per participant": 36,
    "judgements per output": 6,
    "participant lists": 90,
    "assignments (judgements)": 3240,
    "lists with one item per combination and system": 90,
}

_PROTOCOL = """\
version: 1
study:
  name: thomson-example
  description: The example experiment of Thomson & Belz (2025), section 4 (WebNLG 2017 categories, placeholder texts).
  seed: {seed}
data:
  files: [data/outputs.jsonl]
  properties: [category, size]
systems: [A, B, C]
criteria:
  - name: grammaticality
    type: likert
    points: 5
    question: How grammatical is this text?
sampling:
  method: stratified
  rate: {rate}
  params: {{by: [category, size], allocation: equal}}
design:
  judgements_per_item: {judgements}
  items_per_participant: 36
  counterbalancing: random
  balance: [category, size]
exclusion:
  - rule: straight-lining
    min_tasks: 36
analysis:
  alpha: 0.05
  tests: auto
  correction: holm
  agreement: [krippendorff]
  agreement_level: ordinal
  rankings: [mean]
  bootstrap: {bootstrap}
dry_run:
  static: {{A: 2, B: 3, C: 4}}
  sd: 1.0
platform:
  kind: files
  source: Amazon Mechanical Turk (the paper's 2019 study; MTurk closed on 2026-09-30)
"""


def _pool_size(combination: int) -> int:
    """Items available per combination (20-30, unequal, so that the selection has to stratify)."""
    return 20 + (7 * combination) % 11


def write_study(root: Path, seed: int, bootstrap: int = 1000) -> StudyFolder:
    """The paper's study, sampled, designed and locked through the pipeline."""
    rows = [{"item_id": f"c{c:02d}-i{i:02d}", "system": s, "output": "Example Text",
             "input": f"{cat} triples, size {size}", "category": cat, "size": size}
            for c, (cat, size) in enumerate(product(CATEGORIES, SIZES))
            for i in range(_pool_size(c)) for s in SYSTEMS]
    write_jsonl(root / "data" / "outputs.jsonl", rows)
    pool = sum(_pool_size(c) for c in range(len(CATEGORIES) * len(SIZES)))
    rate = len(CATEGORIES) * len(SIZES) * ITEMS_PER_COMBINATION / pool
    write_text(root / PROTOCOL_FILE, _PROTOCOL.format(seed=seed, judgements=JUDGEMENTS, bootstrap=bootstrap, rate=repr(rate)))
    study = StudyFolder.open(root)
    run_stage(study, "sample")
    run_stage(study, "design")
    lock_study(study)
    return study


def design_counts(study: StudyFolder) -> dict[str, Any]:
    """What the design stage built, counted from the study's files (the numbers of section 4.1)."""
    frame = study.outputs().frame.drop_duplicates("item_id").set_index("item_id")
    combo = frame["category"].astype(str) + "|" + frame["size"].astype(str)
    tasks = study.read_tasks()
    lists = study.read_lists(tasks)
    selected = {t.item_id for t in tasks}
    per_combination = Counter(combo[i] for i in selected)
    judged = Counter(t.task_id for pl in lists for t in pl.tasks if t.kind == "task")
    balanced = 0
    for pl in lists:
        cells = [(combo[t.item_id], t.systems[0]) for t in pl.tasks if t.kind == "task"]
        items = [t.item_id for t in pl.tasks if t.kind == "task"]
        full = {(c, s) for c in per_combination for s in SYSTEMS}
        balanced += len(cells) == len(full) and set(cells) == full and len(set(items)) == len(items)
    per_list = {len([t for t in pl.tasks if t.kind == "task"]) for pl in lists}
    return {
        "property combinations": len(per_combination),
        "selected items": len(selected),
        "items per combination": sorted(set(per_combination.values())),
        "systems": len({t.systems[0] for t in tasks}),
        "items per participant": sorted(per_list),
        "judgements per output": sorted(set(judged.values())),
        "participant lists": len(lists),
        "assignments (judgements)": sum(judged.values()),
        "lists with one item per combination and system": balanced,
    }


def _one(values: list[Any]) -> Any:
    return values[0] if len(values) == 1 else values


def thomson_design(iterations: int | None = None, seed: int = 0, fast: bool = False) -> Reproduction:
    """Section 4.1 (paper vs ours): the stratified selection and balanced lists, built twice with one seed.

    ``iterations`` and ``fast`` are accepted for the common ``reproduce`` interface; the
    design is exact, so there is nothing to repeat.
    """
    hashes, counts = [], {}
    for run in range(2):
        with tempfile.TemporaryDirectory(prefix="humeval-thomson-design-") as tmp:
            study = write_study(Path(tmp), seed)
            if run == 0:
                counts = design_counts(study)
            hashes.append((sha256_file(study.items_file), sha256_file(study.lists_file)))
    rows = []
    for key, paper in DESIGN_PAPER.items():
        ours = counts[key]
        ours = _one(ours) if isinstance(ours, list) else ours
        rows.append(Row(key, paper, ours, "", match=ours == paper))
    same = hashes[0] == hashes[1]
    rows.append(Row("identical for the same seed (items and lists, SHA-256)", "yes", "yes" if same else "no",
                    f"lists sha256 {hashes[0][1][:12]}", match=same))
    return Reproduction("thomson-design", rows, {"seed": seed, "runs": 2})


def _run(seed: int, bootstrap: int) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="humeval-thomson-") as tmp:
        study = write_study(Path(tmp), seed, bootstrap)
        run_stage(study, "dry-run")
        out = {}
        for kind in PAPER:
            results = study.results(f"dry-run/{kind}")
            exclusion = read_json(dry_run_dir(study, kind) / "exclusion.json")
            g = results.criteria["grammaticality"]
            alpha = next(a for a in g.agreement if a.measure == "krippendorff")
            omnibus = g.omnibus
            if omnibus is None:
                raise DataError(f"reproduce thomson: the {kind} dry run has no omnibus test of grammaticality")
            out[kind] = {"H": omnibus.estimate, "p": omnibus.p_value, "alpha": alpha.estimate,
                         "alpha_ci": (alpha.ci_low, alpha.ci_high), "test": omnibus.method,
                         "family": g.family, "n": g.judgements,
                         "excluded": exclusion["participants_excluded"], "signature": results.signature}
        return out


def _fmt_p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.2f}"


def _spread(values: list[float]) -> str:
    if len(values) < 2:
        return ""
    return f"; over {len(values)} seeds mean {statistics.fmean(values):.2f}, sd {statistics.stdev(values):.2f}"


def thomson_dummy(iterations: int | None = None, seed: int = 0, fast: bool = False) -> Reproduction:
    """Table 2 (paper vs ours) from dummy runs of the paper's design through the real pipeline.

    ``iterations``: independent dummy runs (seeds ``seed``, ``seed + 1``, ...; default 1,
    as in the paper); the first run is reported, the spread over runs in the note.
    ``fast``: 100 instead of 1000 bootstrap samples for the alpha interval.
    """
    runs = max(1, iterations or 1)
    bootstrap = 100 if fast else 1000
    all_runs = [_run(seed + i, bootstrap) for i in range(runs)]
    first = all_runs[0]
    rows = []
    for kind, paper in PAPER.items():
        ours = first[kind]
        label = kind.capitalize()
        h_all = [r[kind]["H"] for r in all_runs if r[kind]["H"] is not None]
        a_all = [r[kind]["alpha"] for r in all_runs if r[kind]["alpha"] is not None]
        note_h = f"{ours['test']} ({ours['family']}), N = {ours['n']}, {ours['excluded']} participants excluded"
        if kind == "static":
            note_h += "; exact: H = N - 1 when every system has its own constant score"
        rows.append(Row(f"{label}: Kruskal-Wallis H", paper["H"],
                        None if ours["H"] is None else round(ours["H"], 2), note_h + _spread(h_all)))
        rows.append(Row(f"{label}: p-value", paper["p"], None if ours["p"] is None else _fmt_p(ours["p"]), ""))
        lo, hi = ours["alpha_ci"]
        ci = f"95% bootstrap CI [{lo:.2f}, {hi:.2f}]" if lo is not None else "no CI"
        rows.append(Row(f"{label}: Krippendorff alpha (ordinal)", paper["alpha"],
                        None if ours["alpha"] is None else round(ours["alpha"], 2), ci + _spread(a_all)))
    settings = {"seed": seed, "iterations": runs, "bootstrap": bootstrap, "fast": fast,
                "judgements": JUDGEMENTS * 540, "participants": 90, "signature": first["static"]["signature"]}
    return Reproduction("thomson-dummy", rows, settings)
