"""``humeval reproduce thomson-dummy``: Table 2 of Thomson & Belz (2025), dummy experiments.

The paper's example (section 4): WebNLG categories Airport, Building, City x triple sizes
1-4 = 12 property combinations, 15 items each (180 items), 3 systems (A, B, C), 6
judgements per output on a 5-point grammaticality scale, 90 participants x 36 items (one
output of every property combination from every system) = 3,240 judgements; exclusion of
participants who gave the same score to all 36 outputs; Kruskal-Wallis (the normality
test rejects) and Krippendorff's alpha (ordinal).

We build that study in a temporary folder and run the real pipeline on it: ``sample``,
participant lists as the paper describes them, ``lock``, then ``dry-run``, which pushes
Random, Static (A=2, B=3, C=4) and Normal (sd 1.0, rounded and clipped) dummy judgements
through collate, exclude, analyze and report. Dummy data are random, so Random and Normal
match the paper in kind, not to the digit; Static is exact (H = N - 1, alpha = 1).
"""

from __future__ import annotations

import statistics
import tempfile
from itertools import product
from pathlib import Path
from typing import Any

from humeval.design.tasks import ParticipantList, Task
from humeval.files import read_json, write_jsonl, write_text
from humeval.pipeline import run_stage
from humeval.protocol.load import PROTOCOL_FILE
from humeval.protocol.lock import lock_study
from humeval.rehearsal.dry_run import dry_run_dir
from humeval.reproduce import Reproduction, Row
from humeval.rng import as_generator
from humeval.study import Study

__all__ = ["PAPER", "paper_lists", "thomson_dummy", "write_study"]

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

_PROTOCOL = """\
version: 1
study:
  name: thomson-dummy
  description: Dummy experiments of Thomson & Belz (2025), section 4 (WebNLG 2017 example, placeholder texts).
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
  method: all
design:
  judgements_per_item: {judgements}
  items_per_participant: 36
  counterbalancing: random
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


def _item(combination: int, k: int) -> str:
    return f"c{combination:02d}-i{k:02d}"


def paper_lists(seed: int) -> tuple[list[Task], list[ParticipantList]]:
    """Tasks and the 90 participant lists of section 4.1.

    In round r (r = 0..5) list j (j = 0..14) gets, for every property combination c and
    system k, item ``(j + 5k + r) mod 15`` of c shown with system k: 36 distinct items, one
    per (combination, system); over a round every (item, system) appears once, so after 6
    rounds each output has 6 judgements from 6 different lists. Order within a list is
    shuffled (seeded).
    """
    rng = as_generator(seed)
    tasks = {}
    for c, k, i in product(range(12), range(3), range(ITEMS_PER_COMBINATION)):
        item, system = _item(c, i), SYSTEMS[k]
        tasks[(item, system)] = Task(f"{item}|{system}|grammaticality", item, (system,), ("grammaticality",), "single")
    lists = []
    for r in range(JUDGEMENTS):
        for j in range(ITEMS_PER_COMBINATION):
            chosen = [tasks[(_item(c, (j + 5 * k + r) % ITEMS_PER_COMBINATION), SYSTEMS[k])]
                      for c in range(12) for k in range(3)]
            chosen = [chosen[i] for i in rng.permutation(len(chosen))]
            lists.append(ParticipantList(f"L{len(lists) + 1:04d}", r, chosen))
    return list(tasks.values()), lists


def write_study(root: Path, seed: int, bootstrap: int) -> Study:
    """The paper's study: protocol, placeholder outputs, selected items, lists; locked."""
    rows = [{"item_id": _item(c, i), "system": s, "output": "Example Text", "input": f"{cat} triples, size {size}",
             "category": cat, "size": size}
            for c, (cat, size) in enumerate(product(CATEGORIES, SIZES))
            for i in range(ITEMS_PER_COMBINATION) for s in SYSTEMS]
    write_jsonl(root / "data" / "outputs.jsonl", rows)
    write_text(root / PROTOCOL_FILE, _PROTOCOL.format(seed=seed, judgements=JUDGEMENTS, bootstrap=bootstrap))
    study = Study.open(root)
    run_stage(study, "sample")
    tasks, lists = paper_lists(seed)
    write_jsonl(study.tasks_file, tasks)
    write_jsonl(study.lists_file, lists)
    lock_study(study)
    return study


def _run(seed: int, bootstrap: int) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="humeval-thomson-") as tmp:
        study = write_study(Path(tmp), seed, bootstrap)
        run_stage(study, "dry-run")
        out = {}
        for kind in PAPER:
            results = study.results(f"dry-run/{kind}")
            exclusion = read_json(dry_run_dir(study, kind) / "exclusion.json")
            g = results.criteria["grammaticality"]
            alpha = next(a for a in g.agreement if a["measure"] == "krippendorff")
            out[kind] = {"H": g.omnibus.estimate, "p": g.omnibus.p_value, "alpha": alpha.estimate,
                         "alpha_ci": (alpha.ci_low, alpha.ci_high), "test": g.omnibus.method,
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
