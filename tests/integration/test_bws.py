"""A best-worst scaling study runs through the design (balanced tuples), a rehearsal (simulated participants over the
real server and store) and the report, which shows the counting scores and the MaxDiff fit with their intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from humeval.files import write_jsonl
from humeval.judgements import read_judgements
from humeval.lock import lock_study
from humeval.pipeline import run
from humeval.rehearsal import rehearse
from humeval.results import Results
from humeval.study import StudyFolder

pytestmark = pytest.mark.timeout(300)

SYSTEMS = ["alpha", "beta", "gamma", "delta"]
YAML = """
version: 1
study: {{name: bws, seed: 5}}
data: {{files: [data/outputs.jsonl]}}
systems: [alpha, beta, gamma, delta]
criteria:
  - {{name: quality, type: bws, question: "Which summary is the best, and which the worst?", tuple_size: 3}}
presentation: {{title: Summaries, language: {language}}}
design: {{judgements_per_item: {per_item}, items_per_participant: {per_participant}, counterbalancing: none}}
analysis: {{bootstrap: 200}}
dry_run: {{static: {{alpha: 0.9, beta: 0.6, gamma: 0.4, delta: 0.1}}}}
platform: {{kind: local, completion_code: DONE-BWS}}
"""
WORDS = ["The", "council", "voted", "to", "extend", "the", "tram", "line", "north"]


def bws_study(root: Path, *, items: int = 6, per_item: int = 2, per_participant: int = 8,
              language: str = "en") -> StudyFolder:
    """Four systems' summaries of ``items`` articles, judged in tuples of three (4 tuples an item, the cyclic design),
    each tuple ``per_item`` times."""
    rows = [{"item_id": f"item-{i}", "system": s, "input": f"Article {i}.",
             "output": " ".join(WORDS[: 4 + (i + k) % 5]) + f" ({s})"}
            for i in range(items) for k, s in enumerate(SYSTEMS)]
    write_jsonl(root / "data" / "outputs.jsonl", rows)
    (root / "humeval.yaml").write_text(YAML.format(language=language, per_item=per_item,
                                                  per_participant=per_participant), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


def test_bws_design_rehearsal_and_report(tmp_path: Path) -> None:
    study = bws_study(tmp_path / "bws")
    tasks = [t for t in study.read_tasks() if t.kind == "task"]
    assert len(tasks) == 6 * 4 and all(len(t.systems) == 3 for t in tasks)
    appearances = {s: sum(s in t.systems for t in tasks) for s in SYSTEMS}
    assert set(appearances.values()) == {18}  # each system 3 times an item
    rehearse(study, kind="normal", seed=3, concurrency=4)  # static scores noised: every system wins and loses
    out = study.results_dir / "rehearsal"
    rows = read_judgements(out / "judgements.jsonl")
    rows = rows[rows["criterion"] == "quality"]
    assert len(rows) == 24 * 2 * 3  # a row per output shown
    per = rows.groupby(["participant_id", "task_id"])["value"]
    assert (per.max() == 1).all() and (per.min() == -1).all() and (per.sum() == 0).all()
    res = Results.read(out / "results.json").criteria["quality"]
    counts = res.rankings["bws-counts"]
    # (best - worst) / appearances, counted from the exported rows
    by_hand = rows.groupby("system")["value"].sum() / rows.groupby("system").size()
    assert {r.system for r in counts.systems} == set(SYSTEMS) and counts.extra["unit"] == "participants"
    for r in counts.systems:
        assert r.estimate == pytest.approx(by_hand[r.system])
        assert r.ci_low <= r.estimate <= r.ci_high
    assert counts.systems[0].system in ("alpha", "beta") and counts.systems[-1].system == "delta"
    fit = res.rankings["maxdiff"]
    assert fit.undefined is None and fit.battles == 48 * 3  # 2N - 3 = 3 implied pairs a judgement
    assert all(r.ci_low <= r.estimate <= r.ci_high for r in fit.systems)
    assert fit.systems[-1].system == "delta"
    means = {d.system: d.estimate for d in res.descriptives}
    assert np.allclose([means[s] for s in SYSTEMS], [by_hand[s] for s in SYSTEMS])
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Ranking: bws-counts" in report and "Ranking: maxdiff" in report and "(bws)" in report
