"""The report never looks more certain than its data: the banner of incomplete or undecided results, every
planned ranking and whether they agree, "not enough data" in place of a refused interval, counts in answers."""

from __future__ import annotations

from typing import Any

from humeval.analysis.status import caveats
from humeval.report.build import build_report
from humeval.report.document import render_html, render_markdown
from humeval.results import FORMAT_VERSION, Results

from ..analysis.conftest import make_protocol

COMPLETE = {"complete": True, "required_per_task": 3, "tasks": 10, "tasks_incomplete": 0, "judgements_missing": 0}
SHORT = {"complete": False, "required_per_task": 3, "tasks": 144, "tasks_incomplete": 144, "judgements_missing": 408}


def _system(name: str, lo: int, hi: int, est: float, ci: tuple[float, float] | None, **extra: Any) -> dict[str, Any]:
    return {"system": name, "rank_low": lo, "rank_high": hi, "estimate": est, "ci_low": ci and ci[0],
            "ci_high": ci and ci[1], "p_value": None, "n": 4, "method": "m", **extra}


def _results(rankings: dict[str, Any], stopping: dict[str, Any] | None = None, crit_type: str = "likert") -> Results:
    crit: dict[str, Any] = {"type": crit_type, "question": "How good?", "rankings": rankings}
    if stopping:
        crit["stopping"] = stopping
    return Results.from_json({"format_version": FORMAT_VERSION, "signature": "sig", "systems": ["A", "B", "C"], "plan": {"alpha": 0.05},
                              "counts": {"judgements": 1154, "participants": 42, "excluded": 126, "invalid": 0,
                                         "attention_or_repeat": 86, "analysed": 942, "participants_analysed": 38},
                              "criteria": {"q": crit}})


BOOT = {"method": "bootstrap", "label": "1. A; 2. B; 3. C",
        "systems": [_system("A", 1, 1, 5.3, (5.2, 5.4)), _system("B", 2, 2, 4.6, (4.5, 4.7)),
                    _system("C", 3, 3, 3.9, (3.8, 4.0))]}
TRUESKILL_TIE = {"method": "trueskill", "label": "1. A; 2.-3. B + C",
                 "systems": [_system("A", 1, 1, 30.0, (27.0, 33.0)), _system("B", 2, 3, 25.0, (22.0, 28.0)),
                             _system("C", 2, 3, 24.0, None, no_interval="not enough data: the central 95% ...")]}


def test_caveats_incomplete_and_undecided() -> None:
    undecided = {"criterion": "q", "rule": "anytime", "delta": 0.05, "anytime_valid": True, "outcome": "continue",
                 "decision": "continue", "a": "A", "b": "B", "n": 7}
    res = _results({"bootstrap": BOOT}, stopping=undecided, crit_type="2afc")
    texts = caveats(res, SHORT)
    assert texts[0].startswith("INCOMPLETE, PRELIMINARY RESULTS: 408 judgements of the 432 the design asks for")
    assert texts[1].startswith("UNDECIDED: q (A vs B): the stopping rule has not decided after n = 7")
    assert caveats(_results({"bootstrap": BOOT}, stopping=undecided | {"outcome": "A"}), COMPLETE) == []
    assert caveats(_results({"bootstrap": BOOT}), None)[0].startswith("PRELIMINARY: collation has not been run")
    horizon = caveats(_results({}, stopping=undecided | {"outcome": "horizon"}), COMPLETE)
    assert "reached its horizon without a decision" in horizon[0]


def test_incomplete_report_opens_with_the_banner() -> None:
    protocol = make_protocol()
    report = build_report(protocol, _results({"bootstrap": BOOT}), design={}, collation=SHORT, exclusion=None)
    html = render_html(report)
    assert html.index('class="banner"') < html.index("Key results")
    assert "408 judgements of the 432" in html
    md = render_markdown(report)
    assert md.split("\n")[2].startswith("> INCOMPLETE, PRELIMINARY RESULTS")  # right under the title
    complete = render_html(build_report(protocol, _results({"bootstrap": BOOT}), design={}, collation=COMPLETE,
                                        exclusion=None))
    assert 'class="banner"' not in complete


def test_key_results_show_every_ranking_and_their_disagreement() -> None:
    protocol = make_protocol()
    md = render_markdown(build_report(protocol, _results({"bootstrap": BOOT, "trueskill": TRUESKILL_TIE}),
                                      design={}, collation=COMPLETE, exclusion=None))
    key = md.split("## Key results", 1)[1].split("\n## ", 1)[0]
    assert ("Rankings of q: the planned methods differ in which systems they can separate (no method contradicts "
            "another): bootstrap: 1. A; 2. B; 3. C; trueskill: 1. A; 2.-3. B + C.") in key
    assert "| q | bootstrap | 1-1 | A |" in key and "| q | trueskill | 2-3 | B |" in key  # both methods' rows
    assert "| q | trueskill | 2-3 | C | 24 [interval: not enough data] | 4 |" in key
    swapped = {"method": "elo", "label": "1. A; 2. C; 3. B",
               "systems": [_system("A", 1, 1, 1100.0, (1050.0, 1150.0)), _system("C", 2, 2, 1000.0, (980.0, 1020.0)),
                           _system("B", 3, 3, 900.0, (850.0, 950.0))]}
    md = render_markdown(build_report(protocol, _results({"bootstrap": BOOT, "elo": swapped}), design={},
                                      collation=COMPLETE, exclusion=None))
    assert "the planned methods CONTRADICT each other" in md and "elo: 1. A; 2. C; 3. B." in md
    agree = render_markdown(build_report(protocol, _results({"bootstrap": BOOT, "mean": BOOT | {"method": "mean"}}),
                                         design={}, collation=COMPLETE, exclusion=None))
    assert "the 2 planned methods (bootstrap, mean) agree: 1. A; 2. B; 3. C." in agree


def test_refused_interval_reads_not_enough_data_in_the_criterion_tables() -> None:
    md = render_markdown(build_report(make_protocol(), _results({"trueskill": TRUESKILL_TIE}), design={},
                                      collation=COMPLETE, exclusion=None))
    assert "| C | 2-3 | 24 | not enough data |  | – | 4 |" in md


def test_counts_are_answers_and_say_what_was_excluded() -> None:
    md = render_markdown(build_report(make_protocol(exclusion=[{"rule": "straight-lining"}]), _results({}),
                                      design={}, collation=COMPLETE,
                                      exclusion={"participants_excluded": 4, "participants_total": 42,
                                                 "judgements_excluded": 126, "judgements_total": 1154, "rules": []}))
    assert "1154 answers from 42 participants" in md and "Left out: 126 answers by the preregistered" in md
    assert "Analysed: 942 answers from 38 participants." in md
    assert "4 of 42 participants and 126 of 1154 answers excluded" in md
    assert " judgements from " not in md  # the word is kept for what participants submit (docs/data-model.md)


def test_key_results_leave_out_a_ranking_without_intervals_and_say_why() -> None:
    # issue 43 (6): Bradley-Terry under near-perfect separation has point ratings (1338 vs 662) and no interval;
    # listed as a key result it read "1-2, M23 1338 vs M11 662 [interval: not enough data]"
    why = ("not enough data: 326 of 1000 resamples have no value, so a bootstrap interval would hide a tail; "
           "near-perfect separation: ...")
    bt = {"method": "bradley-terry", "label": "1.-2. A + B + C", "battles": 30,
          "extra": {"battles_from": "per item (mean scores): each task holds one output", "near_separation": True},
          "systems": [_system(s, 1, 3, r, None, no_interval=why) for s, r in (("A", 1338.0), ("B", 1000.0),
                                                                                 ("C", 662.0))]}
    md = render_markdown(build_report(make_protocol(), _results({"bootstrap": BOOT, "bradley-terry": bt}), design={},
                                      collation=COMPLETE, exclusion=None))
    key = md.split("## Key results", 1)[1].split("\n## ", 1)[0]
    assert "| q | bradley-terry |" not in key and "1338" not in key
    assert (f"Ranking of q by bradley-terry: not a key result, no interval: {why} (battles per item (mean scores): "
            "each task holds one output).") in key
    assert "| q | bootstrap | 1-1 | A |" in key  # the ranking with intervals stays
    # the rankings' comparison leaves it out rather than reading "differ in which systems they can separate"
    assert "Rankings of q: bootstrap: 1. A; 2. B; 3. C; bradley-terry left out (no interval)." in key
    # the criterion's own section keeps every number, with the reason
    assert "| A | 1-3 | 1338 | not enough data |" in md
    # a paired bootstrap without intervals (every answer the same: no spread) whose tests separate the systems stays
    tests_only = {"method": "bootstrap", "label": "1. A; 2. B; 3. C",
                  "systems": [_system(s, i, i, 5.0 - i, None, no_interval="not enough data: no spread")
                              for i, s in enumerate("ABC", 1)]}
    md = render_markdown(build_report(make_protocol(), _results({"bootstrap": tests_only}), design={},
                                      collation=COMPLETE, exclusion=None))
    assert "| q | bootstrap | 2-2 | B | 3 [interval: not enough data] | 4 |" in md and "not a key result" not in md
