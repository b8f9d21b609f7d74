"""Who the preregistered rules exclude in rehearsals of the pairwise template (`humeval init`, 24 items): a crowd of
cheap clickers only, and the default crowd (10 % spammers, 10 % first clickers, 10 % straight-liners).

    python benchmarks/bench_cheap_clickers.py [--seeds 1 2 3]

Per rehearsal and kind of participant (honest, spam, first, straight): how many took part, how many were
excluded (by any rule, by same-side, by attention), and the attention checks failed per expected side. The kind
comes from the rehearsal's own seeded pool (participant i is pool member i mod size).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import pandas as pd

from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.rehearsal import Population, rehearse
from humeval.rehearsal.participants import Answerer, AnswerKey
from humeval.study import StudyFolder
from humeval.templates import init_study

CROWDS = {"cheap-only": Population(spammer_share=0.0, first_share=0.5, straight_share=0.5, size=20),
          "default": Population()}


def one(root: Path, population: Population, seed: int) -> tuple[dict[str, list[int]], list[dict]]:
    init_study(root, "pairwise")  # as `humeval init` writes it: 24 items, lists of 8 pair tasks
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    result = rehearse(study, kind="crowd", population=population, seed=seed, concurrency=1)  # one at a time: the same run every time
    frame = pd.read_json(result.workspace / "judgements.jsonl", lines=True)
    rows = [json.loads(line) for line in (result.workspace / "excluded.jsonl").read_text().splitlines() if line]
    rules: dict[str, set[str]] = {}
    for r in rows:
        if r["scope"] == "participant":
            rules.setdefault(r["participant_id"], set()).add(r["rule"])
    answerer = Answerer(study.protocol, AnswerKey({}, {}), "crowd", [], population, seed=seed)
    table: dict[str, list[int]] = {}
    for pid in sorted(frame["participant_id"].unique()):
        who = answerer.participant(int(pid.rsplit("-", 1)[1]) - 1)
        kind = "spam" if who.spammer else who.strategy or "honest"
        got = rules.get(pid, set())
        row = table.setdefault(kind, [0, 0, 0, 0])
        for k, hit in enumerate((True, bool(got), "same-side" in got, "attention" in got)):
            row[k] += int(hit)
    counts = json.loads((result.workspace / "exclusion.json").read_text())
    return table, counts.get("attention_checks", [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    print("crowd       seed  kind      took part  excluded  same-side  attention   checks failed/asked")
    for name, population in CROWDS.items():
        for seed in args.seeds:
            with tempfile.TemporaryDirectory() as tmp:
                table, checks = one(Path(tmp) / "study", population, seed)
            shown = ", ".join(f"{c['expected']}: {c['failed']}/{c['answered']}" for c in checks)
            for kind, (n, excluded, side, attention) in sorted(table.items()):
                print(f"{name:<11} {seed:>4}  {kind:<8} {n:>10} {excluded:>9} {side:>10} {attention:>10}   {shown}")


if __name__ == "__main__":
    main()
