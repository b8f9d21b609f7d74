"""A rehearsal whose crowd is only cheap clickers (always the output shown first, or one answer to everything):
the preregistered rules exclude every one of them, and the exclusion counts say which rule caught whom."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from humeval.lock import lock_study
from humeval.pipeline import run_stage
from humeval.rehearsal import Population, rehearse
from humeval.rehearsal.participants import Answerer, AnswerKey
from humeval.study import StudyFolder
from humeval.templates import init_study

CRITERIA = """criteria:
  - name: fluency
    type: likert
    question: How fluent is this description?
    points: 5
  - name: quality
"""


def _study(root: Path) -> StudyFolder:
    """The pairwise template over three systems with a Likert criterion beside the pair, fixed design (no stopping),
    two attention checks per list and the attention, same-side and straight-lining rules."""
    init_study(root, "pairwise", items=8, seed=5)
    text = (root / "humeval.yaml").read_text()
    text = text.replace("systems: [baseline, candidate]\n", "systems: [baseline, candidate, reference]\n")
    text = text.replace("criteria:\n  - name: quality\n", CRITERIA)
    start, end = text.index("stopping:"), text.index("crowd:")
    text = text[:start] + text[end:]
    text = text.replace("  items_per_participant: 10\n", "  items_per_participant: 12\n")
    text = text.replace("  attention_checks: 1\n", "  attention_checks: 2\n")
    text = text.replace("exclusion:\n", "exclusion:\n  - rule: same-side\n    min_tasks: 4\n"
                                        "  - rule: straight-lining\n    min_tasks: 3\n")
    text = text.replace("rankings: [bradley-terry]", "rankings: [bradley-terry]\n  bootstrap: 100")
    (root / "humeval.yaml").write_text(text)
    study = StudyFolder.open(root)
    for stage in ("sample", "design"):
        run_stage(study, stage)
    lock_study(study)
    return study


def test_every_cheap_clicker_is_excluded(tmp_path: Path) -> None:
    study = _study(tmp_path / "study")
    population = Population(spammer_share=0.0, first_share=0.5, straight_share=0.5, size=20)
    result = rehearse(study, kind="crowd", population=population, seed=9, concurrency=1)
    frame = pd.read_json(result.workspace / "judgements.jsonl", lines=True)
    excluded = pd.read_json(result.workspace / "excluded.jsonl", lines=True)
    people = sorted(frame["participant_id"].unique())
    assert len(people) == result.participants_active >= 10
    # who was which: the rehearsal's participant i is pool member i mod size (the same seeded pool)
    answerer = Answerer(study.protocol, AnswerKey({}, {}), "crowd", [], population, seed=9)
    strategy = {f"rehearsal-crowd-{i + 1:05d}": answerer.participant(i).strategy for i in range(len(people) + 20)}
    assert {strategy[p] for p in people} == {"first", "straight"}
    by = excluded[excluded["scope"] == "participant"].groupby("participant_id")["rule"].apply(set)
    assert set(by.index) == set(people)  # every cheap clicker is excluded
    firsts = [p for p in people if strategy[p] == "first"]
    # always-first: same-side (their pair tasks: always A, whichever system it showed), and straight-lining (Likert 1)
    assert all({"same-side", "straight-lining"} <= by[p] for p in firsts)
    pairs = frame[(frame["criterion"] == "quality") & (frame["kind"] == "task") & frame["participant_id"].isin(firsts)]
    assert (pairs["choice"] == "A").all() and pairs["system"].nunique() == 3  # the sides were randomised
    counts = json.loads((result.workspace / "exclusion.json").read_text())
    assert counts["participants_excluded"] == len(people)
    rules = {r["rule"]: r["participants"] for r in counts["rules"]}
    assert rules["straight-lining"] == len(people) and rules["same-side"] >= len(firsts)
    checks = {(c["criterion"], c["expected"]): c for c in counts["attention_checks"]}
    # the pairwise checks ask for both sides; first clickers fail every check that asks for B
    assert {e for c, e in checks if c == "quality"} == {"A", "B"}
    asked = {t.task_id: t.expected for pl in study.read_lists() for t in pl.tasks if t.kind == "attention"}
    theirs = frame[(frame["kind"] == "attention") & frame["participant_id"].isin(firsts)]
    asked_b = theirs[theirs["task_id"].map(asked) == "B"]
    assert len(asked_b) > 0 and (asked_b["choice"] == "A").all()
    # the counts per asked answer, recomputed from the judgements
    every = frame[frame["kind"] == "attention"].assign(asked=lambda f: f["task_id"].map(asked))
    every["got"] = every["choice"].where(every["criterion"] == "quality", every["value"].astype(str))
    every["want"] = every["asked"].map(lambda v: v if isinstance(v, str) else str(float(v)))
    for (criterion, want), group in every.groupby(["criterion", "want"]):
        key = (criterion, want if criterion == "quality" else str(int(float(want))))
        assert checks[key]["answered"] == len(group) and checks[key]["failed"] == int((group["got"] != want).sum())
    assert checks[("quality", "B")]["failed"] >= len(asked_b)


def test_the_pairwise_template_excludes_a_cheap_crowd(tmp_path: Path) -> None:
    """The pairwise template as `humeval init` writes it (dynamic stopping, one check per list, attention and
    same-side rules): a crowd of first clickers and straight-liners is excluded whole, and the rule is fed nothing;
    the checks ask for both sides, and those asking B are the ones the first clickers fail."""
    from humeval.pipeline import run

    init_study(tmp_path / "s", "pairwise")  # as `humeval init` writes it: 24 items, lists of 8 pair tasks
    study = StudyFolder.open(tmp_path / "s")
    list(run(study))
    lock_study(study)
    population = Population(spammer_share=0.0, first_share=0.5, straight_share=0.5, size=20)
    result = rehearse(study, kind="crowd", population=population, seed=1, concurrency=1)
    frame = pd.read_json(result.workspace / "judgements.jsonl", lines=True)
    counts = json.loads((result.workspace / "exclusion.json").read_text())
    assert counts["participants_excluded"] == counts["participants_total"] == frame["participant_id"].nunique() > 0
    rules = {r["rule"]: r for r in counts["rules"]}
    assert rules["same-side"]["participants"] == counts["participants_total"]  # 8 pair tasks each, one side
    assert frame["stop_seq"].isna().all()  # excluded before feeding: the rule saw none of it
    checks = {c["expected"]: c for c in counts["attention_checks"]}
    assert set(checks) == {"A", "B"} and abs(checks["A"]["answered"] - checks["B"]["answered"]) <= 1
    # one check per list: each failed check is one participant the attention rule excluded; the checks asking for A
    # let the first clickers through, and same-side catches them
    assert rules["attention"]["participants"] == checks["A"]["failed"] + checks["B"]["failed"] < counts["participants_total"]
