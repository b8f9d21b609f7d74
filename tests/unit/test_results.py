"""Results: one typed tree read from results.json, its exact round trip, its tables, and who reads it."""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from humeval.errors import DataError
from humeval.lock import lock_study
from humeval.pipeline import run_stage
from humeval.protocol.models import Analysis
from humeval.results import (
    FORMAT_VERSION,
    AgreementRecord,
    Counts,
    CriterionResult,
    Descriptive,
    RankRow,
    Results,
)
from humeval.study import StudyFolder
from humeval.templates import init_study
from tests.cli import humeval

KINDS = ("normal", "random", "static")


@pytest.fixture(scope="module", params=["rating", "pairwise", "rankme"])
def dry_run_study(request, tmp_path_factory) -> StudyFolder:
    root = tmp_path_factory.mktemp(request.param)
    init_study(root, request.param, items=8, seed=2)
    study = StudyFolder.open(root)
    for stage in ("sample", "design", "dry-run"):
        run_stage(study, stage)
    return study


def _read_csv(path: Path) -> pd.DataFrame:
    text = path.read_text(encoding="utf-8")
    return pd.read_csv(io.StringIO(text)) if text.strip() else pd.DataFrame()


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_is_exact_on_every_dry_run_kind(dry_run_study, kind):
    path = dry_run_study.results_dir / "dry-run" / kind / "results.json"
    stored = json.loads(path.read_text(encoding="utf-8"))
    results = Results.from_json(stored, str(path))
    assert results.to_json() == stored
    # same keys in the same order: the file written from the tree is the file read
    assert json.dumps(results.to_json()) == json.dumps(stored)
    assert Results.from_json(results.to_json()) == results
    assert dry_run_study.results(f"dry-run/{kind}") == results
    assert results.dry_run == kind and results.preregistered is True and results.post_hoc is None
    assert isinstance(results.counts, Counts) and results.counts.judgements == stored["counts"]["judgements"]
    assert all(isinstance(c, CriterionResult) for c in results.criteria.values())


@pytest.mark.parametrize("kind", KINDS)
def test_tables_are_what_write_results_wrote_and_count_every_record(dry_run_study, kind):
    folder = dry_run_study.results_dir / "dry-run" / kind
    results = dry_run_study.results(f"dry-run/{kind}")
    tables = results.tables()
    assert sorted(tables) == sorted(p.stem for p in (folder / "tables").glob("*.csv"))
    stored = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    for name, table in tables.items():
        assert isinstance(table, pd.DataFrame)
        on_disk = _read_csv(folder / "tables" / f"{name}.csv")
        pd.testing.assert_frame_equal(on_disk, _read_csv_text(table.to_csv(index=False)))
        if len(table):
            assert (table["signature"] == stored["signature"]).all()
    # row counts from the JSON itself (an independent walk of the file)
    crits = stored["criteria"].values()
    expected = {
        "descriptives": sum(len(c.get("descriptives", [])) for c in crits),
        "tests": sum(len(c.get("normality", {}).get("tests", [])) + ("omnibus" in c)
                     + len(c.get("posthoc", {}).get("pairs", [])) for c in crits),
        "agreement": sum(len(c.get("agreement", [])) for c in crits),
        "rankings": sum(len(r.get("systems", [])) for c in crits for r in c.get("rankings", {}).values()),
        "pairs": sum(len(c.get("pairs", [])) for c in crits),
    }
    assert {k: len(v) for k, v in tables.items()} == expected


def _read_csv_text(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text)) if text.strip() else pd.DataFrame()


def test_study_results_names_and_errors(dry_run_study):
    frames = dry_run_study.results("dry-run/normal").tables()
    assert frames and all(isinstance(f, pd.DataFrame) for f in frames.values())
    assert dry_run_study.available_results() == [f"dry-run/{k}" for k in sorted(KINDS)]
    with pytest.raises(DataError, match=r"unknown results 'final'; available: dry-run/normal, dry-run/random"):
        dry_run_study.results("final")
    with pytest.raises(DataError, match=r"unknown results 'dry-run/\.\.'"):
        dry_run_study.results("dry-run/..")
    with pytest.raises(DataError, match=r"posthoc/nope/results\.json: no results; `humeval posthoc nope` writes it"):
        dry_run_study.results("posthoc/nope")
    with pytest.raises(DataError, match=r"results\.json: no results; `humeval analyze` writes it"):
        dry_run_study.results()
    with pytest.raises(DataError, match="`humeval rehearse` writes it"):
        dry_run_study.results("rehearsal")


def test_a_broken_field_is_named_by_its_path():
    good = {"format_version": FORMAT_VERSION, "signature": "s",
            "criteria": {"q": {"type": "likert", "omnibus": {"estimate": 1.0}}}}
    assert Results.from_json(good).criteria["q"].omnibus.estimate == 1.0
    bad = good | {"criteria": {"q": {"type": "likert", "omnibus": [1, 2]}}}
    with pytest.raises(DataError, match=r"^r\.json\.criteria\.q\.omnibus: Input should be a valid dictionary"):
        Results.from_json(bad, "r.json")
    counts = {"judgements": 1, "participants": 1, "excluded": 0, "invalid": 0, "attention_or_repeat": 0,
              "analysed": "3", "participants_analysed": 1}
    with pytest.raises(DataError, match=r"r\.json\.counts\.analysed: Input should be a valid integer.*got str '3'"):
        Results.from_json(good | {"counts": counts}, "r.json")
    with pytest.raises(DataError, match=r"r\.json\.signature: Field required"):
        Results.from_json({"format_version": FORMAT_VERSION, "criteria": {}}, "r.json")
    with pytest.raises(DataError, match=r"r\.json\.criteria\.q\.omnibus\.estimate: .*got str 'high'"):
        Results.from_json(good | {"criteria": {"q": {"type": "likert", "omnibus": {"estimate": "high"}}}}, "r.json")


@pytest.mark.parametrize(("found", "said"), [(None, "no format_version"), (1, "format_version 1"),
                                             (3, "format_version 3"), ("2", "format_version '2'")])
def test_another_format_version_is_refused_naming_both_versions(tmp_path, found, said):
    data = {"signature": "s", "criteria": {}} | ({} if found is None else {"format_version": found})
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError) as err:
        Results.read(path)
    message = str(err.value)
    assert message.startswith(f"{path}: results.json has {said}")
    assert f"this humeval reads format_version {FORMAT_VERSION}" in message
    assert message.endswith("Re-run the analysis to write it again: `humeval analyze <study>` (or the command that "
                            "wrote it: `humeval dry-run`, `humeval rehearse`, `humeval posthoc <name>`)")


def test_the_written_file_carries_the_format_version_first(dry_run_study):
    stored = json.loads((dry_run_study.results_dir / "dry-run" / "normal" / "results.json").read_text("utf-8"))
    assert next(iter(stored)) == "format_version" and stored["format_version"] == FORMAT_VERSION == 2


def test_records_are_typed_where_they_are_read(dry_run_study):
    results = dry_run_study.results("dry-run/normal")
    for res in results.criteria.values():
        assert all(isinstance(d, Descriptive) and d.system in results.systems for d in res.descriptives)
        assert all(isinstance(a, AgreementRecord) and a.measure for a in res.agreement)
        for rk in res.rankings.values():
            assert all(isinstance(r, RankRow) and r.rank_low <= r.rank_high for r in rk.systems)
    assert isinstance(results.plan, Analysis) and results.alpha == results.plan.alpha


def test_a_record_is_an_estimate_with_context():
    rec = Descriptive(system="A", estimate=2.5, ci_low=float("nan"), ci_high=None, p_value=None, n=4,
                      method="mean_t_interval", sd=0.5, n_boot=np.int64(1000))
    assert rec.system == "A" and rec.ci_low is None  # nan is stored as null, as in the file
    assert rec.to_json() == {"system": "A", "estimate": 2.5, "ci_low": None, "ci_high": None, "p_value": None, "n": 4,
                             "method": "mean_t_interval", "sd": 0.5, "n_boot": 1000}
    assert isinstance(rec.to_json()["n_boot"], int) and "items" not in rec.to_json()
    est = rec.to_estimate()
    assert est.estimate == 2.5 and math.isnan(est.ci_low) and est.n == 4 and est.extra["sd"] == 0.5
    assert est.extra["system"] == "A"


def test_importing_the_study_module_does_not_load_results_or_pandas():
    code = ("import sys, humeval, humeval.study; "
            "print('humeval.results' in sys.modules, 'pandas' in sys.modules, humeval.Results.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split()[:1] == ["False"] and out.stdout.split()[-1] == "humeval.results"


@pytest.fixture(scope="module")
def analysed_study(tmp_path_factory) -> StudyFolder:
    root = tmp_path_factory.mktemp("analysed")
    init_study(root, "rating", items=8, seed=3)
    study = StudyFolder.open(root)
    for stage in ("sample", "design", "dry-run"):
        run_stage(study, stage)
    shutil.copy(study.results_dir / "dry-run" / "normal" / "judgements.jsonl", study.results_dir / "judgements.jsonl")
    lock_study(study)
    for stage in ("collate", "exclude", "analyze"):
        run_stage(study, stage)
    return study


def test_cli_analyze_json_is_results_to_json(analysed_study):
    proc = humeval("analyze", str(analysed_study.root), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    results = analysed_study.results()
    assert printed == results.to_json()
    assert Results.from_json(printed) == results
    assert results.preregistered and results.dry_run is None and list(results.criteria) == ["fluency", "adequacy"]


def test_posthoc_correlations_alone_carry_counts_and_a_correlations_table(analysed_study):
    run_stage(analysed_study, "analyze")  # post hoc needs the main analysis (skipped when another test ran it)
    proc = humeval("posthoc", "corr", str(analysed_study.root), "--correlation", "spearman", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    results = analysed_study.results("posthoc/corr")
    assert json.loads(proc.stdout) == results.to_json()
    assert results.post_hoc == "corr" and results.preregistered is False and results.criteria == {}
    main = analysed_study.results()
    assert results.counts == main.counts  # the same judgements minus the same exclusions
    table = results.tables()["correlations"]
    assert list(table["criterion"]) == ["fluency ~ adequacy"] and table["method"].iloc[0].startswith("spearman")
    on_disk = _read_csv(analysed_study.results_dir / "posthoc" / "corr" / "tables" / "correlations.csv")
    assert on_disk["estimate"].iloc[0] == pytest.approx(table["estimate"].iloc[0])
    assert "posthoc/corr" in analysed_study.available_results()


def test_summary_rows_say_which_system_or_pair_a_row_is_about(dry_run_study):
    rows = dry_run_study.results("dry-run/normal").summary_rows()
    keyed = [(r["criterion"], r["analysis"], r["about"], r["method"]) for r in rows]
    assert len(keyed) == len(set(keyed))  # no two rows alike (normality rows once were, one per system)
    for r in rows:
        if r["analysis"] == "normality":
            assert r["about"] in dry_run_study.results("dry-run/normal").systems
        elif r["analysis"] in ("posthoc", "sign_test"):
            assert " vs " in r["about"]
