"""Each derived number has one implementation: the admin page, collation and the analysis agree."""

from __future__ import annotations

import pandas as pd

from humeval.analysis.collate import collate
from humeval.analysis.pairwise import analyze_pairwise
from humeval.judgements import winners
from humeval.judgements.exclusion import EXCLUDED_COLUMNS, valid_judgements
from humeval.protocol.models import TwoAFC
from humeval.server.agreement import agreement_so_far

from .conftest import make_protocol, rating_tasks, rows

CHOICES = ["A", "B", "tie", "both-bad", "A", "tie", "B", "both-bad", "A", "B", "A", "tie"]


def _pairwise() -> tuple[pd.DataFrame, object]:
    protocol = make_protocol(
        systems=["X", "Y"],
        criteria=[{"name": "q", "type": "2afc", "question": "?", "tie": True, "both_bad": True}],
        analysis={"bootstrap": 100, "agreement": ["krippendorff"]},
    )
    records = [{"participant_id": f"p{k % 3}", "item_id": f"i{k // 3}", "task_id": f"i{k // 3}|X+Y|q",
                "system": "X" if k % 2 else "Y", "system_b": "Y" if k % 2 else "X", "choice": c}
               for k, c in enumerate(CHOICES)]
    return rows(records), protocol


def test_admin_alpha_equals_the_reports_alpha_with_ties():
    frame, protocol = _pairwise()
    report = analyze_pairwise(frame, protocol.criteria[0], protocol.analysis, ["X", "Y"], 3, seed=1)
    alpha = next(r for r in report["agreement"] if r["measure"] == "krippendorff")["estimate"]
    admin = agreement_so_far(protocol, frame.to_dict(orient="records"))
    assert admin[0]["level"] == "nominal"
    assert admin[0]["alpha"] == alpha  # the same units, codes and level: the same number


def test_one_winner_definition():
    frame, _ = _pairwise()
    expected = [TwoAFC.winner(c, a, b) for c, a, b in zip(frame["choice"], frame["system"], frame["system_b"], strict=True)]
    assert winners(frame).tolist() == expected
    assert expected[:4] == ["Y", "Y", "tie", "both-bad"]


def test_collation_and_analysis_apply_the_same_exclusion_mask(protocol):
    frame = rows([{"participant_id": p, "item_id": i, "system": s, "value": 3.0}
                  for p in ("p1", "p2") for i in ("i1", "i2") for s in ("A", "B")])
    # a judgement-scope exclusion of p1's rating of system C on task i1|A|q: it names no row of the table
    excluded = pd.DataFrame([{"scope": "judgement", "participant_id": "p1", "task_id": "i1|A|q", "criterion": "q",
                              "system": "C", "rule": "min-time", "detail": "stale"}], columns=EXCLUDED_COLUMNS)
    kept = valid_judgements(frame, excluded)
    assert len(kept) == len(frame)  # the analysis keeps every row ...
    result = collate(frame, rating_tasks(["i1", "i2"], ["A", "B"]), protocol, excluded=excluded)
    assert result.complete  # ... and so does collation (it once dropped p1's whole task)
