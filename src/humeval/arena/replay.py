"""Replay an arena's vote counts exchangeably under a pair policy, with pooled anytime-valid statements.

A replay draws votes *without replacement* from each pair's counts (wins of i, wins of j, ties, both bad), in a
random order, the pairs chosen by the policy (:func:`humeval.policies.pooled_pairs.pooled_pair_weights`), and
feeds them to :class:`humeval.stopping.pooled.PooledStatements` batch by batch: a batch's pairs are chosen before
any of its votes is seen, and a batch holds ``growth`` times the votes so far (at least ``first_batch``), so a
decision is seen at most that share late. A pair whose votes are used up can no longer be chosen; a replay ends
when its goal is decided or the data run out. All ``replays`` run at once (NumPy arrays with a leading replay
axis).

The reference for "wrong": Davidson's model fitted to every vote of the replayed models (the leaderboard's
answer), and, for data that break the model, each pair's own majority over all its votes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from humeval.arena.counts import ArenaCounts, pair_matrices
from humeval.errors import HumevalError
from humeval.policies.pair_choice import DEFAULT_EXPLORE
from humeval.policies.pooled_goal import allocate
from humeval.policies.pooled_pairs import pooled_pair_weights
from humeval.rng import Seed, as_generator
from humeval.stats.davidson import davidson_fit
from humeval.stopping.goals import check_goal, goal_status
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH
from humeval.stopping.pooled import PooledState, PooledStatements

__all__ = ["QUESTIONS", "ReplayResult", "davidson_probs", "draw_votes", "duel_lower_bound", "duel_times",
           "replay_counts", "run_batches", "simulate_statements", "wrong_statements"]

#: the questions a replay asks: (name, goal, uses top)
QUESTIONS: tuple[str, ...] = ("best", "top-k", "ranking")


def draw_votes(rng: np.random.Generator, remaining: np.ndarray, take: np.ndarray) -> np.ndarray:
    """Draw ``take[..., p]`` votes without replacement from ``remaining[..., p, 4]``; returns the drawn counts."""
    rem = remaining.astype(np.int64)
    left = np.minimum(np.asarray(take, dtype=np.int64), rem.sum(axis=-1))
    out = np.zeros_like(rem)
    for c in range(rem.shape[-1] - 1):
        rest = rem[..., c + 1:].sum(axis=-1)
        m = left > 0
        got = np.zeros_like(left)
        if m.any():
            got[m] = rng.hypergeometric(rem[..., c][m], rest[m], left[m])
        out[..., c] = got
        left = left - got
    out[..., -1] = left
    return out


def wrong_statements(resolved: np.ndarray, truth_above: np.ndarray) -> np.ndarray:
    """Per run: some resolved "i above j" has the reference saying j above i (``truth_above[j, i]``)."""
    return (np.asarray(resolved) & np.swapaxes(np.asarray(truth_above), -1, -2)[None]).any(axis=(-1, -2))


@dataclass(frozen=True)
class ReplayResult:
    """One question under one policy over ``replays`` replays.

    ``decided_at[r]``: votes until the rule announced (-1: never, within ``data_votes``); ``direct_decided_at``:
    the same goal read from direct resolutions alone; ``answers[r]``; ``wrong[r]``: some statement the replay
    ever resolved contradicts the all-votes Davidson fit (for ``best`` / ``top-k``: the announced answer differs);
    ``wrong_direct[r]``: the same against each pair's majority of all its votes; ``misfit_at[r]``: votes when the
    fit check rejected (-1: never); ``rank_width[r]``: mean rank-set width at the end; ``votes_used[r]``.
    """

    question: str
    goal: str
    top: int
    policy: str
    delta: float
    models: tuple[str, ...]
    data_votes: int
    truth_order: tuple[int, ...]
    decided_at: np.ndarray
    direct_decided_at: np.ndarray
    answers: tuple[tuple[int, ...] | None, ...]
    wrong: np.ndarray
    wrong_direct: np.ndarray
    misfit_at: np.ndarray
    rank_width: np.ndarray
    votes_used: np.ndarray

    @property
    def replays(self) -> int:
        return len(self.decided_at)

    @property
    def decided(self) -> np.ndarray:
        return self.decided_at >= 0


def _truth(counts: ArenaCounts, goal: str, top: int) -> tuple[np.ndarray, np.ndarray, tuple[int, ...], tuple[int, ...]]:
    wins, ties = counts.matrices()
    fit = davidson_fit(wins, ties)
    if not bool(fit.converged):
        raise HumevalError("arena replay: Davidson's model has no fit on all the votes of these models "
                           "(a model that never won or never lost)")
    th = fit.theta
    above = th[:, None] > th[None, :]
    direct_above = wins > wins.T
    order = tuple(int(i) for i in fit.order())
    answer = (order[0],) if goal == "best" else tuple(sorted(order[:top])) if goal == "top-k" else order
    return above, direct_above, order, answer


def run_batches(pairs: np.ndarray, k: int, goal: str, top: int, runs: int,
                draw: Callable[[np.ndarray, np.ndarray], np.ndarray], available: Callable[[], np.ndarray],
                rng: np.random.Generator, *, policy: str, delta: float, first_batch: int, growth: float,
                explore: float, prior_strength: float, fallback: bool,
                progress: Callable[[int, int], None] | None = None, total: int = 0,
                oracle_theta: np.ndarray | None = None, focal: bool = True,
                ) -> tuple[PooledState, np.ndarray, np.ndarray]:
    """The batch loop shared by replays and simulations: choose pairs, draw a batch, update the statements.

    ``draw(take[r, p], votes[r])`` returns the batch's counts ``[r, p, 4]`` (wins of i, wins of j, ties, both bad)
    for ``take`` votes asked of each pair; ``available()`` says which pairs ``[r, p]`` can still be battled.
    Returns the final state, the votes seen per pair and the votes when the goal read from direct statements alone
    was decided (-1: never). ``oracle_theta[k]``: the pair weights read the true strengths instead of the fit to
    the votes so far (a bound on what the policy's weights can give, not a rule: the truth is unknown in a study).
    """
    i, j = pairs[:, 0], pairs[:, 1]
    rule = PooledStatements(k, goal, delta, top, runs=runs, prior_strength=prior_strength, seed=rng, fallback=fallback)
    direct_decided = np.full(runs, -1, dtype=np.int64)
    seen = np.zeros((runs, len(pairs), 4), dtype=np.int64)
    state = rule.state()
    while True:
        can = available()
        active = (state.decided_at < 0) & can.any(axis=-1)
        if not active.any():
            break
        wins, ties = pair_matrices(pairs, k, seen)
        theta = (davidson_fit(wins, ties, prior=1.0, max_iter=30).theta if oracle_theta is None
                 else np.broadcast_to(np.asarray(oracle_theta, dtype=float), (runs, k)))
        avail = np.zeros((runs, k, k), dtype=bool)
        avail[:, i, j] = avail[:, j, i] = can & active[:, None]
        beaten = np.asarray(state.resolved.any(axis=-2), dtype=bool)
        p = pooled_pair_weights(theta, state.open_pairs, avail, policy, explore, goal=goal if focal else None,
                                top=top, beaten=beaten)[:, i, j]
        mass = p.sum(axis=-1)
        size = np.where(mass > 0, np.maximum(first_batch, np.ceil(growth * state.votes)), 0).astype(np.int64)
        take = np.zeros(p.shape, dtype=np.int64)
        live = size > 0
        if not live.any():
            break
        take[live] = allocate(rng, size[live], p[live] / mass[live, None])
        drawn = draw(take, state.votes)
        seen += drawn
        state = rule.update(*pair_matrices(pairs, k, drawn))
        dec, _ = goal_status(state.direct & ~np.swapaxes(state.direct, -1, -2), goal, top)
        direct_decided = np.where((direct_decided < 0) & dec, state.votes, direct_decided)
        if progress is not None:
            progress(int(state.votes[active].min()), total)
    return state, seen, direct_decided


def replay_counts(counts: ArenaCounts, question: str = "best", *, policy: str = "adaptive", top: int = 10,
                  replays: int = 200, delta: float = 0.05, seed: Seed = 0, first_batch: int = 1000,
                  growth: float = 0.1, explore: float = DEFAULT_EXPLORE,
                  prior_strength: float = DEFAULT_PRIOR_STRENGTH, fallback: bool = True,
                  progress: Callable[[int, int], None] | None = None, focal: bool = True) -> ReplayResult:
    """Replay ``counts`` for one question (``best``, ``top-k`` with ``top``, ``ranking``) under ``policy``.

    ``progress(votes_so_far, data_votes)`` is called after every batch (the smallest count over the replays
    still running). ``focal``: the adaptive weights weigh the question's focal statements
    (:func:`humeval.policies.pooled_pairs.focal_statements`); False: every needed statement (the earlier weights).
    """
    if question not in QUESTIONS:
        from humeval.errors import did_you_mean

        raise HumevalError(f"arena replay: unknown question '{question}'. {did_you_mean(question, QUESTIONS)}")
    k = len(counts.models)
    goal, top = check_goal(question, k, top if question == "top-k" else None)
    if isinstance(replays, bool) or int(replays) != replays or replays < 1:
        raise HumevalError(f"arena replay: replays must be a positive integer, got {replays!r}")
    if first_batch < 1 or not growth > 0:
        raise HumevalError(f"arena replay: first_batch must be >= 1 and growth > 0, got {first_batch!r}, {growth!r}")
    rng = as_generator(seed)
    above, direct_above, order, true_answer = _truth(counts, goal, top)
    r = int(replays)
    remaining = np.broadcast_to(counts.counts, (r, *counts.counts.shape)).copy()

    def draw(take: np.ndarray, votes: np.ndarray) -> np.ndarray:
        drawn = draw_votes(rng, remaining, take)
        remaining[...] -= drawn
        return drawn

    state, seen, direct_decided = run_batches(
        counts.pairs, k, goal, top, r, draw, lambda: remaining.sum(axis=-1) > 0, rng, policy=policy, delta=delta,
        first_batch=first_batch, growth=growth, explore=explore, prior_strength=prior_strength, fallback=fallback,
        progress=progress, total=counts.votes, focal=focal)
    total = counts.votes
    ever = state.pooled | state.direct
    if goal in ("best", "top-k"):
        wrong = np.array([a is not None and a != true_answer for a in state.answer])
        direct_wrong = np.array([a is not None and bool(direct_above[np.ix_([x for x in range(k) if x not in a], list(a))]
                                                        .any()) for a in state.answer])
    else:
        wrong = wrong_statements(ever, above)
        direct_wrong = wrong_statements(ever, direct_above)
    width = (state.rank_high - state.rank_low + 1).mean(axis=-1)
    return ReplayResult(question, goal, top, policy, float(delta), counts.models, total, order, state.decided_at,
                        direct_decided, state.answer, wrong, direct_wrong, state.misfit_at, width,
                        seen.sum(axis=(-1, -2)))


def simulate_statements(probs: Callable[[np.ndarray], np.ndarray] | np.ndarray, goal: str = "best", *,
                        top: int = 1, policy: str = "adaptive", runs: int = 200, max_votes: int = 100_000,
                        delta: float = 0.05, seed: Seed = 0, first_batch: int = 200, growth: float = 0.1,
                        explore: float = DEFAULT_EXPLORE, prior_strength: float = DEFAULT_PRIOR_STRENGTH,
                        fallback: bool = True, oracle_theta: np.ndarray | None = None, focal: bool = True,
                        ) -> tuple[PooledState, np.ndarray]:
    """Pooled statements on votes simulated from outcome probabilities, for checking the guarantee.

    ``probs[p_i, p_j, 3]`` per ordered pair of K systems: (P(i wins), P(j wins), P(tie)) of a vote of (i, j) (rows
    summing to 1), or a function of the votes so far ``votes[r]`` returning ``[r, K, K, 3]`` (drift). Every pair
    can always be battled; a run ends when decided or at ``max_votes``. Returns the final state and the votes seen
    per pair ``[r, p, 4]`` (both-bad votes are not simulated: column 3 is 0). ``oracle_theta``: pair weights from
    the true strengths (:func:`run_batches`).
    """
    rng = as_generator(seed)
    if callable(probs):
        drift = probs

        def probs_at(votes: np.ndarray) -> np.ndarray:
            return np.asarray(drift(votes))

        k = int(probs_at(np.zeros(1, dtype=np.int64)).shape[1])
    else:
        fixed = np.asarray(probs, dtype=float)
        k = fixed.shape[0]

        def probs_at(votes: np.ndarray) -> np.ndarray:
            return np.broadcast_to(fixed, (runs, k, k, 3))

    goal, top = check_goal(goal, k, top if goal == "top-k" else None)
    pairs = np.array([(a, b) for a in range(k) for b in range(a + 1, k)], dtype=np.int64)
    votes_now = np.zeros(runs, dtype=np.int64)

    def draw(take: np.ndarray, votes: np.ndarray) -> np.ndarray:
        votes_now[...] = votes + take.sum(axis=-1)
        p = probs_at(votes)
        pp = p[:, pairs[:, 0], pairs[:, 1], :]  # [r, pair, 3]
        out = np.zeros((*take.shape, 4), dtype=np.int64)
        out[..., :3] = rng.multinomial(take, pp / pp.sum(axis=-1, keepdims=True))
        return out

    def available() -> np.ndarray:
        return np.broadcast_to((votes_now < max_votes)[:, None], (runs, len(pairs)))

    state, seen, _ = run_batches(pairs, k, goal, top, runs, draw, available, rng, policy=policy, delta=delta,
                                 first_batch=first_batch, growth=growth, explore=explore,
                                 prior_strength=prior_strength, fallback=fallback, oracle_theta=oracle_theta,
                                 focal=focal)
    return state, seen


def davidson_probs(theta: np.ndarray, nu: float) -> np.ndarray:
    """``probs[i, j] = (P(i wins), P(j wins), P(tie))`` of a vote of (i, j) under Davidson's model."""
    pi = np.exp(np.asarray(theta, dtype=float))
    a, b = pi[:, None], pi[None, :]
    tie = float(nu) * np.sqrt(a * b)
    d = a + b + tie
    out: np.ndarray = np.stack(np.broadcast_arrays(a / d, b / d, tie / d), axis=-1)
    return out


def duel_times(p: float, level: float, *, runs: int = 2000, max_duels: int = 200_000, seed: Seed = 0,
               prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> np.ndarray:
    """Duels (won with probability ``p`` each) until the two-sided Beta(a, a) mixture resolves the better side at
    ``level``, per run (``max_duels`` for a run still open there)."""
    from humeval.stopping.mixture import log_mixture_ratio

    rng = as_generator(seed)
    done = np.full(runs, max_duels, dtype=np.int64)
    s = np.zeros(runs)
    start, chunk = 0, 5000
    open_ = np.ones(runs, dtype=bool)
    better = p >= 0.5
    while start < max_duels and open_.any():
        m = min(chunk, max_duels - start)
        wins = np.cumsum(rng.random((runs, m)) < p, axis=-1) + s[:, None]
        n = start + np.arange(1, m + 1)[None, :]
        lead = wins if better else n - wins
        hit = (lead > n - lead) & (log_mixture_ratio(n, lead, prior_strength) >= np.log(1.0 / level))
        first = np.where(hit.any(axis=-1), hit.argmax(axis=-1) + start + 1, -1)
        newly = open_ & (first > 0)
        done[newly] = first[newly]
        open_ &= ~newly
        s = wins[:, -1]
        start += m
    return done


def duel_lower_bound(theta: np.ndarray, nu: float, i: int, j: int, level: float, *, runs: int = 2000,
                     max_duels: int = 200_000, seed: Seed = 0,
                     prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> tuple[float, float]:
    """A lower bound on the mean votes any pair policy needs before the pooled test resolves "i above j".

    The statement's test counts duels of i and j: a direct vote of (i, j) gives one when decisive (probability
    P_dec = 1 - P(tie) under Davidson's model), a virtual duel needs two votes, so a vote adds at most
    c = max(P_dec, 1/2) expected duels whatever the pair chosen, and by Wald's identity E[votes] >= E[duels] / c.
    E[duels] is simulated: duels won by i with probability sigma(theta_i - theta_j), until the two-sided Beta(a, a)
    mixture resolves at ``level`` (a run unresolved at ``max_duels`` counts there: the bound stays a lower one).
    Returns (E[duels], the bound on E[votes]).
    """
    p = float(1.0 / (1.0 + np.exp(-(theta[i] - theta[j]))))
    pi_i, pi_j = np.exp(theta[i]), np.exp(theta[j])
    tie = nu * np.sqrt(pi_i * pi_j) / (pi_i + pi_j + nu * np.sqrt(pi_i * pi_j))
    c = max(1.0 - float(tie), 0.5)
    duels = float(duel_times(p, level, runs=runs, max_duels=max_duels, seed=seed,
                             prior_strength=prior_strength).mean())
    return duels, duels / c
