"""An MQM study: a WMT MQM TSV imported into it and exported again reads back the same (TSV -> study -> TSV), and a
rehearsal (simulated participants marking errors over the real server and store) reaches the report's MQM scores."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from humeval.files import write_jsonl
from humeval.formats.mqm import read_mqm
from humeval.judgements import read_judgements
from humeval.lock import lock_study
from humeval.pipeline import import_judgements, run
from humeval.rehearsal import rehearse
from humeval.results import Results
from humeval.stats.spans import error_counts
from humeval.study import StudyFolder
from humeval.tasks.mqm import mqm_tsv
from humeval.templates import generate_outputs
from tests.integration.server.studies import ESA
from tests.unit.test_mqm import FIXTURE

pytestmark = pytest.mark.timeout(300)

def mqm_study(root: Path, outputs: list[dict], per_participant: int = 4) -> StudyFolder:
    """The ESA study of :mod:`tests.integration.server.studies` with its criterion ``quality`` of type ``mqm``
    (systems baseline, candidate and reference; dry runs score them 40, 60, 85)."""
    write_jsonl(root / "data" / "outputs.jsonl", outputs)
    protocol = ESA.format(per_item=2, per_participant=per_participant, language="en", setup="separate",
                          criteria_extra="", esa_extra="")
    criterion = 'type: mqm, question: "Mark the errors of the translation."'
    (root / "humeval.yaml").write_text(protocol.replace('type: esa, question: "Mark the errors, then score the '
                                                        'translation."', criterion), encoding="utf-8")
    study = StudyFolder.open(root)
    list(run(study))
    lock_study(study)
    return study


def _by_judgement(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["participant_id", "system", "item_id"]).reset_index(drop=True)


def test_an_mqm_tsv_through_a_study_and_back(tmp_path: Path) -> None:
    source = tmp_path / "wmt.tsv"
    wmt = FIXTURE.replace("sysA", "baseline").replace("sysB", "candidate")
    source.write_text(wmt, encoding="utf-8")
    table = pd.read_csv(source, sep="\t", dtype=str, keep_default_na=False, quoting=3)
    outputs = [{"item_id": r.seg_id, "system": system, "output": r.target.replace("<v>", "").replace("</v>", ""),
                "input": r.source, "slots": 1}
               for r in table.drop_duplicates(["seg_id", "system"]).itertuples()
               for system in ([r.system, "reference"] if r.system == "candidate" else [r.system])]
    study = mqm_study(tmp_path / "study", outputs, per_participant=3)
    result = import_judgements(study, "mqm", source)
    assert result.summary["imported"] == 6 and result.summary["skipped"] == 0
    judgements = read_judgements(study.results_dir / "judgements.jsonl")
    assert set(judgements["criterion"]) == {"quality"} and judgements["task_id"].ne("").all()
    documents = {r.seg_id: (r.doc, r.doc_id) for r in table.itertuples()}
    exported = tmp_path / "exported.tsv"
    exported.write_text(mqm_tsv(judgements, study.outputs().texts, criterion="quality", documents=documents),
                        encoding="utf-8")
    pd.testing.assert_frame_equal(_by_judgement(read_mqm(exported)), _by_judgement(read_mqm(source)))
    assert sorted(exported.read_text(encoding="utf-8").splitlines()[1:]) == sorted(wmt.splitlines()[1:])


def test_the_round_trip_from_the_cli_and_the_api(tmp_path: Path) -> None:
    """`humeval import DIR mqm FILE`, then `humeval export DIR --format mqm-tsv --documents FILE` (and
    ``Study.export_mqm``) write the file's rows back, doc and doc_id included."""
    from typer.testing import CliRunner

    import humeval
    from humeval.cli.app import app

    source = tmp_path / "wmt.tsv"
    wmt = FIXTURE.replace("sysA", "baseline").replace("sysB", "candidate")
    source.write_text(wmt, encoding="utf-8")
    table = pd.read_csv(source, sep="\t", dtype=str, keep_default_na=False, quoting=3)
    outputs = [{"item_id": r.seg_id, "system": system, "output": r.target.replace("<v>", "").replace("</v>", ""),
                "input": r.source, "slots": 1}
               for r in table.drop_duplicates(["seg_id", "system"]).itertuples()
               for system in ([r.system, "reference"] if r.system == "candidate" else [r.system])]
    root = tmp_path / "study"
    mqm_study(root, outputs, per_participant=3)
    runner = CliRunner()
    imported = runner.invoke(app, ["import", str(root), "mqm", str(source)])
    assert imported.exit_code == 0, imported.output
    cli_out = tmp_path / "cli.tsv"
    exported = runner.invoke(app, ["export", str(root), "--format", "mqm-tsv", "--documents", str(source),
                                   "-o", str(cli_out)])
    assert exported.exit_code == 0, exported.output
    assert sorted(cli_out.read_text(encoding="utf-8").splitlines()[1:]) == sorted(wmt.splitlines()[1:])
    api_out = humeval.Study.open(root).export_mqm(documents=source)
    assert api_out == root / "results" / "quality.tsv"
    assert api_out.read_text(encoding="utf-8") == cli_out.read_text(encoding="utf-8")
    # without the documents the doc cells are empty, everything else the same
    bare = runner.invoke(app, ["export", str(root), "--format", "mqm-tsv", "-o", str(tmp_path / "bare.tsv")])
    assert bare.exit_code == 0, bare.output
    pd.testing.assert_frame_equal(_by_judgement(read_mqm(tmp_path / "bare.tsv")), _by_judgement(read_mqm(source)))
    wrong = runner.invoke(app, ["export", str(root), "--format", "mqm-tsv", "--criterion", "qualty"])
    assert wrong.exit_code != 0 and "Did you mean 'quality'?" in str(wrong.exception)


def test_an_mqm_rehearsal_reaches_the_report(tmp_path: Path) -> None:
    systems = ["baseline", "candidate", "reference"]
    study = mqm_study(tmp_path / "mqm", generate_outputs(6, seed=6), per_participant=6)
    rehearse(study, kind="static", seed=3, concurrency=4)
    out = study.results_dir / "rehearsal"
    judgements = read_judgements(out / "judgements.jsonl")
    mqm = judgements[(judgements["criterion"] == "quality") & (judgements["kind"] == "task")].reset_index(drop=True)
    assert len(mqm) == 6 * 3 * 2
    spans = mqm["spans"].map(json.loads)
    assert spans.map(len).sum() > 0 and all(s["category"] == "Accuracy/Addition" for row in spans for s in row)
    res = Results.read(out / "results.json").criteria["quality"]
    scores = {r.system: r for r in res.errors if r.measure.startswith("MQM score")}
    # the MQM score per system against an independent count of the stored spans: minor 1, major 5
    counts = error_counts(mqm)
    expected = (counts["minor"] + 5 * counts["major"]).groupby(mqm["system"].to_numpy()).mean()
    assert set(scores) == set(systems)
    for system, record in scores.items():
        assert record.estimate == pytest.approx(expected[system])
        assert record.ci_low <= record.estimate <= record.ci_high
    assert scores["baseline"].estimate > scores["reference"].estimate  # static quality 40 vs 85: more errors
    assert res.span_agreement is not None
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "MQM score per output (minor 1, major 5" in report and "Errors per system" in report
