"""Goals over K systems when the preferences are intransitive: direct resolutions only, never the closure.

The guarantee of :mod:`humeval.stopping.goals` assumes no transitivity: an answer is
announced only on pairs its own tests resolved. Here the assumption the old rule needed
(an order among the systems) is broken on purpose: a cycle A > B > C > A, each at P = 0.7,
and a D that loses to each at 0.7. No system is preferred to every other (no Condorcet
winner) and no order agrees with every pair, so any ``best`` or ``ranking`` announced is
wrong; ``top-k`` with k = 3 has a correct answer ({A, B, C}).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta

from humeval.errors import HumevalError
from humeval.simulate.multi import simulate_goal
from humeval.stopping.cycles import cycle_note, preference_cycles
from humeval.stopping.goals import GoalRule, answer_of, closure, goal_status, open_pairs, rank_sets

DELTA = 0.05
RUNS = 400


def _rel(k: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    r = np.zeros((k, k), dtype=bool)
    for i, j in pairs:
        r[i, j] = True
    return r


def _cycle_with_dominated() -> np.ndarray:
    p = np.full((4, 4), 0.5)
    for i, j in [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]:
        p[i, j], p[j, i] = 0.7, 0.3
    return p


def _upper(wrong: int, n: int) -> float:
    """One-sided 95% Clopper-Pearson upper bound of a binomial rate."""
    return 1.0 if wrong >= n else float(beta.ppf(0.95, wrong + 1, n - wrong))


def _closure_best(resolved: np.ndarray) -> tuple[bool, int]:
    """The rule this release replaced: announce the only system with nothing above it in the closure."""
    low, _ = rank_sets(closure(resolved))
    left = np.flatnonzero(low == 1)
    return left.size == 1, int(left[0]) if left.size else -1


@pytest.mark.parametrize("goal", ["best", "ranking"])
@pytest.mark.parametrize("policy", ["adaptive", "uniform"])
def test_a_preference_cycle_is_not_announced(goal: str, policy: str) -> None:
    r = simulate_goal(4, "cycle", goal, policy, delta=DELTA, iterations=RUNS, max_judgements=50_000, seed=11,
                      preferences=_cycle_with_dominated())
    wrong = round(r.wrong_share * RUNS)
    bound = _upper(wrong, RUNS)
    msg = (f"{goal}/{policy}: wrong in {wrong} of {RUNS} runs (one-sided 95% Clopper-Pearson upper bound "
           f"{bound:.4f}); decided {r.decided_share:.3f}; any pair wrong {r.wrong_pair_share:.3f}")
    print(msg)
    assert r.wrong_share <= DELTA, msg
    # no answer exists, so every decision is wrong: the rule stays undecided (and stops once the
    # directly resolved pairs admit no answer, well before the horizon)
    assert r.decided_share == r.wrong_share, msg
    assert r.mean_effort < 50_000, msg


def test_top_k_in_the_cycle_finds_the_dominating_three() -> None:
    r = simulate_goal(4, "cycle", "top-k", "adaptive", delta=DELTA, iterations=RUNS, max_judgements=50_000, seed=11,
                      top=3, preferences=_cycle_with_dominated())
    assert r.decided_share == 1.0 and r.wrong_share <= DELTA, r


def test_the_closure_announces_what_direct_tests_never_resolved() -> None:
    # A > B, B > C, and each above D, all resolved directly; C vs A unresolved (truly C > A at 0.7)
    r = _rel(4, [(0, 1), (1, 2), (0, 3), (1, 3), (2, 3)])
    assert _closure_best(r) == (True, 0)  # the old rule: A is the only one left
    decided, cont = goal_status(r, "best")
    assert not decided and cont.tolist() == [True, False, False, False]
    # A must still beat C itself: the one open pair
    assert {(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(open_pairs(r, "best"))), strict=True)} == {(0, 2)}
    # once C > A is resolved directly the goal cannot be reached: nobody left, nothing to judge
    r[2, 0] = True
    decided, cont = goal_status(r, "best")
    assert not decided and not cont.any() and not open_pairs(r, "best").any()
    # display rank sets ignore the cycle: A, B, C in [1, 3], D fourth
    low, high = rank_sets(closure(r))
    assert low.tolist() == [1, 1, 1, 4] and high.tolist() == [3, 3, 3, 4]


def test_top_k_by_hand() -> None:
    # top 2 of 4. A chain 0 > 1 > 2 > 3: the closure puts 0, 1 in and 2, 3 out; directly nobody has
    # two wins or two losses
    chain = _rel(4, [(0, 1), (1, 2), (2, 3)])
    decided, cont = goal_status(chain, "top-k", 2)
    assert not decided and cont.all()
    # 0 > 1, 0 > 2, 1 > 2, 1 > 3, 2 > 3: 0, 1 in (two direct wins), 2, 3 out (two direct losses), but
    # 0 vs 3 is unresolved: the block is not complete, so not decided; 0 vs 3 is the only open pair
    r = _rel(4, [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)])
    decided, cont = goal_status(r, "top-k", 2)
    assert not decided and not cont.any()
    assert {(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(open_pairs(r, "top-k", 2))), strict=True)} == {(0, 3)}
    done = r.copy()
    done[0, 3] = True
    assert goal_status(done, "top-k", 2)[0] and answer_of(done, "top-k", 2) == (0, 1)
    # 3 > 0 instead: an outside system beat an inside one, no top 2 can exist
    stuck = r.copy()
    stuck[3, 0] = True
    decided, cont = goal_status(stuck, "top-k", 2)
    assert not decided and not cont.any() and not open_pairs(stuck, "top-k", 2).any()


def test_ranking_by_hand() -> None:
    order = _rel(3, [(0, 1), (1, 2), (0, 2)])
    assert goal_status(order, "ranking")[0] and answer_of(order, "ranking") == (0, 1, 2)
    # adjacent pairs alone: the closure gives the order, the direct relation does not
    chain = _rel(3, [(0, 1), (1, 2)])
    decided, cont = goal_status(chain, "ranking")
    assert not decided and cont.tolist() == [True, False, True]
    assert {(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(open_pairs(chain, "ranking"))), strict=True)} == {(0, 2)}
    # every pair resolved, but a cycle: never decided, nothing left to judge
    cyc = _rel(3, [(0, 1), (1, 2), (2, 0)])
    assert not goal_status(cyc, "ranking")[0] and not open_pairs(cyc, "ranking").any()
    # a resolved cycle among three of four: the pairs of the fourth no longer matter
    part = _rel(4, [(0, 1), (1, 2), (2, 0)])
    assert not open_pairs(part, "ranking").any() and not goal_status(part, "ranking")[1].any()


def test_rule_says_when_the_goal_cannot_be_reached() -> None:
    rule = GoalRule(3, "best", DELTA)
    d = rule.current()
    for i, j in [(0, 1), (1, 2), (2, 0)]:
        while not d.resolved[i, j]:
            d = rule.update(i, j, i)
    assert not d.decided and not d.reachable and d.contention == ()
    assert "cannot be reached" in d.reason
    assert {"kind": "unreachable"} in d.events
    kinds = [e["kind"] for e in d.events]
    assert "decided" not in kinds


def test_preference_cycles_by_hand() -> None:
    wins = np.zeros((4, 4), dtype=int)
    for i, j in [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]:
        wins[i, j], wins[j, i] = 7, 3
    wins[1, 2], wins[2, 1] = 68, 32
    resolved = _rel(4, [(0, 1), (1, 2), (2, 0)])
    cycles = preference_cycles(wins, resolved)
    assert len(cycles) == 1
    c = cycles[0]
    assert c.systems == (0, 1, 2) and c.shares == pytest.approx((0.7, 0.68, 0.7)) and c.strength == "resolved"
    assert preference_cycles(wins)[0].strength == "observed"
    partly = preference_cycles(wins, _rel(4, [(0, 1)]))[0]
    assert partly.resolved == (True, False, False) and partly.strength == "partly resolved"
    note = cycle_note(cycles, ["A", "B", "C", "D"])
    assert note == ("Judgements look intransitive: A>B>C>A (win shares 0.70, 0.68, 0.70; resolved); "
                    "the goal announces only what direct tests resolved")
    # an order (and a tie, which is no preference) has no cycle
    order = np.triu(np.full((4, 4), 6), 1) + np.tril(np.full((4, 4), 4), -1)
    order[0, 1] = order[1, 0] = 5
    assert preference_cycles(order) == [] and cycle_note([], ["A", "B", "C", "D"]) == ""


def test_transitive_winner_still_decides() -> None:
    # a winner at P = 0.75 against each of three systems that tie among themselves
    s = [math.log(0.75 / 0.25), 0.0, 0.0, 0.0]
    r = simulate_goal(4, "fitted", "best", "adaptive", delta=DELTA, iterations=RUNS, max_judgements=20_000, seed=3,
                      strengths=s)
    assert r.decided_share == 1.0 and r.wrong_share == 0.0, r
    assert r.mean_effort < 400, r  # about 210 on this release (seed 3)


def test_bad_preferences() -> None:
    with pytest.raises(HumevalError, match=r"P\[j, i\] = 1 - P\[i, j\]"):
        simulate_goal(3, "x", "best", preferences=[[0.5, 0.7, 0.7], [0.7, 0.5, 0.5], [0.3, 0.5, 0.5]])
    with pytest.raises(HumevalError, match="not both"):
        simulate_goal(2, "x", "best", strengths=[0.0, 1.0], preferences=[[0.5, 0.5], [0.5, 0.5]])


@pytest.mark.parametrize("k", [3, 4, 5])
def test_any_decision_on_true_resolutions_is_right_whatever_the_preferences(k: int) -> None:
    # random tournaments (cycles included) and random subsets of their true pairs as the resolved
    # relation: whenever a goal is decided, the answer is borne out by every pair it needs
    rng = np.random.default_rng(k)
    runs = 3000
    upper = np.triu(rng.random((runs, k, k)) < 0.5, 1)
    truth = upper | np.swapaxes(np.triu(~upper, 1), -1, -2)  # truth[i, j]: i preferred to j
    resolved = truth & (rng.random((runs, k, k)) < 0.8)
    checked = 0
    for goal, top in (("best", 1), ("top-k", 2), ("ranking", 1)):
        decided, _ = goal_status(resolved, goal, top)
        for r in np.flatnonzero(decided):
            ans = answer_of(resolved[r], goal, top)
            if goal == "ranking":
                assert all(truth[r, ans[a], ans[b]] for a in range(k) for b in range(a + 1, k))
            else:
                inside = set(ans)
                assert all(truth[r, i, j] for i in inside for j in range(k) if j not in inside)
            checked += 1
    assert checked > 100
