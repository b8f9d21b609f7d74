"""``humeval budget`` with a judge: the human labels it saves at the study's precision, from a pilot, by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from humeval import init_study, run
from humeval.costs import budget
from humeval.judgements import JUDGEMENT_COLUMNS
from humeval.study import StudyFolder
from tests.cli import humeval


def _study(root: Path) -> tuple[StudyFolder, pd.DataFrame]:
    init_study(root, "rating", items=60)
    path = root / "humeval.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["sampling"] = {"method": "random", "rate": 0.5}
    doc["data"]["judges"] = [{"name": "bertscore", "file": "data/bertscore.csv", "criteria": ["fluency"]}]
    doc["analysis"]["judges"] = ["bertscore"]
    doc.setdefault("pay", {})["seconds_per_task"] = 10
    doc["pay"]["hourly"] = 9.0
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    outputs = pd.read_json(root / "data" / "outputs.jsonl", lines=True)
    rng = np.random.default_rng(11)
    quality = rng.normal(0, 1, len(outputs))
    outputs.assign(score=0.87 + 0.02 * (0.8 * quality + 0.6 * rng.normal(0, 1, len(outputs))))[
        ["item_id", "system", "score"]].to_csv(root / "data" / "bertscore.csv", index=False)
    # a pilot: two raters scored the first 20 items of every system, around the quality the judge sees
    truth = outputs.assign(q=quality)
    rows = []
    for r in ("p1", "p2"):
        for o in truth[truth["item_id"].isin(sorted(truth["item_id"].unique())[:20])].itertuples():
            value = float(np.clip(np.round(3 + 1.2 * o.q + rng.normal(0, 0.5)), 1, 5))
            rows.append({"participant_id": r, "task_id": f"{o.item_id}:{o.system}", "kind": "task", "item_id": o.item_id,
                         "criterion": "fluency", "system": o.system, "value": value})
    pilot = pd.DataFrame(rows).reindex(columns=JUDGEMENT_COLUMNS)
    return StudyFolder.open(root), pilot


def test_labels_saved_from_a_pilot_hand_computed(tmp_path: Path) -> None:
    study, pilot = _study(tmp_path / "s")
    list(run(study))
    pilot_path = tmp_path / "pilot.jsonl"
    pilot.to_json(pilot_path, orient="records", lines=True)
    b = budget(study, pilot=pilot_path)
    (saving,) = b.judges
    # by hand: per output the mean of the two raters, centred within each system, against the judge's centred scores
    judge = pd.read_csv(study.root / "data" / "bertscore.csv").set_index(["system", "item_id"])["score"]
    human = pilot.assign(v=pilot["value"].astype(float)).groupby(["system", "item_id"])["v"].mean()
    j = judge.loc[human.index]
    hc = human - human.groupby(level=0).transform("mean")
    jc = j - j.groupby(level=0).transform("mean")
    rho = float(np.corrcoef(hc, jc)[0, 1])
    assert saving.rho == pytest.approx(rho, abs=1e-12) and saving.pilot_labels == len(human) == 60
    z = math.atanh(rho)
    assert saving.rho_low == pytest.approx(math.tanh(z - 1.959963984540054 / math.sqrt(57)))
    n_design = len({t.item_id for pl in study.read_lists() for t in pl.tasks if t.kind == "task"})
    assert n_design == 30 and saving.labels_without == 30 and saving.items == 60
    assert saving.precision == pytest.approx(1.959963984540054 * np.std(hc, ddof=1) / math.sqrt(30))
    expected = 30 * (1 - rho**2) / (1 - rho**2 * 30 / 60)
    assert saving.labels_with == pytest.approx(expected)
    assert saving.labels_with_high > saving.labels_with > saving.labels_with_low  # a weaker judge needs more
    # a precision asked for: n_h = (z sigma / h)^2
    asked = budget(study, pilot=pilot_path, precision=0.2).judges[0]
    assert asked.labels_without == pytest.approx((1.959963984540054 * np.std(hc, ddof=1) / 0.2) ** 2)
    # the CLI: json carries the records, the table prints them
    out = humeval("budget", study.root, "--pilot", pilot_path, "--format", "json", expect=0)
    record = json.loads(out.stdout)["judges"][0]
    assert record["judge"] == "bertscore" and record["saved_share"] == pytest.approx(1 - expected / 30)
    table = humeval("budget", study.root, "--pilot", pilot_path, expect=0)
    assert "labels with judge" in table.stdout and "bertscore" in table.stdout


def test_without_a_pilot_the_budget_says_so(tmp_path: Path) -> None:
    study, _ = _study(tmp_path / "s")
    list(run(study))
    b = budget(study)
    assert b.judges == [] and any("no pilot with human judgements" in n for n in b.notes)


def test_pairwise_verdicts_from_a_pilot(tmp_path: Path) -> None:
    root = tmp_path / "p"
    init_study(root, "pairwise", items=40, seed=2)
    path = root / "humeval.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["sampling"] = {"method": "random", "rate": 0.5}
    doc["data"]["judges"] = [{"name": "llm", "file": "data/verdicts.csv", "kind": "verdicts"}]
    doc["analysis"]["judges"] = ["llm"]
    doc.setdefault("pay", {})["seconds_per_task"] = 10
    doc["pay"]["hourly"] = 9.0
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    study = StudyFolder.open(root)
    list(run(study))
    a, b = sorted(study.outputs().systems)[:2]
    items = sorted(study.outputs().frame["item_id"].unique())
    rng = np.random.default_rng(5)
    truth = rng.random(len(items)) < 0.6  # a better on 60 % of the items
    judge_says = np.where(rng.random(len(items)) < 0.85, truth, ~truth)  # the judge agrees 85 % of the time
    pd.DataFrame({"item_id": items, "system_a": a, "system_b": b,
                  "winner": np.where(judge_says, a, b)}).to_csv(root / "data" / "verdicts.csv", index=False)
    rows = [{"participant_id": p, "task_id": f"t{i}", "kind": "task", "item_id": item, "criterion": "quality",
             "system": a, "system_b": b, "choice": "A" if truth[i] else "B"}
            for i, item in enumerate(items[:24]) for p in ("p1", "p2")]
    pilot = tmp_path / "pilot.jsonl"
    pd.DataFrame(rows).reindex(columns=JUDGEMENT_COLUMNS).to_json(pilot, orient="records", lines=True)
    (saving,) = budget(study, pilot=pilot).judges
    human = truth[:24].astype(float)
    judged = judge_says[:24].astype(float)
    assert saving.pilot_labels == 24 and saving.rho == pytest.approx(np.corrcoef(human, judged)[0, 1])
    assert saving.labels_without == 20 and saving.items == 40
    rho2 = saving.rho**2
    assert saving.labels_with == pytest.approx(20 * (1 - rho2) / (1 - rho2 * 20 / 40)) and saving.labels_with < 20
