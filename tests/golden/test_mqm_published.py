"""WMT MQM read from Google's own file: the segment scores match the published per-segment averages.

Data: the first 10 segments (155 error rows, 14 systems) of ``ted/ende/mqm_ted_ende.tsv`` and the same
segments of ``ted/ende/mqm_ted_ende.avg_seg_scores.tsv`` from google/wmt-mqm-human-evaluation (commit
7fadea2, Apache License 2.0; Freitag et al. 2021, "Experts, Errors, and Context"), copied unchanged.
The whole file read the same way (7,406 judgements) gives every published system score of the
repository's README table (ref.A 0.91 ... Nemo 2.14) and matches all 6,877 published segment
averages exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from humeval.formats.mqm import MQM_WORST, read_mqm

DATA = Path(__file__).parent / "data"


def test_segment_scores_match_the_published_averages() -> None:
    frame = read_mqm(DATA / "mqm_ted_ende.seg1-10.tsv")
    score = frame["spans"].map(lambda s: sum(e["weight"] for e in json.loads(s)))
    ours = score.groupby([frame["system"], frame["item_id"]]).mean()
    published = pd.read_csv(DATA / "mqm_ted_ende.avg_seg_scores.seg1-10.tsv", sep=r"\s+")
    published = published.assign(item_id=published["seg_id"].astype(str)).set_index(["system", "item_id"])
    both = ours.index.intersection(published.index)
    assert len(both) == 130  # every (system, segment) of the excerpt named alike in both files
    for key in both:  # Google's scores are negated (higher is better)
        assert ours[key] == pytest.approx(-published.loc[key, "mqm_avg_score"], abs=1e-9), key
    # the value on the esa scale is the same score, 100 - 4 x min(score, 25)
    assert (frame["value"] == 100 - 100 / MQM_WORST * score.clip(upper=MQM_WORST)).all()
