"""An ESA study runs through rehearsal (simulated participants marking spans over the real server and
store) to a report with error counts and the weighted error score per system (issue 12 acceptance)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pandas as pd
import pytest

from humeval.judgements import read_judgements
from humeval.rehearsal import rehearse
from humeval.results import Results
from humeval.stats.spans import error_counts
from tests.integration.server.studies import esa_study

pytestmark = pytest.mark.timeout(300)


def test_esa_rehearsal_to_report(tmp_path: Path) -> None:
    study = esa_study(tmp_path / "esa")
    result = rehearse(study, kind="static", seed=3, concurrency=4)
    out = study.results_dir / "rehearsal"
    judgements = read_judgements(out / "judgements.jsonl")
    esa = judgements[judgements["criterion"] == "quality"]
    assert len(esa) == 8 * 3 * 2 and set(esa["system"]) == {"baseline", "candidate", "reference"}
    texts = {(r["item_id"], r["system"]): r["output"] for r in map(json.loads, (study.root / "data" / "outputs.jsonl").read_text().splitlines())}
    for row in esa.itertuples():  # every span is inside the text that was shown, none overlap
        spans = json.loads(row.spans)
        assert all(0 <= s["start"] < s["end"] <= len(texts[(row.item_id, row.system)]) for s in spans)
        assert all(a["end"] <= b["start"] for a, b in itertools.pairwise(spans))
    results = Results.read(out / "results.json")
    res = results.criteria["quality"]
    weighted = {r.system: r for r in res.errors if r.measure.startswith("weighted")}
    # the reference's expected weighted errors against an independent count from the exported spans
    counts = error_counts(esa.reset_index(drop=True))
    by_system = (counts["minor"] + 5 * counts["major"]).groupby(esa["system"].to_numpy()).mean()
    for system, record in weighted.items():
        assert record.estimate == pytest.approx(by_system[system])
        assert 0 <= record.ci_low <= record.estimate <= record.ci_high
    assert weighted["baseline"].estimate > weighted["reference"].estimate  # static scores 40 vs 85: more errors
    assert res.span_agreement is not None and res.span_agreement.method == "pairwise span F1 (characters)"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Errors per system" in report and "weighted errors per output" in report and "span agreement" in report.lower()
    assert result.summary  # the rehearsal's own summary
    frame = pd.DataFrame([r.to_json() for r in res.errors])
    assert set(frame["system"]) == {"baseline", "candidate", "reference"} and len(frame) == 9
