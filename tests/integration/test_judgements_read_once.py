"""When stages run together (a dry run, a rehearsal: :func:`humeval.pipeline.back_half`), the judgements of a
results folder are parsed and validated once and the exclusion rules applied once; every step gets that value.
Counted on the one parser of data files and the one implementation of the rules."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from humeval.analysis.workspace import Workspace
from humeval.data import readers
from humeval.judgements import exclusion, write_judgements
from humeval.lock import lock_study
from humeval.pipeline import back_half, run_stage
from humeval.rehearsal import rehearse
from humeval.simulate.dummy import dummy_judgements
from humeval.study import StudyFolder
from humeval.templates import init_study


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> StudyFolder:
    root = tmp_path_factory.mktemp("study")
    init_study(root, "rating", items=8, seed=5)
    study = StudyFolder.open(root)
    for stage in ("sample", "design"):
        run_stage(study, stage)
    return study


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """Parses of each judgements file (by path) and computations of the exclusion rules (``"exclusions"``)."""
    counts: Counter = Counter()
    read_table, exclusion_rows = readers.read_table, exclusion.exclusion_rows

    def counted_read(path, *args, **kwargs):
        if Path(path).name == "judgements.jsonl":
            counts[Path(path).resolve()] += 1
        return read_table(path, *args, **kwargs)

    def counted_rows(*args, **kwargs):
        counts["exclusions"] += 1
        return exclusion_rows(*args, **kwargs)

    monkeypatch.setattr(readers, "read_table", counted_read)
    monkeypatch.setattr(exclusion, "exclusion_rows", counted_rows)
    return counts


def test_the_back_half_parses_the_judgements_once_and_excludes_once(study, calls):
    ws = Workspace(study.results_dir / "counted", dry_run="normal")
    tasks = study.read_tasks()
    lists = study.read_lists(tasks)
    write_judgements(ws.judgements, dummy_judgements(lists, study.protocol, "normal", 3))
    summary, paths = back_half(ws, study, tasks, lists)
    assert "signature" in summary and ws.results in paths and ws.report_html in paths
    assert calls == Counter({ws.judgements.resolve(): 1, "exclusions": 1})


def test_a_dry_run_parses_each_kind_once_and_excludes_once_per_kind(study, calls):
    result = run_stage(study, "dry-run", force=True)
    kinds = list(result.summary)
    assert calls["exclusions"] == len(kinds) == 3
    assert {p: n for p, n in calls.items() if p != "exclusions"} == {
        (study.results_dir / "dry-run" / k / "judgements.jsonl").resolve(): 1 for k in kinds}


def test_a_rehearsal_parses_the_exported_judgements_once_and_excludes_once(study, calls):
    lock_study(study)
    result = rehearse(study, kind="static", timeout=300)
    assert result.signature is not None and result.judgements == result.judgements_required
    assert calls == Counter({(result.workspace / "judgements.jsonl").resolve(): 1, "exclusions": 1})
