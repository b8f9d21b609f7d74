from __future__ import annotations

import csv
import json

import pandas as pd

from humeval.analysis.collate import collate, rerun_lists, write_rerun
from humeval.data.outputs import Outputs

from .conftest import make_protocol, rating_tasks, rows


def _complete(items=("i1", "i2"), systems=("A", "B"), people=("p1", "p2")) -> pd.DataFrame:
    return rows([{"participant_id": p, "item_id": i, "system": s, "value": 3.0}
                 for p in people for i in items for s in systems])


def test_complete_when_every_task_has_the_required_judgements(protocol):
    tasks = rating_tasks(["i1", "i2"], ["A", "B"])
    result = collate(_complete(), tasks, protocol)
    assert result.complete
    assert result.tasks["valid"].tolist() == [2, 2, 2, 2]
    assert result.summary()["judgements_missing"] == 0


def test_missing_and_invalid_judgements_are_counted_and_rerun(protocol):
    frame = _complete()
    frame = frame[~((frame["participant_id"] == "p1") & (frame["task_id"] == "i1|A|q"))]
    frame.loc[(frame["participant_id"] == "p2") & (frame["task_id"] == "i2|B|q"), "value"] = 9.0  # off the scale
    tasks = rating_tasks(["i1", "i2"], ["A", "B"])
    result = collate(frame, tasks, protocol)
    assert not result.complete
    missing = dict(zip(result.tasks["task_id"], result.tasks["missing"], strict=True))
    assert missing == {"i1|A|q": 1, "i1|B|q": 0, "i2|A|q": 0, "i2|B|q": 1}
    assert result.invalid == {"value 9 off the scale (valid: integers 1..5)": 1}
    lists = rerun_lists(result, tasks, per_list=3)
    assert [[t.task_id for t in pl.tasks] for pl in lists] == [["i1|A|q", "i2|B|q"]]


def test_attention_checks_and_excluded_participants_do_not_count():
    protocol = make_protocol(exclusion=[{"rule": "straight-lining", "min_tasks": 2}])
    frame = _complete(people=("p1", "p2"))
    frame.loc[frame["participant_id"] == "p1", "value"] = [1.0, 2.0, 3.0, 4.0]  # p2 straight-lines (all 3)
    check = rows([{"participant_id": "p1", "item_id": "attention-1", "system": "A", "value": 1.0,
                   "kind": "attention", "task_id": "attention-1|single|q"}])
    result = collate(pd.concat([frame, check], ignore_index=True), rating_tasks(["i1", "i2"], ["A", "B"]), protocol)
    assert result.tasks["valid"].tolist() == [1, 1, 1, 1]
    assert result.missing == 4


def test_a_task_needs_two_different_participants():
    protocol = make_protocol()
    frame = rows([{"participant_id": "p1", "item_id": "i1", "system": "A", "value": 2.0}] * 2)
    result = collate(frame, rating_tasks(["i1"], ["A"]), protocol)
    assert result.tasks["valid"].tolist() == [1]


def test_rerun_files_name_no_system_and_keep_the_mapping_under_the_key_file(tmp_path, protocol):
    """The MTurk re-run batch used to carry ``t1_system1``; no re-run file may name a system."""
    systems = ["sysAlpha", "sysBeta"]
    tasks = rating_tasks(["i1"], systems)
    frame = rows([{"participant_id": "p1", "item_id": "i1", "system": s, "value": 3.0} for s in systems])
    lists = rerun_lists(collate(frame, tasks, protocol), tasks, per_list=3)
    outputs = Outputs(pd.DataFrame({"item_id": ["i1", "i1"], "system": systems, "output": ["text A", "text B"],
                                    "input": ["facts", "facts"], "references": ["", ""]}))
    for kind in ("local", "prolific", "connect", "files"):
        keys = tmp_path / ".humeval" / "keys" / f"{kind}.jsonl"
        written = write_rerun(tmp_path / kind, lists, kind, outputs, key_path=keys, seed=1)
        handed_out = sorted((tmp_path / kind).rglob("*"))
        assert handed_out and all(p.parent == tmp_path / kind for p in handed_out)
        for path in handed_out:
            text = path.read_text()
            assert not any(s in text for s in systems), (kind, path.name)
            assert "i1|" not in text, (kind, path.name)
        mapping = {json.loads(line)["key"]: json.loads(line) for line in keys.read_text().splitlines()}
        with (written[0]).open() as fh:
            rerun = list(csv.DictReader(fh))
        assert sorted(mapping[r["key"]]["task_id"] for r in rerun) == ["i1|sysAlpha|q", "i1|sysBeta|q"]
        if kind == "files":
            for r in rerun:
                (shown,) = mapping[r["key"]]["order"]
                assert r["output_1"] == {"sysAlpha": "text A", "sysBeta": "text B"}[shown] and r["input"] == "facts"
