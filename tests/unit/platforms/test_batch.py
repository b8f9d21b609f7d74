"""The batch format: one writer (first batch and re-run batch), one reader, opaque keys."""

from __future__ import annotations

import csv
import io
import math

import pandas as pd
import pytest

from humeval.design.tasks import Task
from humeval.errors import DataError, PlatformError
from humeval.judgements import JUDGEMENT_COLUMNS, read_judgements
from humeval.judgements.sources import union_sources, write_source
from humeval.platforms.keys import read_keys
from humeval.platforms.mturk import read_results, write_batch

PAIR = Task("i1|sysAlpha+sysBeta|q", "i1", ("sysAlpha", "sysBeta"), ("q",), "pair")
SINGLE = Task("i2|sysAlpha|fl", "i2", ("sysAlpha",), ("fl",), "single")
TEXTS = {("i1", "sysAlpha"): ("alpha one", "facts 1"), ("i1", "sysBeta"): ("beta one", "facts 1"),
         ("i2", "sysAlpha"): ("alpha two", "facts 2")}
TYPES = {"q": "2afc", "fl": "likert"}


def _results(path, rows):
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buf.getvalue())
    return path


def test_a_batch_names_no_system_and_answers_map_back_through_the_keys(tmp_path):
    keys_path = tmp_path / ".humeval" / "keys" / "results.jsonl"
    batch = write_batch(tmp_path / "batch.csv", [("L1", PAIR), ("L1", SINGLE)], TEXTS, keys_path, "b1", seed=5)
    text = batch.read_text()
    assert "sysAlpha" not in text and "sysBeta" not in text and "|" not in text
    with batch.open() as fh:
        rows = list(csv.DictReader(fh))
    keys = read_keys(keys_path)
    pair_key = keys[rows[0]["key"]]
    assert pair_key.task_id == PAIR.task_id and sorted(pair_key.order) == ["sysAlpha", "sysBeta"]
    first = {"alpha one": "sysAlpha", "beta one": "sysBeta"}[rows[0]["output_1"]]
    assert first == pair_key.order[0]  # the display order the worker saw is the one kept
    answers = _results(tmp_path / "results.csv", [
        {"WorkerId": "W1", "HITId": "H1", "WorkTimeInSeconds": "30", "SubmitTime": "t", "Input.key": rows[0]["key"],
         "Input.list_id": "L1", "Answer.q": "B", "Answer.fl": ""},
        {"WorkerId": "W1", "HITId": "H2", "WorkTimeInSeconds": "20", "SubmitTime": "t", "Input.key": rows[1]["key"],
         "Input.list_id": "L1", "Answer.q": "", "Answer.fl": "4"},
        {"WorkerId": "W2", "HITId": "H2", "WorkTimeInSeconds": "20", "SubmitTime": "t", "Input.key": rows[1]["key"],
         "Input.list_id": "L1", "Answer.q": "", "Answer.fl": "four"},
        {"WorkerId": "W2", "HITId": "H3", "WorkTimeInSeconds": "20", "SubmitTime": "t", "Input.key": "deadbeef",
         "Input.list_id": "L1", "Answer.q": "A", "Answer.fl": ""},
    ])
    frame, skipped, examples = read_results(answers, keys, {PAIR.task_id: PAIR, SINGLE.task_id: SINGLE}, TYPES)
    assert list(frame.columns) == JUDGEMENT_COLUMNS and len(frame) == 2
    pair = frame.iloc[0]
    assert (pair.system, pair.system_b, pair.choice) == (pair_key.order[0], pair_key.order[1], "B")
    assert math.isnan(pair.value) and pair.list_id == "L1" and pair.seconds == 30.0
    rating = frame.iloc[1]
    assert (rating.task_id, rating.system, rating.value, rating.criterion) == (SINGLE.task_id, "sysAlpha", 4.0, "fl")
    assert sum(skipped.values()) == 2 and len(examples) == 2
    assert any("'four' is not a number" in r for r in skipped) and any("unknown key" in r for r in skipped)
    # a task that left the design is counted, not silently dropped
    frame, skipped, _ = read_results(answers, keys, {SINGLE.task_id: SINGLE}, TYPES)
    assert len(frame) == 1 and skipped[f"task not in the design: {PAIR.task_id!r}"] == 1


def test_a_batch_results_file_with_task_ids_is_refused_with_what_is_needed(tmp_path):
    old = _results(tmp_path / "old.csv", [{"WorkerId": "W1", "Input.task_id": PAIR.task_id, "Answer.q": "A"}])
    with pytest.raises(PlatformError, match="needs columns WorkerId and Input.key"):
        read_results(old, {}, {}, TYPES)


def _judgement(pid, choice, task=PAIR):
    return {"participant_id": pid, "list_id": "", "task_id": task.task_id, "kind": "task", "item_id": task.item_id,
            "criterion": "q", "system": "sysAlpha", "system_b": "sysBeta", "position": 0, "value": math.nan,
            "choice": choice, "seconds": 1.0, "submitted_at": ""}


def test_union_keeps_every_source_once_and_refuses_conflicts(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    legacy = pd.DataFrame([_judgement("P0", "A")], columns=JUDGEMENT_COLUMNS)
    legacy.to_json(results / "judgements.jsonl", orient="records", lines=True)
    write_source(results, "store", pd.DataFrame([_judgement("P1", "A"), _judgement("W1", "B")]))
    write_source(results, "mturk-0123abcd", pd.DataFrame([_judgement("W1", "B"), _judgement("W2", "A")]))
    table, summary = union_sources(results)
    frame = read_judgements(table)
    assert sorted(frame["participant_id"]) == ["P0", "P1", "W1", "W2"]  # the old table kept as a source
    assert summary["duplicates_dropped"] == 1 and summary["sources"]["legacy.jsonl"] == 1
    write_source(results, "mturk-99999999", pd.DataFrame([_judgement("W2", "B")]))
    with pytest.raises(DataError) as err:
        union_sources(results)
    assert "mturk-0123abcd.jsonl" in str(err.value) and "mturk-99999999.jsonl" in str(err.value)
    assert "'W2'" in str(err.value)
