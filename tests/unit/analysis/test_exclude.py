from __future__ import annotations

import pandas as pd
import pytest

from humeval.design.tasks import ParticipantList, Task
from humeval.errors import DataError
from humeval.judgements.exclusion import exclusion_counts, exclusions, valid_judgements

from .conftest import make_protocol, rows


def test_straight_lining_excludes_only_constant_participants():
    protocol = make_protocol(exclusion=[{"rule": "straight-lining", "min_tasks": 3}])
    frame = rows([{"participant_id": "same", "item_id": f"i{k}", "system": "A", "value": 4.0} for k in range(3)]
                 + [{"participant_id": "varied", "item_id": f"i{k}", "system": "A", "value": float(k + 1)}
                    for k in range(3)]
                 + [{"participant_id": "short", "item_id": f"i{k}", "system": "A", "value": 4.0} for k in range(2)])
    out = exclusions(frame, protocol)
    assert out["participant_id"].tolist() == ["same"]
    assert out["rule"].tolist() == ["straight-lining"] and "'4' for all 3 tasks" in out["detail"].iloc[0]


def test_attention_uses_expected_answers_from_the_lists():
    protocol = make_protocol(exclusion=[{"rule": "attention", "max_failures": 0}])
    lists = [ParticipantList("L1", 0, [Task("att-1", "att", ("A",), ("q",), "single", kind="attention", expected=1)])]
    frame = rows([{"participant_id": "good", "item_id": "att", "system": "A", "value": 1.0, "kind": "attention",
                   "task_id": "att-1"},
                  {"participant_id": "bad", "item_id": "att", "system": "A", "value": 5.0, "kind": "attention",
                   "task_id": "att-1"}])
    out = exclusions(frame, protocol, lists)
    assert out["participant_id"].tolist() == ["bad"]


def test_min_time_judgement_and_participant_scope():
    frame = rows([{"participant_id": "p", "item_id": "i1", "system": "A", "value": 2.0, "seconds": 1.0},
                  {"participant_id": "p", "item_id": "i2", "system": "A", "value": 2.0, "seconds": 30.0},
                  {"participant_id": "q", "item_id": "i1", "system": "A", "value": 2.0, "seconds": None}])
    by_judgement = exclusions(frame, make_protocol(exclusion=[{"rule": "min-time", "seconds": 5,
                                                               "scope": "judgement"}]))
    assert by_judgement[["scope", "participant_id", "task_id"]].values.tolist() == [["judgement", "p", "i1|A|q"]]
    kept = valid_judgements(frame, by_judgement)
    assert len(kept) == 2 and len(frame) == 3  # the input is not modified
    lenient = make_protocol(exclusion=[{"rule": "min-time", "seconds": 15}])  # p's median is 15.5 s
    counts = exclusion_counts(frame, exclusions(frame, lenient), lenient)
    assert counts["participants_excluded"] == 0 and counts["untimed"] == 1
    strict = make_protocol(exclusion=[{"rule": "min-time", "seconds": 16}])
    assert exclusions(frame, strict)["participant_id"].tolist() == ["p"]


def test_inconsistent_compares_chosen_systems_not_positions():
    protocol = make_protocol(
        criteria=[{"name": "q", "type": "2afc", "question": "Which?"}],
        exclusion=[{"rule": "inconsistent", "max_failures": 0}])
    base = {"item_id": "i1", "criterion": "q"}
    frame = rows([
        # consistent: chose A's output first time, then the same system shown second
        base | {"participant_id": "ok", "task_id": "t1", "system": "X", "system_b": "Y", "choice": "A"},
        base | {"participant_id": "ok", "task_id": "t1|repeat", "kind": "repeat", "system": "Y", "system_b": "X",
                "choice": "B"},
        base | {"participant_id": "flip", "task_id": "t1", "system": "X", "system_b": "Y", "choice": "A"},
        base | {"participant_id": "flip", "task_id": "t1|repeat", "kind": "repeat", "system": "X", "system_b": "Y",
                "choice": "B"},
    ])
    lists = [ParticipantList("L", 0, [Task("t1|repeat", "i1", ("A",), ("q",), "single", kind="repeat", repeat_of="t1")])]
    out = exclusions(frame, protocol, lists)
    assert out["participant_id"].tolist() == ["flip"]


def test_no_rules_excludes_nothing(protocol):
    frame = rows([{"participant_id": "p", "item_id": "i1", "system": "A", "value": 2.0}])
    out = exclusions(frame, protocol)
    assert out.empty
    counts = exclusion_counts(frame, out, protocol)
    assert counts["judgements_kept"] == 1 and counts["rules"] == []
    assert isinstance(valid_judgements(frame, out), pd.DataFrame)


def test_the_rules_take_plain_columns_as_the_server_gives_them():
    """exclusion_rows on a mapping of column -> list (no pandas, as the live store calls it) gives the same
    records as exclusions on the DataFrame; missing values may be None."""
    from humeval.judgements.exclusion import exclusion_rows

    protocol = make_protocol(exclusion=[{"rule": "straight-lining", "min_tasks": 2},
                                        {"rule": "min-time", "seconds": 5, "scope": "participant"}])
    frame = rows([{"participant_id": "same", "item_id": f"i{k}", "system": "A", "value": 4.0, "seconds": 2.0}
                  for k in range(3)]
                 + [{"participant_id": "slow", "item_id": f"i{k}", "system": "A", "value": float(k), "seconds": 9.0}
                    for k in range(3)]
                 + [{"participant_id": "untimed", "item_id": "i1", "system": "A", "value": 1.0, "seconds": None}])
    table = {c: [None if pd.isna(v) else v for v in frame[c]] for c in frame.columns}
    records = exclusion_rows(table, protocol)
    assert records == exclusions(frame, protocol).to_dict("records")
    assert [(r["participant_id"], r["rule"]) for r in records] == [("same", "straight-lining"), ("same", "min-time")]
    with pytest.raises(DataError, match=r"lack the column\(s\) task_id"):
        exclusion_rows({"participant_id": []}, protocol)


def test_qualification_counts_by_hand() -> None:
    """Two qualification checks (q1 asks A, q2 asks B) and a later check: P1 passes both at once; P2 fails q2, then
    answers it as asked (revision 1); P3 fails q1 twice; P4 answers only the later check (not the qualification)."""
    import pandas as pd

    from humeval.judgements import normalise_judgements
    from humeval.judgements.exclusion import qualification_counts

    rows = [("P1", "q1", "A", 0), ("P1", "q2", "B", 0), ("P2", "q1", "A", 0), ("P2", "q2", "B", 1),
            ("P3", "q1", "B", 1), ("P3", "q2", "B", 0), ("P4", "later", "B", 0)]
    frame = normalise_judgements(pd.DataFrame(
        [{"participant_id": p, "task_id": t, "kind": "attention", "item_id": t, "criterion": "quality", "system": "s",
          "choice": c, "revision": r} for p, t, c, r in rows]))
    expected = {"q1": "A", "q2": "B", "later": "A"}
    assert qualification_counts(frame, expected, {"q1", "q2"}, 0) == {
        "participants": 3, "passed": 2, "passed_retried": 1, "failed": 1, "retried": 2}
    # one failure tolerated: P3 passes too, with a second attempt at q1 (a retried pass)
    assert qualification_counts(frame, expected, {"q1", "q2"}, 1) == {
        "participants": 3, "passed": 3, "passed_retried": 2, "failed": 0, "retried": 2}
