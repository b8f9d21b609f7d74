"""Simulating goals over K systems (``pair``, ``best``, ``top-k``, ``ranking``) with known preferences.

Systems have Bradley-Terry strengths s (``profile_scores``); a judgement of (i, j) prefers i
with probability 1 / (1 + exp(s_j - s_i)) (one worker per judgement). Any matrix of
preferences P(i preferred to j) may be given instead (``preferences``), intransitive ones
included. Every run of a cell
runs at once. At each round every running run receives a batch of judgements, split over
the pairs by the policy's target shares (:func:`humeval.policies.pair_choice.pair_weights`,
a multinomial draw) and won by binomial draws; then the pairwise tests and the goal's status
read from the direct resolutions (:mod:`humeval.stopping.goals`) are updated for all runs.
A run stops when decided, at the horizon, or when no open pair is left (the goal can no
longer be reached, e.g. a preference cycle resolved directly).
The first batch has one judgement per pair and each later batch is ``growth`` (5%) of the
judgements so far: decisions are checked at a subset of times, which keeps the guarantee
and costs at most ``growth`` extra judgements; the Python loop runs over rounds (a few
hundred), never over judgements or runs.

An answer is correct when the preferences bear it out pair by pair: ``best``/``pair``, the
system is preferred to every other with P > 1/2 (a Condorcet winner); ``top-k``, each of the
k is preferred to each of the rest; ``ranking``, each system is preferred to every system
below it. When no such answer exists (ties, a preference cycle) every announcement is wrong.

Profiles (system 0 strongest; strengths on the logit scale):

* ``equal``: every s = 0 (no correct answer exists: any decision is wrong);
* ``clear-winner``: s_0 = 1, the rest evenly from 0 down to -1;
* ``close-leaders``: s_0 = 0.25, s_1 = 0 (P = 0.56), the rest evenly from -0.5 down to -1.5;
* ``long-tail``: s_i = -ln(1 + i) (gaps shrink down the tail).

Checked against: the wrong-decision rate <= delta (tests/unit/simulate/test_multi.py).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from humeval._version import __version__
from humeval.errors import HumevalError, did_you_mean
from humeval.policies.pair_choice import DEFAULT_EXPLORE, PAIR_POLICIES, pair_weights
from humeval.simulate._bootstrap import bootstrap_mean_ci
from humeval.stopping._validate import check_delta
from humeval.stopping.goals import (
    check_goal,
    goal_status,
    open_pairs,
    pair_delta,
    resolve_pairs,
)
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH, BetaMixtureRule

__all__ = ["PROFILES", "GoalSimResult", "profile_scores", "simulate_goal", "simulate_pooled_goal"]

PROFILES: tuple[str, ...] = ("equal", "clear-winner", "close-leaders", "long-tail")
DEFAULT_MAX_JUDGEMENTS = 1_000_000


def profile_scores(profile: str, k: int) -> np.ndarray:
    """Bradley-Terry strengths of ``k`` systems under a named profile (system 0 strongest)."""
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise HumevalError(f"--systems must be an integer >= 2, got {k!r}")
    k = int(k)
    if profile == "equal":
        return np.zeros(k)
    if profile == "clear-winner":
        return np.concatenate([[1.0], np.linspace(0.0, -1.0, k - 1)])
    if profile == "close-leaders":
        return np.concatenate([[0.25, 0.0], np.linspace(-0.5, -1.5, k - 2)])[:k]
    if profile == "long-tail":
        return -np.log1p(np.arange(k, dtype=float))
    raise HumevalError(f"unknown profile '{profile}'. {did_you_mean(profile, PROFILES)}")


@dataclass(frozen=True)
class GoalSimResult:
    """One cell: effort (judgements to the decision; when undecided, to the horizon or to the point where the
    goal could no longer be reached) and error rates.

    ``wrong_share``: runs whose decided answer is wrong; ``wrong_pair_share``: runs in which
    any pair was ever resolved wrongly (the event the guarantee bounds by delta).
    """

    policy: str
    goal: str
    profile: str
    k: int
    top: int
    delta: float
    iterations: int
    max_judgements: int
    mean_effort: float
    ci_low: float
    ci_high: float
    mean_effort_decided: float
    decided_share: float
    wrong_share: float
    wrong_pair_share: float
    explore: float
    signature: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _wrong_answers(resolved: np.ndarray, decided: np.ndarray, goal: str, top: int, prob: np.ndarray) -> np.ndarray:
    """Decided runs whose answer some pair's true preference contradicts (P <= 1/2 where the answer needs > 1/2)."""
    wins = resolved.sum(axis=-1)
    better = prob > 0.5
    if goal == "ranking":
        order = np.argsort(-wins, axis=-1, kind="stable")
        rank = np.argsort(order, axis=-1, kind="stable")
        claimed = rank[:, :, None] < rank[:, None, :]  # i announced above j
    else:
        k = 1 if goal in ("best", "pair") else top
        order = np.argsort(-wins, axis=-1, kind="stable")
        inside = np.zeros(resolved.shape[:2], dtype=bool)
        np.put_along_axis(inside, order[:, :k], True, axis=-1)
        claimed = inside[:, :, None] & ~inside[:, None, :]  # i announced in, j out
    return decided & (claimed & ~better).any(axis=(1, 2))


def simulate_goal(k: int, profile: str, goal: str, policy: str = "adaptive", *, delta: float = 0.05,
                  top: int | None = None, iterations: int = 1000, max_judgements: int = DEFAULT_MAX_JUDGEMENTS,
                  seed: int = 21, explore: float = DEFAULT_EXPLORE, growth: float = 0.05,
                  prior_strength: float = DEFAULT_PRIOR_STRENGTH, strengths: Sequence[float] | None = None,
                  preferences: Sequence[Sequence[float]] | np.ndarray | None = None) -> GoalSimResult:
    """Judgements to reach ``goal`` over ``k`` systems of ``profile`` with pair choice ``policy``.

    ``goal='pair'`` compares the two strongest systems of the profile (K is then 2).
    ``strengths``: Bradley-Terry strengths to use instead of a profile (``profile`` is then
    only a label, e.g. ``fitted``; ``k`` must match). ``preferences``: a K x K matrix of
    P(i preferred to j) instead (P[j, i] = 1 - P[i, j]; any, intransitive included).
    Seeds: ``SeedSequence(seed, spawn_key=(crc32(cell),))`` per cell, so a cell's numbers do not
    depend on the other cells run beside it.
    """
    delta = check_delta(delta)
    if strengths is not None and preferences is not None:
        raise HumevalError("give Bradley-Terry strengths or a preference matrix, not both")
    if preferences is not None:
        prob = np.array(preferences, dtype=float)
        off = ~np.eye(k, dtype=bool)
        if (prob.shape != (k, k) or not np.isfinite(prob[off]).all() or (prob[off] < 0).any() or (prob[off] > 1).any()
                or not np.allclose((prob + prob.T)[off], 1.0)):
            raise HumevalError(f"preferences: need a {k} x {k} matrix of P(i preferred to j) in [0, 1] with "
                               f"P[j, i] = 1 - P[i, j], got {np.asarray(preferences).tolist()!r}")
        np.fill_diagonal(prob, 0.5)
    else:
        if strengths is None:
            s = profile_scores(profile, k)
        else:
            s = np.asarray(strengths, dtype=float)
            if s.ndim != 1 or s.size != k or not np.isfinite(s).all():
                raise HumevalError(f"strengths: need {k} finite Bradley-Terry strengths, got {list(strengths)!r}")
        prob = 1.0 / (1.0 + np.exp(s[None, :] - s[:, None]))  # P(i preferred to j)
    if goal == "pair":
        prob = prob[:2, :2]
    kk = prob.shape[0]
    goal, top_ = check_goal(goal, kk, top)
    if policy not in PAIR_POLICIES:
        raise HumevalError(f"unknown pair policy '{policy}'. {did_you_mean(policy, PAIR_POLICIES)}")
    for name, v in (("iterations", iterations), ("max-judgements", max_judgements)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise HumevalError(f"--{name} must be a positive integer, got {v!r}")
    if not 0 < growth <= 1:
        raise HumevalError(f"growth must lie in (0, 1], got {growth!r}")
    cell = f"{k}|{profile}|{goal}|{top_}|{policy}|{delta:g}|{explore:g}|{max_judgements}"
    if strengths is not None:
        cell += "|" + ",".join(f"{x:.6g}" for x in s)
    if preferences is not None:
        cell += "|" + ",".join(f"{x:.6g}" for x in prob.ravel())
    ss = np.random.SeedSequence(seed, spawn_key=(zlib.crc32(cell.encode()),))
    rng = np.random.default_rng(ss)
    boundary = BetaMixtureRule(pair_delta(delta, kk), prior_strength).boundary(int(max_judgements) + 1)
    iu, ju = np.triu_indices(kk, 1)
    runs = int(iterations)
    wins = np.zeros((runs, kk, kk), dtype=np.int64)
    resolved = np.zeros((runs, kk, kk), dtype=bool)
    used = np.zeros(runs, dtype=np.int64)
    done = np.zeros(runs, dtype=bool)
    decided = np.zeros(runs, dtype=bool)
    contention = np.ones((runs, kk), dtype=bool)
    open_ = np.ones((runs, kk, kk), dtype=bool)
    while True:
        running = ~done & (used < max_judgements)
        if not running.any():
            break
        r = np.flatnonzero(running)
        weights = pair_weights(wins[r], open_[r], contention[r], goal, policy, top_, explore)[:, iu, ju]
        b = np.maximum(iu.size, np.ceil(growth * used[r])).astype(np.int64)
        b = np.minimum(b, max_judgements - used[r])
        counts = rng.multinomial(b, weights)
        won = rng.binomial(counts, prob[iu, ju])
        wins[r[:, None], iu, ju] += won
        wins[r[:, None], ju, iu] += counts - won
        used[r] += b
        # sticky: a pair resolved one way is never resolved the other way
        resolved[r] |= resolve_pairs(wins[r], boundary) & ~np.swapaxes(resolved[r], -1, -2)
        dec, cont = goal_status(resolved[r], goal, top_)
        decided[r], contention[r] = dec, cont
        open_[r] = open_pairs(resolved[r], goal, top_)
        done[r] = dec | ~open_[r].any(axis=(-1, -2))  # decided, or the goal can no longer be reached
    wrong = _wrong_answers(resolved, decided, goal, top_, prob)
    truth = prob > 0.5
    wrong_pair = (resolved & ~truth).any(axis=(1, 2))
    effort = used.astype(float)
    lo, hi = bootstrap_mean_ci(effort, np.random.default_rng(ss.spawn(1)[0]))
    sig = "|".join([
        "humeval-simulate-goal", f"goal:{goal}" + (f"-{top_}" if goal == "top-k" else ""), f"profile:{profile}",
        f"K:{kk}", f"policy:{policy}", f"explore:{explore:g}", f"delta:{delta:g}", f"iters:{runs}",
        f"horizon:{max_judgements}", f"growth:{growth:g}", f"prior:{prior_strength:g}", f"seed:{seed}",
        f"version:{__version__}",
    ])
    return GoalSimResult(
        policy=policy, goal=goal, profile=profile, k=kk, top=top_, delta=delta, iterations=runs,
        max_judgements=int(max_judgements), mean_effort=float(effort.mean()), ci_low=lo, ci_high=hi,
        mean_effort_decided=float(effort[decided].mean()) if decided.any() else float("nan"),
        decided_share=float(decided.mean()), wrong_share=float(wrong.mean()),
        wrong_pair_share=float(wrong_pair.mean()), explore=float(explore), signature=sig,
    )


def simulate_pooled_goal(strengths: Sequence[float], goal: str = "best", policy: str = "adaptive", *,
                         delta: float = 0.05, top: int | None = None, iterations: int = 200,
                         max_judgements: int = 200_000, epoch: int = 200, seed: int = 21,
                         profile: str = "fitted", prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> GoalSimResult:
    """Judgements to reach ``goal`` decided on pooled statements (``stopping.pooling``), as ``serve`` runs it.

    The live class's epochs and weights (:class:`humeval.policies.pooled_goal.PooledGoal`, every run at once): each
    epoch's votes are spread over the pairs by the weights set when it began (systematic sampling,
    :func:`humeval.policies.pooled_goal.allocate`, as the server's deficit round-robin), won by binomial draws from
    Bradley-Terry ``strengths`` (decisive votes, as the store feeds them), and fed as one batch. A run stops at its
    decision or when the next epoch would pass ``max_judgements``. Effort: the votes at the decision, else the votes
    fed. Seeds as :func:`simulate_goal` (per cell).
    """
    from humeval.policies.pooled_goal import PooledGoal, allocate

    s = np.asarray(strengths, dtype=float)
    k = s.size
    if s.ndim != 1 or k < 3 or not np.isfinite(s).all():
        raise HumevalError(f"strengths: need 3 or more finite Bradley-Terry strengths, got {list(strengths)!r}")
    goal, top_ = check_goal(goal, k, top)
    if policy not in PAIR_POLICIES:
        raise HumevalError(f"unknown pair policy '{policy}'. {did_you_mean(policy, PAIR_POLICIES)}")
    for name, v in (("iterations", iterations), ("max-judgements", max_judgements)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise HumevalError(f"--{name} must be a positive integer, got {v!r}")
    delta = check_delta(delta)
    prob = 1.0 / (1.0 + np.exp(s[None, :] - s[:, None]))
    cell = f"pooled|{k}|{profile}|{goal}|{top_}|{policy}|{delta:g}|{epoch}|{max_judgements}|" + ",".join(
        f"{x:.6g}" for x in s)
    ss = np.random.SeedSequence(seed, spawn_key=(zlib.crc32(cell.encode()),))
    rng = np.random.default_rng(ss)
    runs = int(iterations)
    rule = PooledGoal(k, goal, delta, top_, epoch=epoch, policy=policy, seed=rng, runs=runs,
                      prior_strength=prior_strength)
    iu, ju = np.triu_indices(k, 1)
    while (rule.state.decided_at < 0).any() and rule.start + rule.size <= max_judgements:
        w = rule.weights[:, iu, ju]
        mass = w.sum(axis=-1)
        live = mass > 0
        take = np.zeros(w.shape, dtype=np.int64)
        take[live] = allocate(rng, np.full(int(live.sum()), rule.size), w[live] / mass[live, None])
        won = rng.binomial(take, prob[iu, ju])
        wins = np.zeros((runs, k, k), dtype=np.int64)
        wins[:, iu, ju], wins[:, ju, iu] = won, take - won
        rule.feed_epoch(wins)
    st = rule.state
    decided = st.decided
    effort = np.where(decided, st.decided_at, st.votes).astype(float)
    wrong = _wrong_answers(st.resolved, decided, goal, top_, prob)
    wrong_pair = ((st.pooled | st.direct) & ~(prob > 0.5)).any(axis=(1, 2))
    lo, hi = bootstrap_mean_ci(effort, np.random.default_rng(ss.spawn(1)[0]))
    sig = "|".join(["humeval-simulate-pooled-goal", f"goal:{goal}" + (f"-{top_}" if goal == "top-k" else ""),
                    f"profile:{profile}", f"K:{k}", f"policy:{policy}", f"delta:{delta:g}", f"iters:{runs}",
                    f"horizon:{max_judgements}", f"epoch:{epoch}", f"prior:{prior_strength:g}", f"seed:{seed}",
                    f"version:{__version__}"])
    return GoalSimResult(
        policy=f"pooled-{policy}", goal=goal, profile=profile, k=k, top=top_, delta=delta, iterations=runs,
        max_judgements=int(max_judgements), mean_effort=float(effort.mean()), ci_low=lo, ci_high=hi,
        mean_effort_decided=float(effort[decided].mean()) if decided.any() else float("nan"),
        decided_share=float(decided.mean()), wrong_share=float(wrong.mean()),
        wrong_pair_share=float(wrong_pair.mean()), explore=DEFAULT_EXPLORE, signature=sig,
    )
