"""Seeding streams the design files: the store holds exactly what the typed design says, on both stores."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import inspect, select

from humeval.errors import DataError
from humeval.files import read_jsonl, write_jsonl
from humeval.pipeline import run
from humeval.protocol.comparisons import watched_comparisons, watched_tasks
from humeval.store import Store
from humeval.store import schema as s
from humeval.store.context import strategy_of
from humeval.study import StudyFolder
from humeval.templates import generate_outputs
from tests.integration.server.conftest import db_url  # noqa: F401 (the fixture: SQLite and PostgreSQL)

PROTOCOL = """
version: 1
study: {{name: seeding, seed: 11}}
data: {{files: [data/outputs.jsonl], properties: [slots]}}
systems: [baseline, candidate, reference]
criteria:
  - {{name: quality, type: 2afc, question: "Which is better?", tie: true}}
  - {{name: fluency, type: likert, question: "How fluent is it?", points: 5}}
presentation: {{setup: separate}}
design: {{judgements_per_item: 2, items_per_participant: 6, counterbalancing: latin-square, attention_checks: 1, repeated_items: 1}}
assignment: {{strategy: {strategy}, workers: 3}}
stopping: {{rule: anytime, delta: 0.05, systems: [baseline, candidate]}}
platform: {{kind: local, completion_code: DONE-1}}
"""


def _study(root: Path, strategy: str = "list", items: int = 9) -> StudyFolder:
    write_jsonl(root / "data" / "outputs.jsonl", generate_outputs(items, seed=11))
    (root / "humeval.yaml").write_text(PROTOCOL.format(strategy=strategy), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    return study


def _seed(study: StudyFolder, db: str | None) -> tuple[Store, list[tuple[str, int, int]]]:
    heard: list[tuple[str, int, int]] = []
    store = Store.open(study, db)
    store.prepare(lambda what, done, total: heard.append((what, done, total)))
    return store, heard


def _expected(study: StudyFolder) -> tuple[dict, list, list, dict]:
    """What the whole-file typed reading of the design says the store holds."""
    tasks = study.read_tasks()
    lists = study.read_lists(tasks)
    by_id = {t.task_id: t for t in tasks}
    if strategy_of(study.protocol) is None:
        for pl in lists:
            for t in pl.tasks:
                by_id.setdefault(t.task_id, t)
    occurrences = Counter(t.task_id for pl in lists for t in pl.tasks)
    comparisons = {c.criterion: c for c in watched_comparisons(study.protocol, list(study.protocol.systems))}
    return by_id, lists, sorted(occurrences.items()), watched_tasks(by_id, comparisons)


def test_a_list_study_is_seeded_as_its_typed_design(tmp_path: Path, db_url: str | None) -> None:  # noqa: F811
    study = _study(tmp_path / "s")
    by_id, lists, _, watched = _expected(study)
    kinds = Counter(t.kind for t in by_id.values())
    assert kinds["attention"] and kinds["repeat"] and watched  # the design exercises every kind of row
    store, heard = _seed(study, db_url)
    try:
        with store.read_engine.connect() as conn:
            t = s.tasks.c
            rows = conn.execute(select(t.seq, t.task_id, t.item_id, t.systems, t.criteria, t.family, t.kind, t.expected,
                                       t.text, t.repeat_of, t.cap, t.open).order_by(t.seq)).all()
            places = conn.execute(select(s.list_tasks.c.list_id, s.list_tasks.c.position, s.list_tasks.c.task_id)
                                  .order_by(s.list_tasks.c.list_id, s.list_tasks.c.position)).all()
            stored_lists = conn.execute(select(s.lists.c.list_id, s.lists.c.round, s.lists.c.size)
                                        .order_by(s.lists.c.list_id)).all()
            stored_watched = conn.execute(select(s.watched_tasks.c.task_id, s.watched_tasks.c.comparison)).all()
            outputs = conn.execute(select(s.outputs.c.item_id, s.outputs.c.system, s.outputs.c.output)).all()
    finally:
        store.close()
    occurrences = Counter(t.task_id for pl in lists for t in pl.tasks)
    assert [tuple(r) for r in rows] == [
        (seq, tid, x.item_id, json.dumps(list(x.systems)), json.dumps(list(x.criteria)), x.family, x.kind,
         json.dumps(x.expected), x.text, x.repeat_of, occurrences[tid], int(occurrences[tid] > 0))
        for seq, (tid, x) in enumerate(by_id.items())
    ]
    assert [tuple(r) for r in places] == sorted((pl.list_id, i, t.task_id) for pl in lists for i, t in enumerate(pl.tasks))
    assert [tuple(r) for r in stored_lists] == sorted((pl.list_id, pl.round, len(pl.tasks)) for pl in lists)
    assert sorted(map(tuple, stored_watched)) == sorted((tid, c) for tid, cs in watched.items() for c in cs)
    texts = read_jsonl(study.texts_file)
    assert sorted(map(tuple, outputs)) == sorted((r["item_id"], r["system"], r["output"]) for r in texts)
    # every file's progress ends at its line count
    last = {what: (done, total) for what, done, total in heard}
    assert {what: last[what] for what in last if not what.startswith("indexes")} == {
        "outputs, rows of lists/texts.jsonl": (len(texts), len(texts)),
        "lists and list_tasks, lists of lists/lists.jsonl": (len(lists), len(lists)),
        "tasks, rows of lists/tasks.jsonl": (len(study.read_tasks()),) * 2}
    if db_url is None:  # SQLite builds the tasks table's indexes after the load
        done, total = last["indexes of tasks"]
        assert done == total >= 3


def test_a_pool_study_seeds_its_tasks_and_no_lists(tmp_path: Path) -> None:
    study = _study(tmp_path / "p", strategy="majority")
    design = study.read_tasks()
    store, _ = _seed(study, None)
    try:
        with store.read_engine.connect() as conn:
            caps = conn.execute(select(s.tasks.c.task_id, s.tasks.c.cap).order_by(s.tasks.c.seq)).all()
            n_lists = len(conn.execute(select(s.lists.c.list_id)).all())
    finally:
        store.close()
    first = strategy_of(study.protocol).workers_needed([])
    assert [tuple(r) for r in caps] == [(t.task_id, first) for t in design]
    assert n_lists == 0


def test_a_list_naming_an_unknown_task_is_refused_and_nothing_is_seeded(tmp_path: Path) -> None:
    study = _study(tmp_path / "u")
    lists = read_jsonl(study.lists_file)
    lists[2]["tasks"][1] = "item-9999|baseline|fluency"
    write_jsonl(study.lists_file, lists)
    store = Store.open(study)
    try:
        with pytest.raises(DataError, match=rf"participant list '{lists[2]['list_id']}': task 'item-9999\|baseline\|fluency' "
                                            r"is not in the design's tasks"):
            store.prepare()
        with store.read_engine.connect() as conn:  # the transaction (migrations included) was rolled back
            assert "tasks" not in inspect(conn).get_table_names()
    finally:
        store.close()


def test_a_task_written_twice_is_refused(tmp_path: Path) -> None:
    study = _study(tmp_path / "d")
    tasks = read_jsonl(study.tasks_file)
    write_jsonl(study.tasks_file, [*tasks, tasks[3]])
    store = Store.open(study)
    try:
        with pytest.raises(DataError, match=rf"tasks.jsonl: task '{tasks[3]['task_id']}' appears twice"):
            store.prepare()
    finally:
        store.close()
