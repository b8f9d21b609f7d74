"""The ``same-side`` exclusion rule on hand-built judgement tables, and what ``straight-lining`` does for 2afc."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from humeval.judgements.exclusion import exclusion_counts, exclusion_rows, exclusions

from .conftest import make_protocol, rows

PAIR = [{"name": "q", "type": "2afc", "question": "Which?", "tie": True},
        {"name": "r", "type": "2afc", "question": "Which reads better?"}]


def _pairs(pid: str, choices: list[str], seed: int = 0, criterion: str = "q") -> list[dict]:
    """One 2afc judgement per task; the systems' sides drawn at random (as ``randomise_order`` shows them)."""
    rng = np.random.default_rng(seed)
    out = []
    for k, choice in enumerate(choices):
        first, second = ("X", "Y") if rng.random() < 0.5 else ("Y", "X")
        out.append({"participant_id": pid, "task_id": f"i{k}|X+Y|{criterion}", "item_id": f"i{k}", "criterion": criterion,
                    "system": first, "system_b": second, "choice": choice})
    return out


def _protocol(**rule):
    return make_protocol(criteria=PAIR, exclusion=[{"rule": "same-side", "min_tasks": 5} | rule])


def test_always_first_is_excluded_whichever_systems_were_shown():
    frame = rows(_pairs("first", ["A"] * 8) + _pairs("second", ["B"] * 8, seed=1) + _pairs("honest", list("ABBABAAB")))
    out = exclusions(frame, _protocol())
    assert out["participant_id"].tolist() == ["first", "second"]
    assert "shown first (A) in 8 of 8" in out["detail"].iloc[0] and "shown second (B) in 8 of 8" in out["detail"].iloc[1]
    # the chosen *systems* of the always-first clicker vary: a rule on systems would not have caught them
    chosen = np.where(frame["choice"] == "A", frame["system"], frame["system_b"])[frame["participant_id"] == "first"]
    assert set(chosen) == {"X", "Y"}


def test_random_sides_honest_participants_are_kept():
    rng = np.random.default_rng(11)
    honest = [r for p in range(40) for r in _pairs(f"h{p}", list(rng.choice(["A", "B"], 10)), seed=p)]
    assert exclusion_rows(rows(honest), _protocol()) == []  # 2 * 0.5**10 each: expected 0.08 of 40


def test_min_tasks_counts_tasks_answered_a_or_b():
    few = rows(_pairs("p", ["A"] * 4 + ["tie"] * 3))  # 4 sided answers: below min_tasks 5
    assert make_protocol(criteria=PAIR, exclusion=[{"rule": "same-side"}]).exclusion[0].min_tasks == 10  # default
    assert exclusion_rows(few, _protocol()) == []
    assert [r["participant_id"] for r in exclusion_rows(few, _protocol(min_tasks=4))] == ["p"]
    # the ties do not save a side clicker (straight-lining does not see it: the responses differ)
    straight = make_protocol(criteria=PAIR, exclusion=[{"rule": "straight-lining", "min_tasks": 4}])
    assert exclusion_rows(few, straight) == []


def test_tolerance_max_share():
    frame = rows(_pairs("nine", ["A"] * 9 + ["B"]) + _pairs("eight", ["A"] * 8 + ["B"] * 2))
    assert exclusion_rows(frame, _protocol()) == []  # default 1.0: only always the same side
    got = exclusions(frame, _protocol(max_share=0.9))
    assert got["participant_id"].tolist() == ["nine"] and "9 of 10" in got["detail"].iloc[0]
    assert sorted(exclusions(frame, _protocol(max_share=0.8))["participant_id"]) == ["eight", "nine"]
    with pytest.raises(ValidationError):
        _protocol(max_share=0.5)  # half the answers on one side is what an honest participant gives


def test_pools_the_criteria_and_leaves_out_checks_and_ratings():
    frame = rows(_pairs("p", ["A"] * 3, criterion="q") + _pairs("p", ["A"] * 3, criterion="r")
                 + [{"participant_id": "p", "task_id": "att-1", "kind": "attention", "item_id": "att", "criterion": "q",
                     "system": "X", "system_b": "Y", "choice": "B"},
                    {"participant_id": "p", "task_id": "i9|X|q", "item_id": "i9", "criterion": "q", "system": "X",
                     "value": 3.0}])
    out = exclusion_rows(frame, _protocol(min_tasks=6))  # 3 + 3 tasks over two criteria; the check is left out
    assert [r["participant_id"] for r in out] == ["p"] and "6 of 6" in out[0]["detail"]


def test_straight_lining_on_2afc_is_the_side_per_criterion():
    """``straight-lining`` reads a 2afc response as the side chosen: always A is caught per criterion."""
    frame = rows(_pairs("first", ["A"] * 5) + _pairs("honest", list("ABABB")))
    protocol = make_protocol(criteria=PAIR, exclusion=[{"rule": "straight-lining", "min_tasks": 5}])
    out = exclusion_rows(frame, protocol)
    assert [r["participant_id"] for r in out] == ["first"] and "'A' for all 5 tasks" in out[0]["detail"]


def test_counts_per_rule():
    frame = rows(_pairs("first", ["A"] * 6) + _pairs("honest", list("ABABBA")))
    protocol = _protocol()
    counts = exclusion_counts(frame, exclusions(frame, protocol), protocol)
    assert counts["rules"] == [{"rule": "same-side", "parameters": {"min_tasks": 5, "max_share": 1.0},
                                "participants": 1, "only": 1, "judgements": 6}]


def test_every_place_that_names_rules_names_same_side():
    from humeval.platforms.prolific.actions import rejection_message
    from humeval.protocol.models import ProlificSettings, SameSideExclusion
    from humeval.report.prereg import _exclusion_text

    always, most = SameSideExclusion(rule="same-side"), SameSideExclusion(rule="same-side", max_share=0.9, min_tasks=8)
    assert _exclusion_text(always).startswith("same-side:") and "in every pairwise answer" in _exclusion_text(always)
    assert "at least 90% of the pairwise" in _exclusion_text(most) and "at least 8 tasks" in _exclusion_text(most)
    message = rejection_message(most)
    assert len(message) >= 100 and "same side chosen in at least 90% of the comparisons (at least 8)" in message
    settings = ProlificSettings(reject=["attention", "same-side"])
    assert settings.rejection_category("same-side") == "LOW_EFFORT"


def _checked_study():
    """Three participants, two 2afc checks (asking A, then B) and one Likert check (asking 4) each: 'first' clicks A
    everywhere (6 pair tasks), 'low' gives 1 everywhere, 'good' answers the checks as asked and varies."""
    from humeval.design.tasks import ParticipantList, Task

    criteria = [{"name": "q", "type": "2afc", "question": "Which?"},
                {"name": "s", "type": "likert", "question": "How good?", "points": 5}]
    protocol = make_protocol(criteria=criteria, exclusion=[{"rule": "attention"}, {"rule": "same-side", "min_tasks": 6},
                                                           {"rule": "straight-lining", "min_tasks": 3}])
    checks = [Task("att-a", "att-a", ("X", "Y"), ("q",), "pair", kind="attention", expected="A"),
              Task("att-b", "att-b", ("X", "Y"), ("q",), "pair", kind="attention", expected="B"),
              Task("att-4", "att-4", ("X",), ("s",), "single", kind="attention", expected=4)]
    lists = [ParticipantList("L1", 0, checks)]
    records = []
    for pid, side, point, answers in (("first", "A", 1.0, ("A", "A", 1.0)), ("low", None, 1.0, ("A", "B", 1.0)),
                                      ("good", None, None, ("A", "B", 4.0))):
        sides = ["A"] * 6 if side else list("ABABBA")
        records += _pairs(pid, sides, seed=len(pid))
        records += [{"participant_id": pid, "task_id": f"i{k}|X|s", "item_id": f"i{k}", "criterion": "s", "system": "X",
                     "value": point if point is not None else float(k % 5 + 1)} for k in range(4)]
        for task, answer in zip(checks, answers, strict=True):
            row = {"participant_id": pid, "task_id": task.task_id, "kind": "attention", "item_id": task.item_id,
                   "criterion": task.criteria[0], "system": "X"}
            records.append(row | ({"system_b": "Y", "choice": answer} if isinstance(answer, str) else {"value": answer}))
    return protocol, lists, rows(records)


def test_counts_per_rule_only_and_checks_failed_per_answer():
    protocol, lists, frame = _checked_study()
    excluded = exclusions(frame, protocol, lists)
    counts = exclusion_counts(frame, excluded, protocol, lists)
    by_rule = {r["rule"]: (r["participants"], r["only"]) for r in counts["rules"]}
    # first: fails B and 4 (attention), always A (same-side), always 1 and always A (straight-lining);
    # low: fails 4 (attention) and always 1 (straight-lining)
    assert by_rule == {"attention": (2, 0), "same-side": (1, 0), "straight-lining": (2, 0)}
    assert counts["participants_excluded"] == 2
    assert counts["attention_checks"] == [
        {"criterion": "q", "expected": "A", "answered": 3, "failed": 0},
        {"criterion": "q", "expected": "B", "answered": 3, "failed": 1},
        {"criterion": "s", "expected": "4", "answered": 3, "failed": 2}]
    assert "attention_checks" not in exclusion_counts(frame, excluded, protocol)  # without the lists


def test_report_and_stage_summary_show_the_counts():
    from humeval.report.build import _exclusion
    from humeval.report.document import Report, render_markdown
    from humeval.stages.exclude import exclusion_summary

    protocol, lists, frame = _checked_study()
    counts = exclusion_counts(frame, exclusions(frame, protocol, lists), protocol, lists)
    section = _exclusion(counts, protocol)
    md = render_markdown(Report("t", "sig", [], [section]))
    assert "| same-side | min_tasks=6, max_share=1.0 | 1 | 0 | 13 |" in md  # 6 pair tasks, 4 ratings, 3 checks
    assert "| q | B | 3 | 1 |" in md and "| s | 4 | 3 | 2 |" in md
    assert "Attention checks: 3 of 9 answered other than they asked" in md
    summary = exclusion_summary(counts)
    assert {k: v for k, v in summary.items() if k.startswith("by_")} == {
        "by_attention": "2/26", "by_same-side": "1/13", "by_straight-lining": "2/26"}  # participants/judgements
    assert summary["checks_failed"] == "q=A 0/3, q=B 1/3, s=4 2/3"
    assert summary["participants_excluded"] == 2 and not any(isinstance(v, dict | list) for v in summary.values())
