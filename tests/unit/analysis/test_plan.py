from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from humeval.analysis.agreement_plan import verdict
from humeval.analysis.plan import analyze
from humeval.errors import DataError
from humeval.judgements.exclusion import EXCLUDED_COLUMNS
from humeval.protocol.models import Analysis

from .conftest import make_protocol, rows

NONE = pd.DataFrame(columns=EXCLUDED_COLUMNS)
SHA = "ab" * 32


def _ratings(score, n_items=12, people=3, systems=("A", "B", "C"), criterion="q", seed=0):
    rng = np.random.default_rng(seed)
    return rows([{"participant_id": f"p{p}", "item_id": f"i{i}", "system": s, "criterion": criterion,
                  "value": float(score(s, rng))} for p in range(people) for i in range(n_items) for s in systems])


def test_static_scores_give_h_equal_n_minus_1_alpha_1_and_post_hoc():
    frame = _ratings(lambda s, rng: {"A": 2, "B": 3, "C": 4}[s])
    res = analyze(frame, NONE, make_protocol(), protocol_sha256=SHA)
    q = res.criteria["q"]
    assert q.family == "nonparametric"  # constant groups: Shapiro-Wilk undefined -> non-parametric
    assert all(t.undefined for t in q.normality.tests)
    assert q.omnibus.method == "kruskal_wallis"
    assert q.omnibus.estimate == pytest.approx(len(frame) - 1)
    alpha = q.agreement[0]
    assert alpha.estimate == pytest.approx(1.0) and alpha.verdict == "reliable"
    assert q.posthoc.test == "wilcoxon" and len(q.posthoc.pairs) == 3
    # every answer of a system the same: no interval of its mean (a zero-width one would read as certainty), so
    # the mean ranking, which separates systems by non-overlapping intervals, cannot separate them; the paired
    # bootstrap ranking tests the differences (C - B is 1 on every item) and does
    assert q.rankings["mean"].label == "1.-3. C; 1.-3. B; 1.-3. A"
    assert all((s.no_interval or "").startswith("not enough data: all 36 answers") for s in q.descriptives)
    boot = analyze(frame, NONE, make_protocol(analysis={"bootstrap": 100, "rankings": ["bootstrap"]}),
                   protocol_sha256=SHA).criteria["q"].rankings["bootstrap"]
    assert boot.label == "1. C; 2. B; 3. A"
    assert res.signature.startswith("humeval|protocol:abababab|seed:3|plan:")
    assert res.preregistered is True


def test_normal_scores_choose_anova_and_holm_adjusted_t_tests():
    frame = _ratings(lambda s, rng: {"A": 0.0, "B": 1.0, "C": 3.0}[s] + rng.normal(), n_items=30,
                     systems=("A", "B", "C"))
    protocol = make_protocol(criteria=[{"name": "q", "type": "slider", "question": "How good?", "min": -10,
                                        "max": 10}])
    q = analyze(frame, NONE, protocol, protocol_sha256=SHA).criteria["q"]
    assert q.family == "parametric" and q.omnibus.method == "anova_oneway"
    groups = [frame.loc[frame["system"] == s, "value"] for s in ("A", "B", "C")]
    assert q.omnibus.estimate == pytest.approx(sps.f_oneway(*groups).statistic, rel=1e-9)
    pairs = q.posthoc.pairs
    assert q.posthoc.test == "ttest_paired" and q.posthoc.correction == "holm"
    raw = sorted(p.p_unadjusted for p in pairs)
    assert min(p.p_value for p in pairs) == pytest.approx(min(1.0, raw[0] * 3))
    assert q.agreement[0].level == "interval"


def test_no_significant_omnibus_skips_post_hoc_and_fixed_family_is_used():
    frame = _ratings(lambda s, rng: rng.integers(1, 6), n_items=20, seed=5)
    protocol = make_protocol(analysis={"tests": "parametric", "bootstrap": 100, "alpha": 1e-6})
    q = analyze(frame, NONE, protocol, protocol_sha256=SHA).criteria["q"]
    assert q.normality is None and q.omnibus.method == "anova_oneway"
    assert q.posthoc.pairs == () and "not run" in q.posthoc.skipped


def test_magnitude_scores_are_logged_unless_the_plan_says_otherwise():
    frame = _ratings(lambda s, rng: {"A": 50, "B": 100, "C": 200}[s] * np.exp(rng.normal(0, 0.3)), n_items=10)
    me = {"name": "q", "type": "magnitude", "question": "How good?", "standard": {"text": "std"}}
    logged = analyze(frame, NONE, make_protocol(criteria=[me]), protocol_sha256=SHA).criteria["q"]
    raw = analyze(frame, NONE, make_protocol(criteria=[me], analysis={"log_magnitude": False, "bootstrap": 100}),
                  protocol_sha256=SHA).criteria["q"]
    a = frame.loc[frame["system"] == "A", "value"]
    assert logged.transform == "log" and raw.transform is None
    assert logged.descriptives[0].estimate == pytest.approx(np.log(a).mean())
    assert raw.descriptives[0].estimate == pytest.approx(a.mean())
    assert raw.agreement[0].level == "ratio"


def test_pairwise_win_rates_sign_test_and_bradley_terry():
    protocol = make_protocol(systems=["X", "Y"], criteria=[{"name": "q", "type": "2afc", "question": "Which?",
                                                            "tie": True}],
                             analysis={"rankings": ["bradley-terry"], "agreement": ["krippendorff", "fleiss"],
                                       "bootstrap": 100})
    choices = ["A"] * 14 + ["B"] * 4 + ["tie"] * 2
    frame = rows([{"participant_id": f"p{k % 4}", "item_id": f"i{k // 4}", "system": "X" if k % 2 else "Y",
                   "system_b": "Y" if k % 2 else "X", "choice": c} for k, c in enumerate(choices)])
    q = analyze(frame, NONE, protocol, protocol_sha256=SHA).criteria["q"]
    pair = q.pairs[0]
    wins_x = sum(1 for k, c in enumerate(choices) if (c == "A") == bool(k % 2) and c != "tie")
    assert (pair.a, pair.wins_a, pair.ties) == ("X", wins_x, 2)
    expected = sps.binomtest(wins_x, 18, 0.5)
    assert pair.p_value == pytest.approx(expected.pvalue)
    assert pair.ci_low == pytest.approx(expected.proportion_ci(0.95, "exact").low)
    assert q.win_rates["X"]["Y"] == pytest.approx((wins_x + 1) / 20)
    assert q.rankings["bradley-terry"].systems[0].system in ("X", "Y")
    assert {a.measure for a in q.agreement} == {"krippendorff", "fleiss"}


def test_tidy_tables_carry_the_signature():
    frame = _ratings(lambda s, rng: {"A": 2, "B": 3, "C": 4}[s])
    res = analyze(frame, NONE, make_protocol(), protocol_sha256=SHA)
    tables = res.tables()
    assert set(tables["tests"]["analysis"]) == {"normality", "omnibus", "posthoc"}
    assert (tables["descriptives"]["signature"] == res.signature).all()


def test_everything_excluded_is_a_clear_error():
    frame = _ratings(lambda s, rng: 3, n_items=2)
    excluded = pd.DataFrame([{"scope": "participant", "participant_id": p, "task_id": "", "criterion": "",
                              "system": "", "rule": "straight-lining", "detail": ""} for p in ("p0", "p1", "p2")])
    with pytest.raises(DataError, match="no valid judgements left after exclusion"):
        analyze(frame, excluded, make_protocol(), protocol_sha256=SHA)


@pytest.mark.parametrize(("value", "expected"), [(0.85, "reliable"), (0.8, "reliable"), (0.7, "tentative"),
                                                 (0.667, "tentative"), (0.5, "insufficient"), (None, "undefined")])
def test_agreement_thresholds(value, expected):
    assert verdict(value, Analysis()) == expected


def test_stopping_rule_is_replayed_in_submission_order():
    protocol = make_protocol(systems=["X", "Y"], criteria=[{"name": "q", "type": "2afc", "question": "Which?"}],
                             stopping={"rule": "anytime", "delta": 0.05, "systems": ["X", "Y"]},
                             analysis={"rankings": [], "agreement": [], "bootstrap": 100})
    frame = rows([{"participant_id": f"p{k}", "item_id": f"i{k}", "system": "X", "system_b": "Y",
                   "choice": "A" if k % 10 else "B", "submitted_at": f"2025-01-01T00:{k // 60:02d}:{k % 60:02d}"}
                  for k in range(120)])
    stopping = analyze(frame, NONE, protocol, protocol_sha256=SHA).criteria["q"].stopping
    assert stopping.decision == "X" and stopping.outcome == "A" and 1 < stopping.n <= 120
    assert [p["n"] for p in stopping.path] == list(range(1, stopping.n + 1))
    assert stopping.after_decision == 120 - stopping.n
    decided = stopping.path[stopping.n - 1]
    assert decided["reachable_a"] and decided["estimate"] >= decided["threshold_a"]


def test_an_item_without_judgements_of_one_system_still_ranks():
    # exclusions or an incomplete collection can leave an item without a system's judgements
    frame = _ratings(lambda s, rng: np.clip(np.round({"A": 2, "B": 3, "C": 4}[s] + rng.normal(0, 1.5)), 1, 5),
                     n_items=40, seed=2)
    frame = frame[~((frame["item_id"] == "i0") & (frame["system"] == "A"))].reset_index(drop=True)
    q = analyze(frame, NONE, make_protocol(analysis={"rankings": ["mean", "bradley-terry"], "bootstrap": 100}),
                protocol_sha256=SHA).criteria["q"]
    ranking = q.rankings["bradley-terry"]
    assert ranking.undefined is None and ranking.battles == 40 * 3 - 2


def test_one_output_tasks_near_separation_give_bradley_terry_no_interval_and_say_why():
    # issue 43 (6): a Likert criterion asked one output per task: the battles are per item, from the mean scores;
    # M23's item mean is above M11's on 29 of 30 items and equal on one, so Bradley-Terry's ratings are finite only
    # through that one tie (half a win each): theta_M23 - theta_M11 = ln(29.5 / 0.5) = ln 59. A resample misses the
    # tie with probability (29/30)^30 = 0.36 and then has no MLE: no interval, and the record says why
    items = [f"i{i:02d}" for i in range(30)]
    values = {"M23": [4, 5, 4], "M11": [2, 3, 2]}
    frame = rows([{"participant_id": f"p{p}", "item_id": item, "system": s,
                   "value": 3.0 if item == "i00" else float(values[s][p] + (k % 2) * (s == "M23"))}
                  for p in range(3) for k, item in enumerate(items) for s in ("M11", "M23")])
    protocol = make_protocol(systems=["M11", "M23"], analysis={"rankings": ["bootstrap", "bradley-terry"],
                                                                "bootstrap": 400})
    q = analyze(frame, NONE, protocol, protocol_sha256=SHA).criteria["q"]
    assert q.battles_from.startswith("per item (mean scores): each task holds one output")
    bt = q.rankings["bradley-terry"]
    assert bt.battles == 30 and bt.extra["battles_from"] == q.battles_from
    assert bt.extra["near_separation"] is True
    assert 0.55 < bt.extra["n_boot_valid"] / 400 < 0.72  # about 1 - 0.36
    gap = 400 / np.log(10) * np.log(59)
    assert bt.systems[0].system == "M23"
    assert bt.systems[0].estimate - bt.systems[1].estimate == pytest.approx(gap)
    for row in bt.systems:
        assert row.ci_low is None and row.ci_high is None
        assert "near-perfect separation" in row.no_interval and "rest on 1 of 30 battle(s)" in row.no_interval
    assert bt.label == "1.-2. M23 + M11"  # no interval: Bradley-Terry separates nothing
    assert q.rankings["bootstrap"].label == "1. M23; 2. M11"  # the paired bootstrap on the item means does


def test_pairwise_style_controlled_ranking_beside_bradley_terry():
    # X's answers are long and win only when they are the longer one: style control moves its advantage to length
    protocol = make_protocol(systems=["X", "Y", "Z"], criteria=[{"name": "q", "type": "2afc", "question": "Which?"}],
                             analysis={"rankings": ["bradley-terry", "style-controlled"], "bootstrap": 100})
    rng = np.random.default_rng(0)
    texts, records = {}, []
    for k in range(300):
        item = f"i{k}"
        for s in "XYZ":
            texts[(item, s)] = "x" * int(rng.integers(20, 400))
        a, b = rng.choice(list("XYZ"), 2, replace=False)
        longer = len(texts[(item, a)]) > len(texts[(item, b)])
        choice = "A" if (rng.random() < 0.8) == longer else "B"
        records.append({"participant_id": f"p{k % 7}", "item_id": item, "system": a, "system_b": b, "choice": choice})
    frame = rows(records)
    q = analyze(frame, NONE, protocol, protocol_sha256=SHA, texts=texts).criteria["q"]
    styled, plain = q.rankings["style-controlled"], q.rankings["bradley-terry"]
    assert styled.undefined is None and plain.undefined is None and styled.battles == 300
    coef = styled.extra["coefficients"]
    assert coef["length"]["ci_low"] > 0.5 and set(styled.extra["dropped"]) == {"headers", "lists", "bold"}
    assert styled.extra["n_decisive"] == 300 and styled.extra["length_unit"] == "characters"
    without = analyze(frame, NONE, protocol, protocol_sha256=SHA).criteria["q"].rankings["style-controlled"]
    assert "no output texts" in without.undefined
