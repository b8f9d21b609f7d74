"""Stopping rules on a finite set of items served in the real serving order (or in file order).

A study's population is its selected items x the crowd: item i has its own win rate
``p[i]`` (the probability a participant prefers A on it), and the rule decides about the
population's win rate, the mean of ``p`` over the items. The order the items are served in
then matters: in file order, with the items grouped by document, domain or source, the early
outcomes come from one part of the population and an anytime-valid rule can decide on it.
The design stage serves a watched comparison's items in the order
:func:`humeval.design.order.serving_order` draws; here every simulated run draws its order
from the same function, with its own seed (``child_seeds(seed, iterations)[run]``).

Serving: items one after the other, and the ``judgements`` outcomes of an item (of each pair
of an item, for a goal over K systems) one after the other, as the pool serves a task until its
cap is filled (the most clustered order the design's lists or the pool produce).
``order='file'`` serves item 0, 1, 2, ... in every run (the order before the serving order
existed), to show what the random order prevents.

Wrong decisions are counted with a Clopper-Pearson 95% upper bound (two-sided interval, upper
end): "wrong in at most delta of the runs" is shown when the rate itself is <= delta and the
bound says how far it can be off.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any, Literal

import numpy as np

from humeval._version import __version__
from humeval.design.order import serving_order
from humeval.errors import HumevalError
from humeval.rng import child_seeds
from humeval.stopping._validate import check_delta
from humeval.stopping.goals import check_goal, closure, goal_status, pair_delta
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH, BetaMixtureRule
from humeval.stopping.registry import get_rule

__all__ = ["OrderResult", "clopper_pearson_upper", "served_items", "simulate_served_goal", "simulate_served_pair"]

Order = Literal["serving", "file"]


@dataclass(frozen=True)
class OrderResult:
    """Wrong decisions of a rule (or goal) over ``iterations`` runs of one serving order."""

    target: str
    order: str
    items: int
    judgements: int
    delta: float
    iterations: int
    decided: int
    wrong: int
    wrong_upper: float
    signature: str

    @property
    def wrong_share(self) -> float:
        return self.wrong / self.iterations

    def describe(self) -> str:
        return (f"{self.target}, {self.order} order: wrong in {self.wrong} of {self.iterations} runs "
                f"({self.wrong_share:.3f}; Clopper-Pearson 95% upper bound {self.wrong_upper:.3f}; delta {self.delta:g}), "
                f"decided in {self.decided}")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "wrong_share": self.wrong_share}


def clopper_pearson_upper(k: int, n: int, level: float = 0.95) -> float:
    """Upper end of the Clopper-Pearson (exact binomial) ``level`` interval for k successes in n trials.

    ``Beta(1 - (1 - level) / 2; k + 1, n - k)``; 1 when k = n. Checked against: R
    ``binom.test(k, n)$conf.int[2]`` (e.g. k = 0, n = 400: 0.00918).
    """
    from scipy.stats import beta  # scipy: only when a bound is computed

    if k >= n:
        return 1.0
    return float(beta.ppf(1 - (1 - level) / 2, k + 1, n - k))


def served_items(n_items: int, iterations: int, seed: int, order: Order = "serving") -> np.ndarray:
    """(iterations, n_items): the item served at each place of each run (``serving_order`` per run, or file order)."""
    if order == "file":
        return np.tile(np.arange(n_items), (iterations, 1))
    if order != "serving":
        raise HumevalError(f"order must be 'serving' or 'file', got {order!r}")
    return np.stack([serving_order(s, n_items) for s in child_seeds(seed, iterations)])


def _check(judgements: int, iterations: int) -> None:
    for name, v in (("judgements", judgements), ("iterations", iterations)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise HumevalError(f"{name} must be a positive integer, got {v!r}")


def _signature(target: str, order: str, n: int, judgements: int, delta: float, iterations: int, seed: int) -> str:
    return "|".join(["humeval-simulate-order", target, f"order:{order}", f"items:{n}", f"judgements:{judgements}",
                     f"delta:{delta:g}", f"iters:{iterations}", f"seed:{seed}", f"version:{__version__}"])


def simulate_served_pair(p_a: np.ndarray, judgements: int = 3, *, rule: str = "anytime", delta: float = 0.05,
                         iterations: int = 400, seed: int = 21, order: Order = "serving") -> OrderResult:
    """Decisions of a pair ``rule`` on items with win rates ``p_a`` (in file order), ``judgements`` each.

    Wrong: deciding for the system that is not better over the items (either, on a tie: mean p_a = 1/2).
    """
    p = np.asarray(p_a, dtype=float)
    if p.ndim != 1 or p.size == 0 or not ((p >= 0) & (p <= 1)).all():
        raise HumevalError("p_a must be a non-empty vector of win rates in [0, 1]")
    _check(judgements, iterations)
    delta = check_delta(delta)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    seq = served_items(p.size, iterations, seed, order)
    probs = np.repeat(p[seq], judgements, axis=1)  # (iterations, n * judgements)
    s = np.cumsum(rng.random(probs.shape) < probs, axis=1, dtype=np.int32)
    dec = get_rule(rule, delta, horizon=probs.shape[1]).decide_paths(s)
    mean = float(p.mean())
    truth = 0 if abs(mean - 0.5) < 1e-12 else (1 if mean > 0.5 else -1)
    wrong = int(((dec.outcome != 0) & (dec.outcome != truth)).sum())
    return OrderResult(f"pair:{rule}", order, int(p.size), int(judgements), delta, int(iterations),
                       int((dec.outcome != 0).sum()), wrong, clopper_pearson_upper(wrong, iterations),
                       _signature(f"pair:{rule}", order, p.size, judgements, delta, iterations, seed))


def simulate_served_goal(p_win: np.ndarray, goal: str, judgements: int = 3, *, delta: float = 0.05,
                         top: int | None = None, iterations: int = 400, seed: int = 21, order: Order = "serving",
                         prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> OrderResult:
    """Decisions of ``goal`` over K systems when every pair of every item is judged ``judgements`` times.

    ``p_win[i, a, b]``: on item i (file order), the probability a participant prefers system a to
    b (``p_win[i, a, b] + p_win[i, b, a] = 1``). An item's pairs are served one after the other
    (in ``combinations`` order), each ``judgements`` times. Each pair is tested by the goal's
    pairwise mixture test at delta / (K (K - 1) / 2), a pair resolves at its first crossing and
    stays resolved; the goal is decided as soon as ``goal_status`` of the resolved relation's
    closure says so (a decision on the closure is the most a goal can announce, so counting it
    is conservative). Wrong: decided while the closure holds a relation "a above b" that the
    population does not have (mean of ``p_win[:, a, b]`` over the items <= 1/2, a tie included);
    an answer can be right despite a wrong relation among other systems, so this counts more as wrong
    than a wrong answer.
    """
    p = np.asarray(p_win, dtype=float)
    if p.ndim != 3 or p.shape[1] != p.shape[2] or p.shape[0] == 0:
        raise HumevalError("p_win must be an (items, K, K) array of win rates")
    _check(judgements, iterations)
    delta = check_delta(delta)
    n, k = p.shape[0], p.shape[1]
    goal, top_ = check_goal(goal, k, top)
    pairs = list(combinations(range(k), 2))
    n_pairs, r = len(pairs), int(judgements)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
    seq = served_items(n, iterations, seed, order)
    h = n * r
    boundary = BetaMixtureRule(pair_delta(delta, k), prior_strength).boundary(h)
    m = np.arange(h)
    runs = np.arange(iterations)
    times = np.full((iterations, n_pairs), np.iinfo(np.int64).max, dtype=np.int64)
    above = np.zeros((iterations, n_pairs), dtype=bool)  # the pair's first system resolved above the second
    for q, (a, b) in enumerate(pairs):
        probs = np.repeat(p[seq, a, b], r, axis=1)
        wins = np.cumsum(rng.random(probs.shape) < probs, axis=1)
        hit_a, hit_b = wins >= boundary, (m + 1 - wins) >= boundary
        hit = hit_a | hit_b
        first = hit.argmax(axis=1)
        any_hit = hit.any(axis=1)
        # the pair's judgement first (0-based) is place (first // r) * n_pairs * r + q * r + first % r of the run
        t = (first // r) * n_pairs * r + q * r + first % r
        times[:, q] = np.where(any_hit, t, times[:, q])
        above[:, q] = hit_a[runs, first]
    # the resolved relation after each resolution, in time order: (iterations, n_pairs, K, K)
    rank = np.argsort(times, axis=1, kind="stable")
    happened = np.take_along_axis(times, rank, axis=1) < np.iinfo(np.int64).max
    resolved = np.zeros((iterations, n_pairs, k, k), dtype=bool)
    for e in range(n_pairs):
        qs = rank[:, e]  # each run's e-th resolved pair
        ia, ib = np.array(pairs)[qs, 0], np.array(pairs)[qs, 1]
        win = np.where(above[runs, qs], ia, ib)
        lose = np.where(above[runs, qs], ib, ia)
        step = np.zeros((iterations, k, k), dtype=bool)
        step[runs, win, lose] = happened[:, e]
        resolved[:, e:] |= step[:, None]
    closed = closure(resolved)
    decided_at, _ = goal_status(closed, goal, top_)  # (iterations, n_pairs)
    decided = decided_at.any(axis=1)
    first = np.where(decided, decided_at.argmax(axis=1), n_pairs - 1)
    at_decision = closed[runs, first]
    mean = p.mean(axis=0)  # the population's win rates
    false = mean <= 0.5 + 1e-9  # "i above j" is not true of the population (a tie included)
    np.fill_diagonal(false, False)
    wrong_runs = decided & (at_decision & false).any(axis=(1, 2))
    wrong = int(wrong_runs.sum())
    target = f"goal:{goal}" + (f"-{top_}" if goal == "top-k" else "") + f":K={k}"
    return OrderResult(target, order, n, r, delta, int(iterations), int(decided.sum()), wrong,
                       clopper_pearson_upper(wrong, iterations), _signature(target, order, n, r, delta, iterations, seed))
