"""A study's pairwise votes as FastChat battle logs: the fields, exclusions, and a round trip through the readers
(``humeval.stats.read_battles`` and ``humeval arena replay``'s ``read_arena_votes``) with equal counts."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from humeval.arena import (
    BATTLE_LOG_COLUMNS,
    battle_log,
    counts_from_battles,
    read_arena_votes,
    study_battle_log,
    write_battle_log,
)
from humeval.errors import DataError
from humeval.formats.external import read_judgement_file
from humeval.pipeline import run_stage
from humeval.stats import read_battles
from humeval.study import StudyFolder
from humeval.templates import init_study
from tests.cli import humeval
from tests.unit.analysis.conftest import make_protocol, rows


def _votes() -> tuple[pd.DataFrame, object]:
    protocol = make_protocol(systems=["X", "Y", "Z"],
                             criteria=[{"name": "q", "type": "2afc", "question": "Which?", "tie": True,
                                        "both_good": True, "both_bad": True},
                                       {"name": "r", "type": "likert", "question": "How good?", "points": 5}])
    choices = ["A", "B", "tie", "both-good", "both-bad", "A"]
    frame = rows([{"participant_id": f"p{k % 2}", "item_id": f"i{k}", "system": "XYZ"[k % 3],
                   "system_b": "XYZ"[(k + 1) % 3], "choice": c, "submitted_at": f"2026-01-01T00:00:0{k}+00:00"}
                  for k, c in enumerate(choices)]
                 + [{"participant_id": "p0", "item_id": "i0", "system": "X", "criterion": "r", "value": 3.0}]
                 + [{"participant_id": "p1", "item_id": "i9", "system": "X", "system_b": "Y", "choice": "A",
                     "kind": "attention", "submitted_at": "2026-01-01T00:00:09+00:00"}])
    return frame, protocol


def test_fields_and_winners() -> None:
    frame, protocol = _votes()
    log = battle_log(frame, protocol)
    assert list(log.columns) == ["question_id", "model_a", "model_b", "winner", "judge", "turn", "anony", "tstamp",
                                 "criterion", "task_id"]
    assert log["winner"].tolist() == ["model_a", "model_b", "tie", "tie", "tie (bothbad)", "model_a"]
    assert log["model_a"].tolist()[:2] == ["X", "Y"] and log["model_b"].tolist()[:2] == ["Y", "Z"]
    assert log["tstamp"].iloc[0] == pd.Timestamp("2026-01-01T00:00:00Z").timestamp()
    assert set(log["criterion"]) == {"q"} and log["judge"].tolist()[:2] == ["p0", "p1"]
    assert len(battle_log(frame, protocol, everything=True)) == 7  # the attention check kept as given
    excluded = pd.DataFrame([{"scope": "participant", "participant_id": "p1", "task_id": "", "criterion": "",
                              "system": "", "rule": "attention", "detail": ""}])
    assert battle_log(frame, protocol, excluded)["judge"].unique().tolist() == ["p0"]


def test_a_prompt_column_only_when_some_vote_was_on_a_prompt_not_the_datas(tmp_path: Path) -> None:
    frame, protocol = _votes()
    assert "prompt" not in battle_log(frame, protocol)  # every vote on the data's prompt: FastChat's fields only
    typed = '=HYPERLINK("x") and a "quoted", multi-line\nprompt'
    pairwise = frame.index[frame["criterion"] == "q"]
    frame["prompt"], frame["prompt_source"] = "", ""
    frame.loc[pairwise[1], ["prompt", "prompt_source"]] = [typed, "typed"]
    frame.loc[pairwise[3], ["prompt", "prompt_source"]] = ["a prompt of the file", "file"]
    log = battle_log(frame, protocol)
    assert list(log.columns) == list(BATTLE_LOG_COLUMNS)  # the column last, as documented
    assert log["prompt"].tolist() == ["", typed, "", "a prompt of the file", "", ""]  # data prompts: empty
    back = read_battles(write_battle_log(log, tmp_path / "battles.jsonl"))
    assert back["prompt"].fillna("").tolist() == log["prompt"].tolist()  # kept through the readers, exactly
    judged = read_judgement_file(tmp_path / "battles.jsonl", "fastchat")  # and through `humeval import`
    assert judged["prompt"].tolist() == log["prompt"].tolist()
    assert judged["prompt_source"].tolist() == ["", "log", "", "log", "", ""]
    with (write_battle_log(log, tmp_path / "battles.csv")).open(newline="", encoding="utf-8") as f:
        cells = [row["prompt"] for row in csv.DictReader(f)]
    assert cells[1] == "'" + typed and cells[3] == "a prompt of the file"  # no spreadsheet runs a typed prompt


def test_refusals() -> None:
    frame, protocol = _votes()
    with pytest.raises(DataError, match="criterion 'r' is not pairwise; pairwise criteria: \\['q'\\]"):
        battle_log(frame, protocol, criterion="r")
    with pytest.raises(DataError, match="unknown criterion 'nope'"):
        battle_log(frame, protocol, criterion="nope")
    with pytest.raises(DataError, match="no pairwise criterion"):
        battle_log(frame, make_protocol())
    with pytest.raises(DataError, match="unknown battle log format"):
        write_battle_log(battle_log(frame, protocol), Path("x.txt"))


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_round_trip_through_the_readers(tmp_path: Path, suffix: str) -> None:
    frame, protocol = _votes()
    log = battle_log(frame, protocol)
    path = write_battle_log(log, tmp_path / f"battles{suffix}")
    if suffix == ".json":  # FastChat's clean_battle file is one JSON array of objects
        assert isinstance(json.loads(path.read_text()), list)
    if suffix != ".csv":
        back = read_battles(path)
        assert back[["model_a", "model_b", "winner"]].equals(log[["model_a", "model_b", "winner"]])
        counts = read_arena_votes(path)
        assert counts.votes == len(log)


def test_a_dry_run_exported_and_read_back_by_arena_replay(tmp_path: Path) -> None:
    root = tmp_path / "study"
    init_study(root, "pairwise", items=12, seed=2)
    text = (root / "humeval.yaml").read_text()
    (root / "humeval.yaml").write_text(text.replace("rankings: [bradley-terry]",
                                                    "rankings: [bradley-terry, style-controlled]\n  bootstrap: 100"))
    study = StudyFolder.open(root)
    for stage in ("sample", "design", "dry-run"):
        run_stage(study, stage)
    out = tmp_path / "battles.json"
    res = humeval("arena", "export", root, "--dry-run", "normal", "--output", out, expect=0)
    assert "votes of 1 criterion(s)" in res.stderr
    normal = root / "results" / "dry-run" / "normal"
    analysed = json.loads((normal / "results.json").read_text())["counts"]["analysed"]
    memory = study_battle_log(study, results=normal)
    counts, direct = read_arena_votes(out), counts_from_battles(memory)
    # equal counts: the votes the analysis used, per pair (wins of each, ties, both bad), after the file and back
    assert counts.votes == len(memory) == len(read_battles(out)) == analysed > 0
    assert counts.models == direct.models
    np.testing.assert_array_equal(counts.pairs, direct.pairs)
    np.testing.assert_array_equal(counts.counts, direct.counts)
    judged = pd.read_json(normal / "judgements.jsonl", lines=True)
    assert len(study_battle_log(study, everything=True, results=normal)) == len(judged)  # every row is a vote
    results = json.loads((normal / "results.json").read_text())
    ranking = next(iter(results["criteria"].values()))["rankings"]
    assert set(ranking) == {"bradley-terry", "style-controlled"}
    assert ranking["style-controlled"].get("undefined") is None, ranking["style-controlled"].get("undefined")
    assert "Style control (style-controlled)" in (normal / "report.md").read_text()
    assert np.isfinite([r["estimate"] for r in ranking["style-controlled"]["systems"]]).all()
