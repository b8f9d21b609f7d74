from __future__ import annotations

import numpy as np
import pandas as pd

from humeval.analysis.plan import analyze
from humeval.judgements.exclusion import EXCLUDED_COLUMNS
from humeval.report.build import build_report
from humeval.report.document import fmt, render_html, render_markdown
from humeval.report.figures import decision_bound_figure, winrate_heatmap
from humeval.report.heds import HEDS_CRITERION_QUESTIONS, HEDS_QUESTIONS, heds_datasheet

from ..analysis.conftest import make_protocol, rows

PNG = b"\x89PNG\r\n\x1a\n"


def _results(protocol):
    rng = np.random.default_rng(1)
    frame = rows([{"participant_id": f"p{p}", "item_id": f"i{i}", "system": s,
                   "value": float(np.clip(round({"A": 2, "B": 3, "C": 4}[s] + rng.normal()), 1, 5))}
                  for p in range(3) for i in range(8) for s in "ABC"])
    return analyze(frame, pd.DataFrame(columns=EXCLUDED_COLUMNS), protocol, protocol_sha256="cd" * 32)


def test_report_html_is_self_contained_and_markdown_links_figures():
    protocol = make_protocol()
    results = _results(protocol)
    report = build_report(protocol, results, design={"tasks": 24}, collation=None, exclusion=None)
    html = render_html(report)
    md = render_markdown(report)
    assert html.count("data:image/png;base64,") == 2  # distribution + mean ranking
    assert "<script" not in html and results.signature in html
    assert "](figures/q-distribution.png)" in md and f"`{results.signature}`" in md
    assert all(f.png.startswith(PNG) for s in report.sections for f in s.figures)


def test_html_escapes_protocol_text():
    protocol = make_protocol(criteria=[{"name": "q", "type": "likert", "question": "<b>bold</b>?", "points": 5}])
    html = render_html(build_report(protocol, _results(protocol), design={}, collation=None, exclusion=None))
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html


def test_heds_answers_or_lists_every_question():
    protocol = make_protocol(exclusion=[{"rule": "straight-lining"}])
    sheet = heds_datasheet(protocol, _results(protocol), lock=None)
    ids = {a["id"] for a in sheet["answers"]} | {u["id"] for u in sheet["unanswered"]}
    assert ids == set(HEDS_QUESTIONS)
    crit = sheet["criteria"]["q"]
    assert {a["id"] for a in crit["answers"]} | {u["id"] for u in crit["unanswered"]} == set(HEDS_CRITERION_QUESTIONS)
    answers = {a["id"]: a["answer"] for a in crit["answers"]}
    assert answers["4.3.3"] == 5 and answers["4.2.2"] == "Absolute" and answers["4.3.7"] == "How good?"
    assert "krippendorff_alpha[ordinal]" in answers["4.3.11"]
    study = {a["id"]: a["answer"] for a in sheet["answers"]}
    assert study["3.3.1"].startswith("No") and "straight-lining" in study["3.2.3"]
    assert all(u["reason"] for u in sheet["unanswered"])


def test_pairwise_figures_render():
    matrix = {"X": {"X": None, "Y": 0.7}, "Y": {"X": 0.3, "Y": None}}
    assert winrate_heatmap(matrix, "t").startswith(PNG)
    path = [{"n": n, "estimate": 0.6, "threshold_a": min(1.0, 0.5 + 1 / n), "threshold_b": max(0.0, 0.5 - 1 / n),
             "reachable_a": 0.5 + 1 / n <= 1, "reachable_b": 0.5 - 1 / n >= 0} for n in range(1, 30)]
    stopping = {"path": path, "a": "X", "b": "Y", "rule": "anytime", "delta": 0.05, "outcome": "A", "decision": "X",
                "n": 29}
    assert decision_bound_figure(stopping, "t").startswith(PNG)


def test_fmt():
    assert fmt(None) == "–" and fmt(float("nan")) == "–" and fmt(0.00001) == "1.00e-05" and fmt(3239.0) == "3239"


def test_ranking_figure_accepts_an_estimate_outside_its_bootstrap_interval():
    from humeval.report.figures import ranking_figure

    systems = [{"system": "X", "estimate": 25.0, "ci_low": 25.5, "ci_high": 27.0},
               {"system": "Y", "estimate": 20.0, "ci_low": None, "ci_high": None}]
    assert ranking_figure(systems, "t", "mu").startswith(PNG)
