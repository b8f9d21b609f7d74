"""Best-worst scaling (humeval.tasks.bws): the balanced design, the value checks and long rows, the dummy answers, and
the statistics against a hand-computed case and an independent fit (scipy.optimize on the same likelihood)."""

from __future__ import annotations

import re
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from humeval.errors import ProtocolError
from humeval.protocol.models import Protocol
from humeval.tasks import InvalidValue
from humeval.tasks.base import MISSING
from humeval.tasks.bws import (
    balanced_tuples,
    bradley_terry_mle,
    counting_scores,
    implied_pairs,
    maxdiff_fit,
)


def _criterion(**extra: object):
    protocol = Protocol.model_validate({
        "study": {"name": "s", "seed": 1}, "data": {"files": ["d.jsonl"]},
        "criteria": [{"name": "q", "type": "bws", "question": "Best and worst?", **extra}]})
    return protocol.criterion("q")


def _co_occurrence(tuples: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((k, k), dtype=int)
    for t in tuples.reshape(-1, tuples.shape[-1]):
        for a, b in combinations(t, 2):
            out[a, b] += 1
            out[b, a] += 1
    return out


# --------------------------------------------------------------------------- design


@pytest.mark.parametrize(("k", "n"), [(4, 3), (5, 3), (6, 4), (7, 5), (10, 4)])
def test_cyclic_tuples_show_each_system_n_times_an_item_and_spread_pairs_evenly(k: int, n: int) -> None:
    tuples = balanced_tuples(k, n, 60, "cyclic", 11)
    assert tuples.shape == (60, k, n)
    for item in tuples:  # every tuple holds n different systems, every system appears n times in every item
        assert all(len(set(t)) == n for t in item.tolist())
        assert np.bincount(item.ravel(), minlength=k).tolist() == [n] * k
    co = _co_occurrence(tuples, k)[~np.eye(k, dtype=bool)]
    mean = 60 * k * n * (n - 1) / (k * (k - 1))  # each item adds k windows of n(n-1)/2 pairs over k(k-1)/2 pairs
    assert co.mean() == pytest.approx(mean)
    # the greedy choice of permutations keeps every pair's count within 10 % of the others (measured: 10 systems,
    # tuples of 4, 60 items: 77-83 around 80; one random permutation per item instead: 67-102)
    assert co.max() - co.min() <= max(2, 0.1 * mean)
    assert np.array_equal(tuples, balanced_tuples(k, n, 60, "cyclic", 11))  # seeded
    assert not np.array_equal(tuples, balanced_tuples(k, n, 60, "cyclic", 12))


def test_the_complete_design_balances_appearances_and_pairs_exactly() -> None:
    tuples = balanced_tuples(5, 3, 2, "complete", 0)
    assert tuples.shape == (2, 10, 3)  # C(5, 3)
    assert np.bincount(tuples[0].ravel()).tolist() == [6] * 5  # C(4, 2)
    co = _co_occurrence(tuples[:1], 5)
    assert (co[~np.eye(5, dtype=bool)] == 3).all()  # C(3, 1)


def test_the_design_asks_the_type_and_refuses_too_few_systems() -> None:
    c = _criterion(tuple_size=3)
    shown = c.task.shown_systems(c, ["i1", "i2"], ["a", "b", "c", "d"], [], 5)
    assert len(shown) == 2 and all(len(item) == 4 and all(len(t) == 3 for t in item) for item in shown)
    with pytest.raises(ProtocolError, match=r"'q' \(bws\) shows tuple_size 4 outputs a task, but the study has 3"):
        c.task.shown_systems(_criterion(), ["i1"], ["a", "b", "c"], [], 5)


def test_build_tasks_writes_the_tuples() -> None:
    from humeval.design.tasks import build_tasks

    protocol = Protocol.model_validate({
        "study": {"name": "s", "seed": 3}, "data": {"files": ["d.jsonl"]}, "systems": ["a", "b", "c", "d", "e"],
        "criteria": [{"name": "q", "type": "bws", "question": "?", "tuple_size": 3},
                     {"name": "r", "type": "bws", "question": "?", "tuple_size": 3},
                     {"name": "l", "type": "likert", "question": "?"}],
        "presentation": {"setup": "joint"}})
    tasks = build_tasks(protocol, ["i1", "i2"], ["a", "b", "c", "d", "e"])
    bws = [t for t in tasks if t.criteria == ("q", "r")]  # two bws criteria of one tuple size: asked together
    assert len(bws) == 10 and all(len(t.systems) == 3 and t.family == "multi" for t in bws)
    assert len([t for t in tasks if t.criteria == ("l",)]) == 10


# --------------------------------------------------------------------------- values


def test_check_form_and_rows() -> None:
    c = _criterion()
    task = c.task
    assert task.check(c, {"best": 2, "worst": 0}, "values.q", 4, None) == {"best": 2, "worst": 0}
    for bad, said in [({"best": 1, "worst": 1}, "the best and the worst are the same output (1)"),
                      ({"best": 4, "worst": 0}, "best: expected the position of one of the 4 outputs shown (0 to 3)"),
                      ({"best": True, "worst": 0}, "best: expected the position"), ({"best": 0}, "'best' and 'worst'"),
                      (3, "an object with 'best' and 'worst'"), ({"best": 0, "worst": -1}, "worst: expected"),
                      ({"best": 0, "worst": 1, "x": 2}, "got {'best'")]:
        with pytest.raises(InvalidValue, match=re.escape(said)) as info:
            task.check(c, bad, "values.q", 4, None)
        assert info.value.field == "values.q", bad
    assert task.form_value(c, {"q.best": "1", "q.worst": "3"}, 4) == {"best": 1, "worst": 3}
    assert task.form_value(c, {}, 4) is MISSING
    assert task.form_value(c, {"q.best": "x"}, 4) == {"best": "x", "worst": None}
    rows = task.long_rows(c, {"best": 2, "worst": 0}, ["s1", "s2", "s3", "s4"], {"kind": "task"}, None)
    assert [(r["system"], r["position"], r["value"], r["choice"]) for r in rows] == [
        ("s1", 0, -1.0, "worst"), ("s2", 1, 0.0, "neither"), ("s3", 2, 1.0, "best"), ("s4", 3, 0.0, "neither")]
    check = task.long_rows(c, task.attention_answer(c, "B", 4), ["s1", "s2", "s3", "s4"], {"kind": "attention"}, None)
    assert {r["choice"] for r in check} == {"B"}  # what the exclusion rule compares with the expected "B"
    off, valid = task.off_scale(c, np.array([1.0, 0.0, -1.0, 0.5, 2.0]))
    assert off.tolist() == [False, False, False, True, True] and "worst" in valid
    assert task.values_schema(c)["properties"]["best"]["maximum"] == 3


def test_answers_of_dummies_cheap_clickers_and_simulated_participants() -> None:
    c = _criterion()
    task = c.task
    assert task.cheap_answer(c, 0.0, 4) == {"best": 0, "worst": 3}
    assert task.cheap_answer(c, 1.0, 4) == {"best": 3, "worst": 0}
    assert task.cheap_answer(c, 0.5, 3) == {"best": 1, "worst": 2}  # the middle: still two different outputs
    assert task.shaped(c, np.array([0.2, 0.9, 0.1, 0.5])) == {"best": 1, "worst": 2}
    assert task.shaped(c, np.array([0.5, 0.5, 0.5])) == {"best": 0, "worst": 2}
    for expected in task.check_answers(c):
        task.check(c, task.attention_answer(c, expected, 3), "values.q", 3, None)
    scores = np.array([0.2, 0.9, 0.1, 0.5, 0.3, 0.3, 0.3, 0.7, 0.7, 0.7, 0.7, 0.7])
    judgement = np.repeat([0, 1, 2], 4)
    attention = np.repeat([False, False, True], 4)
    expected = np.array([None] * 8 + ["B"] * 4, dtype=object)
    value, choice = task.dummy_rows(c, scores, judgement, attention, expected)
    # the highest score is the best, the lowest the worst (of equal lowest, the first); the check asks for B as the best
    assert value.tolist() == [0, 1, -1, 0, -1, 0, 0, 1, 0, 1, 0, -1]
    assert choice.tolist()[:8] == ["neither", "best", "worst", "neither", "worst", "neither", "neither", "best"]
    assert choice.tolist()[8:] == ["B"] * 4


# --------------------------------------------------------------------------- statistics

# 15 judgements of three systems a, b, c, each a full order (best, middle, worst), written out by hand:
# abc x7, acb x2, bac x3, cab x1, cba x2. The implied pairs are then every pair once a judgement, a beats b 10 times
# of 15, b beats c 10 of 15, a beats c 12 of 15: odds 2, 2 and 4, the Bradley-Terry model with strengths 4 : 2 : 1
# fits them exactly, so the MLE is log(4, 2, 1) centred: (log 2, 0, -log 2).
ORDERS = ["abc"] * 7 + ["acb"] * 2 + ["bac"] * 3 + ["cab"] * 1 + ["cba"] * 2


def _rows(orders: list[str]) -> pd.DataFrame:
    rows = []
    for j, order in enumerate(orders):
        for role, system in zip((1.0, 0.0, -1.0), order, strict=True):
            rows.append({"judgement": f"j{j}", "participant": f"p{j % 3}", "system": system, "value": role})
    return pd.DataFrame(rows)


def test_counting_scores_and_maxdiff_on_the_hand_case() -> None:
    frame = _rows(ORDERS)
    counts = counting_scores(frame["system"], frame["value"], frame["participant"], n_boot=200, seed=1)
    # a: best 9 (abc, acb), worst 2 (cba); b: best 3, worst 3; c: best 3, worst 10 (abc, bac)
    assert counts.systems == ("a", "b", "c")
    assert counts.best.tolist() == [9, 3, 3] and counts.worst.tolist() == [2, 3, 10]
    assert counts.estimate == pytest.approx([7 / 15, 0, -7 / 15])
    assert (counts.ci_low <= counts.estimate).all() and (counts.estimate <= counts.ci_high).all()
    fit = maxdiff_fit(frame["judgement"], frame["system"], frame["value"], frame["participant"], n_boot=200, seed=2)
    assert fit.pairs == 45 and fit.undefined is None
    assert fit.estimate == pytest.approx([np.log(2), 0.0, -np.log(2)], abs=1e-9)
    # b's strength is 0 in the fit and in every resample, up to rounding (about 1e-16 either side): the bounds are
    # compared within 1e-12, else the check depends on the last bit of the solver's arithmetic
    assert (fit.ci_low <= fit.estimate + 1e-12).all() and (fit.estimate <= fit.ci_high + 1e-12).all()
    assert fit.ci_low[1] == pytest.approx(0.0, abs=1e-12) and fit.ci_high[1] == pytest.approx(0.0, abs=1e-12)


def test_implied_pairs_are_2n_minus_3_per_judgement() -> None:
    judgement = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    system = np.array([0, 1, 2, 3, 3, 2, 1, 0])
    value = np.array([1, 0, 0, -1, 0, -1, 1, 0])
    j, win, lose = implied_pairs(judgement, system, value)
    got = sorted(zip(j.tolist(), win.tolist(), lose.tolist(), strict=True))
    assert got == sorted([(0, 0, 1), (0, 0, 2), (0, 0, 3), (0, 1, 3), (0, 2, 3),
                          (1, 1, 3), (1, 1, 0), (1, 1, 2), (1, 3, 2), (1, 0, 2)])


def _scipy_bt(wins: np.ndarray) -> np.ndarray:
    """The Bradley-Terry MLE by scipy's BFGS on the negative log-likelihood, the first strength fixed at 0."""
    k = len(wins)

    def nll(free: np.ndarray) -> float:
        theta = np.concatenate([[0.0], free])
        diff = theta[:, None] - theta[None, :]
        return float((wins * np.logaddexp(0.0, -diff)).sum())

    res = minimize(nll, np.zeros(k - 1), method="BFGS", options={"gtol": 1e-10})
    theta = np.concatenate([[0.0], res.x])
    return theta - theta.mean()


def test_the_newton_fit_equals_scipy_on_simulated_best_worst_judgements() -> None:
    rng = np.random.default_rng(4)
    truth = np.array([0.8, 0.3, 0.0, -0.4, -0.9])
    tuples = balanced_tuples(5, 4, 30, "cyclic", 4).reshape(-1, 4)
    rows = []
    for j, t in enumerate(np.repeat(tuples, 3, axis=0)):
        u = truth[t] + rng.gumbel(size=4)
        for s in t:
            rows.append((f"j{j}", f"p{j % 7}", f"s{s}", 1.0 if s == t[u.argmax()] else -1.0 if s == t[u.argmin()] else 0.0))
    frame = pd.DataFrame(rows, columns=["judgement", "participant", "system", "value"])
    s = frame["system"].str[1:].astype(int).to_numpy()
    jcode = frame["judgement"].str[1:].astype(int).to_numpy()
    _j, win, lose = implied_pairs(jcode, s, frame["value"].to_numpy())
    wins = np.zeros((5, 5))
    np.add.at(wins, (win, lose), 1.0)
    fit = maxdiff_fit(frame["judgement"], frame["system"], frame["value"], frame["participant"], n_boot=300, seed=5)
    assert fit.estimate == pytest.approx(_scipy_bt(wins), abs=1e-5)
    assert fit.rank_low[0] == 1 and fit.separated == 0
    assert (np.diff(fit.estimate) < 0).all()  # 360 judgements recover the order of the true strengths


def test_no_mle_without_a_strongly_connected_win_graph() -> None:
    wins = np.array([[0, 2, 1], [0, 0, 3], [0, 1, 0]], dtype=float)  # a never lost
    assert np.isnan(bradley_terry_mle(wins)).all()
    frame = _rows(["abc", "acb"])
    fit = maxdiff_fit(frame["judgement"], frame["system"], frame["value"], frame["participant"], n_boot=20, seed=1)
    assert fit.undefined and "strongly connected" in fit.undefined


def test_the_type_s_rankings_from_long_rows() -> None:
    c = _criterion(tuple_size=3)
    frame = _rows(ORDERS).rename(columns={"participant": "participant_id", "judgement": "task_id"})
    out = c.task.rankings(c, frame, ["a", "b", "c"], 9, 0.95, 200)
    counts, fit = out["bws-counts"], out["maxdiff"]
    assert [r["system"] for r in counts["systems"]] == ["a", "b", "c"]
    assert counts["systems"][0]["estimate"] == pytest.approx(7 / 15) and counts["systems"][0]["n"] == 15
    assert counts["extra"]["unit"] == "participants" and counts["n_boot"] == 200
    assert fit["systems"][0]["estimate"] == pytest.approx(np.log(2)) and fit["battles"] == 45


def test_the_attention_check_and_the_problem_in_the_page_s_language() -> None:
    from humeval.server.i18n import translations

    c = _criterion()
    shown = c.task.shown(c)
    en = c.task.attention_text(shown, "B", translations("en").gettext)
    assert en == ("This is an attention check. Please choose output B as the best (and any other output as the worst) "
                  "for the question: Best and worst?")
    assert c.task.attention_text(shown, None, translations("en").gettext).startswith(
        "This is an attention check. Please choose output A as the best")
    de = c.task.attention_text(shown, "A", translations("de").gettext)
    assert "die Ausgabe A als die beste" in de and de.endswith("Best and worst?")
    assert c.task.problem_text(c, "q.worst", translations("zh").gettext) == "请选择最好和最差的输出：两个不同的输出。"
