"""A judge declared in the protocol reaches the analysis: locked, validated, prediction-powered, reported."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from humeval import init_study, run, run_stage, validate_study
from humeval.errors import HumevalError
from humeval.judgements import read_judgements
from humeval.lock import lock_study
from humeval.stats import ppi_mean
from humeval.study import StudyFolder


def _study(root: Path, *, judges: list[dict], plan: list[str]) -> StudyFolder:
    init_study(root, "rating", items=40)
    path = root / "humeval.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["sampling"] = {"method": "random", "rate": 0.5}
    doc["data"]["judges"] = judges
    doc["analysis"]["judges"] = plan
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    outputs = pd.read_json(root / "data" / "outputs.jsonl", lines=True)
    rng = np.random.default_rng(3)
    means = {"baseline": 2.0, "candidate": 3.0, "reference": 4.0}
    outputs.assign(score=[means[s] + 0.3 + rng.normal(0, 0.5) for s in outputs["system"]])[
        ["item_id", "system", "score"]].to_csv(root / "data" / "metric.csv", index=False)
    return StudyFolder.open(root)


def test_a_declared_judge_gives_prediction_powered_estimates_through_the_pipeline(tmp_path: Path) -> None:
    study = _study(tmp_path / "s", judges=[{"name": "metric", "file": "data/metric.csv", "criteria": ["fluency"]}],
                   plan=["metric"])
    assert validate_study(study.root) == []
    lock = lock_study(study)
    assert "data/metric.csv" in {i["path"] for i in lock.data["inputs"]}  # the judge's file is locked
    list(run(study))
    run_stage(study, "dry-run")
    ws = study.root / "results" / "dry-run" / "normal"
    results = json.loads((ws / "results.json").read_text())
    assert "judges" not in results["criteria"]["adequacy"]  # the judge stands in for fluency only
    judge = results["criteria"]["fluency"]["judges"]["metric"]
    assert [e["system"] for e in judge["estimates"]] == ["baseline", "candidate", "reference"]
    # recompute one system's estimate from the exported judgements and the judge file
    frame = read_judgements(ws / "judgements.jsonl")
    excluded = {json.loads(x)["participant_id"] for x in (ws / "excluded.jsonl").read_text().splitlines()
                if json.loads(x).get("scope", "participant") == "participant"}
    rows = frame[(frame["criterion"] == "fluency") & (frame["system"] == "candidate") & (frame["kind"] == "task")
                 & ~frame["participant_id"].isin(excluded)]
    human = rows.assign(v=rows["value"].astype(float)).groupby("item_id")["v"].mean()
    metric = pd.read_csv(study.root / "data" / "metric.csv")
    metric = metric[metric["system"] == "candidate"].set_index("item_id")["score"]
    expected = ppi_mean(human.to_numpy(), metric.loc[human.index].to_numpy(),
                        metric.drop(human.index).to_numpy(), confidence_level=0.95, calibrate=True)
    record = judge["estimates"][1]
    assert record["estimate"] == pytest.approx(expected.estimate, abs=1e-12)
    assert (record["ci_low"], record["ci_high"]) == (pytest.approx(expected.ci_low), pytest.approx(expected.ci_high))
    assert record["n_labelled"] == 20 and record["n_unlabelled"] == 20
    assert record["calibration_slope"] == pytest.approx(expected.extra["calibration_slope"])
    assert [c["system"] for c in judge["calibration"]] == ["baseline", "candidate", "reference"]
    tables = pd.read_csv(ws / "tables" / "judges.csv")
    assert set(tables["analysis"]) == {"prediction-powered", "calibration"}
    report = (ws / "report.md").read_text()
    assert "Automatic judges" in report and "metric" in report
    # the labels the judge saves at this study's precision, predicted from its own judgements (as budget does)
    from humeval.judge_budget import judge_savings

    savings, _ = judge_savings(study, ws / "judgements.jsonl")
    assert "Human labels the judges save" in report and savings
    for saving in savings:
        assert saving.row()["rho [95% CI]"] in report and saving.row()["labels with judge"] in report

    # a changed judge file after the lock: the analysis refuses
    (study.root / "data" / "metric.csv").write_text((study.root / "data" / "metric.csv").read_text() + "\n")
    with pytest.raises(HumevalError, match="metric.csv"):
        run_stage(study, "dry-run", force=True)


def test_validate_names_judge_problems(tmp_path: Path) -> None:
    study = _study(tmp_path / "s", judges=[{"name": "metric", "file": "data/metric.csv", "criteria": ["fluncy"]}],
                   plan=["metrc"])
    with (study.root / "data" / "metric.csv").open("a") as fh:
        fh.write("item-9999,baseline,3.0\n")
    problems = "\n".join(validate_study(study.root))
    assert "data.judges[0].criteria[0]: unknown criterion 'fluncy'" in problems
    assert "analysis.judges[0]: unknown judge 'metrc'" in problems and "metric" in problems
    assert "item_id 'item-9999' is not an item of the data" in problems
