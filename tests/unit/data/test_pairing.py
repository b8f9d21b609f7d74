"""Pair construction for 2AFC from unaligned outputs (sampling.pairing): a hand-computed case,
the DHE sentences (maximum matching checked with SciPy), and the sample and design stages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linear_sum_assignment

from humeval.data.pairing import pair_outputs, token_length
from humeval.files import write_jsonl, write_text
from humeval.pipeline import run_stage
from humeval.protocol.models import Pairing
from humeval.study import StudyFolder
from tests.conftest import shared_data_dir


def _frame(rows):
    return pd.DataFrame(rows, columns=["item_id", "system", "output", "input", "references", "tense"])


def test_hand_computed_pairs():
    # group Past: X lengths 1, 3, 6; Y lengths 2, 2 (a duplicate text), 9 -> after dropping the
    # duplicate Y has 2, 9; scan: X1~Y2 (|1-2| = 1 <= 1) pair; X3 vs Y9: 3 < 9 drop X3; X6 vs Y9 drop X6.
    # group Present: X "a b" (2) and Y "a b c d" (4): |2-4| = 2 > 1: no pair.
    rows = [
        ("x1", "X", "a", "", "", "Past"), ("x2", "X", "a b c", "", "", "Past"), ("x3", "X", "a b c d e f", "", "", "Past"),
        ("y1", "Y", "b c", "", "", "Past"), ("y2", "Y", "b c", "", "", "Past"), ("y3", "Y", "1 2 3 4 5 6 7 8 9", "", "", "Past"),
        ("x4", "X", "a b", "", "", "Present"), ("y4", "Y", "a b c d", "", "", "Present"),
    ]
    out = pair_outputs(_frame(rows), Pairing(systems=["X", "Y"], match=["tense"], max_length_difference=1), seed=0)
    assert out[["item_id", "system", "source_item", "output"]].values.tolist() == [
        ["pair-00001", "X", "x1", "a"], ["pair-00001", "Y", "y1", "b c"]]
    # with tolerance 2 the Present pair is made too, and X3 (3) pairs nothing (Y9 is 6 away)
    out = pair_outputs(_frame(rows), Pairing(systems=["X", "Y"], match=["tense"], max_length_difference=2), seed=0)
    assert sorted(map(tuple, out.groupby("item_id")["source_item"].apply(tuple))) == [("x1", "y1"), ("x4", "y4")]
    # keeping duplicates, Y's second "b c" pairs with X's "a b c" (|3-2| = 1)
    out = pair_outputs(_frame(rows), Pairing(systems=["X", "Y"], match=["tense"], max_length_difference=1,
                                             drop_duplicates=False), seed=0)
    assert sorted(map(tuple, out.groupby("item_id")["source_item"].apply(tuple))) == [("x1", "y1"), ("x2", "y2")]


def _dhe_outputs() -> pd.DataFrame:
    from humeval.data.dhe import MODEL_NAMES

    path = shared_data_dir() / "dhe" / "Batch_4444974_batch_results.csv"
    if not path.is_file():
        pytest.skip("DHE data not available (set HUMEVAL_SHARED_DATA)")
    raw = pd.read_csv(path, dtype=str, keep_default_na=False).drop_duplicates("Input.id")
    sides = []
    for k in ("1", "2"):
        sides.append(pd.DataFrame({
            "system": raw[f"Input.model{k}"].map(MODEL_NAMES), "output": raw[f"Input.text{k}"],
            "tense": raw["Input.verb_tense"], "sentiment": raw["Input.sentiment"], "pronoun": raw["Input.pronoun"]}))
    frame = pd.concat(sides, ignore_index=True)
    frame["item_id"] = [f"s{i:04d}" for i in range(len(frame))]  # each output its own id: not aligned
    frame["input"] = frame["tense"] + ", " + frame["sentiment"] + ", " + frame["pronoun"]
    frame["references"] = ""
    return frame


MATCH = ["tense", "sentiment", "pronoun"]


def test_dhe_pairs_match_attributes_and_length_and_are_a_maximum_matching():
    frame = _dhe_outputs()
    spec = Pairing(systems=["CGA", "V1"], match=MATCH, max_length_difference=2)
    out = pair_outputs(frame, spec, seed=7)
    assert out.equals(pair_outputs(frame, spec, seed=7))
    wide = out.pivot(index="item_id", columns="system", values="source_item")
    by_id = frame.set_index("item_id")
    a, b = by_id.loc[wide["CGA"]], by_id.loc[wide["V1"]]
    assert (a[MATCH].to_numpy() == b[MATCH].to_numpy()).all()
    assert (np.abs(token_length(a["output"]) - token_length(b["output"])) <= 2).all()
    assert wide["CGA"].is_unique and wide["V1"].is_unique
    assert not a["output"].duplicated().any() and not b["output"].duplicated().any()
    # independent reference: the maximum bipartite matching per attribute group (SciPy)
    dedup = frame.drop_duplicates(["system", "output"])
    best = 0
    for _, g in dedup.groupby(MATCH):
        la = token_length(g[g["system"] == "CGA"]["output"])
        lb = token_length(g[g["system"] == "V1"]["output"])
        if len(la) and len(lb):
            ok = (np.abs(la[:, None] - lb[None, :]) <= 2).astype(float)
            r, c = linear_sum_assignment(-ok)
            best += int(ok[r, c].sum())
    assert len(wide) == best > 300


def test_pairs_through_the_sample_and_design_stages(tmp_path):
    frame = _dhe_outputs()
    write_jsonl(tmp_path / "data" / "outputs.jsonl", frame.to_dict("records"))
    write_text(tmp_path / "humeval.yaml", """\
version: 1
study: {name: dhe-pairs, seed: 3}
data: {files: [data/outputs.jsonl], properties: [tense, sentiment, pronoun]}
systems: [CGA, V1]
criteria:
  - name: naturalness
    type: 2afc
    question: Which sentence is more natural?
sampling:
  method: random
  rate: 0.5
  pairing: {systems: [CGA, V1], match: [tense, sentiment, pronoun], max_length_difference: 2}
design: {judgements_per_item: 1, items_per_participant: 25}
""")
    study = StudyFolder.open(tmp_path)
    run_stage(study, "sample")
    run_stage(study, "design")
    tasks = study.read_tasks()
    pairs = study.outputs().frame
    n_pairs = pairs["item_id"].nunique()
    assert len(tasks) == round(n_pairs * 0.5) and all(t.systems == ("CGA", "V1") for t in tasks)
    by_source = frame.set_index("item_id")
    texts = study.outputs().texts
    for t in tasks[:50]:
        rows = pairs[pairs["item_id"] == t.item_id].set_index("system")
        assert texts[(t.item_id, "CGA")].output == by_source.at[rows.at["CGA", "source_item"], "output"]
        assert rows.at["CGA", "tense"] == rows.at["V1", "tense"]
