"""Anytime-valid statements about Bradley-Terry scores that pool votes across opponents (``pooled``).

The question. A leaderboard says "A is above B" from all of A's and B's votes, against every opponent, not from
their direct duels alone (Chatbot Arena's top two met 834 times; their direct test does not decide). This module
makes such statements anytime-valid: true at every moment with probability >= 1 - delta however often they are
looked at, and whatever rule chose the pairs.

Construction (per ordered statement "i above j", i.e. theta_i > theta_j):

1. Direct duels: each decisive vote between i and j is a Bernoulli draw with P(i wins) = sigma(theta_i - theta_j)
   under Davidson's model (ties carry no direction and are skipped: :mod:`humeval.stats.davidson`).
2. Virtual duels through an opponent m. Take a decisive vote of (i, m) with x = 1 when i won and a decisive vote of
   (j, m) with z = 1 when j won. When x != z (discordant),

       P(x = 1 | x != z) = q_im (1 - q_jm) / (q_im (1 - q_jm) + (1 - q_im) q_jm),

   which under Bradley-Terry equals sigma(theta_i - theta_j) for every m: the odds q/(1-q) are e^(theta_i - theta_m)
   and e^(theta_j - theta_m), whose ratio is e^(theta_i - theta_j). The opponent's strength cancels (the
   conditional argument of the matched-pairs / McNemar test), so a discordant pair is one more duel of i and j.
3. The statement's test is the two-sided Beta(a, a) mixture martingale (:mod:`humeval.stopping.mixture`) on the
   pooled successes S_ij (direct wins of i plus discordant pairs won by i) and failures S_ji; it resolves
   "i above j" the first time S_ij > S_ji and ln M >= ln(1/delta'), and the resolution is kept.
4. A union bound over the statements a wrong answer can rest on (:func:`question_pairs`: K - 1 for ``best``,
   k (K - k) for ``top-k``, K (K - 1) / 2 for ``ranking``), each pooled and direct (the direct test of
   :mod:`humeval.stopping.goals`, kept as the fallback): delta' = delta / (2 pairs). The rank sets shown beside
   the answer use every pair: delta / (K (K - 1)).

Why it is valid. Under H0: theta_i <= theta_j every pooled success has conditional probability <= 1/2 given the
past, so the half of the mixture over p > 1/2 is a nonnegative supermartingale (each factor has mean
1 + (2p - 1)(2 p_t - 1) <= 1, whatever p_t <= 1/2 is at each step) and Ville's inequality bounds the chance that
it ever reaches 1/delta' by delta'. A wrong ``best`` answer b needs the fixed null statement "b above b*" (b* the
true best) resolved, pooled or direct: at most 2 (K - 1) delta' = delta over the K - 1 candidates; ``top-k``
and ``ranking`` likewise over their pairs (:func:`question_pairs`). Each answer is an intersection-union test:
every statement it needs must be resolved, so no correction for their number inside one answer. The conditional probability in 2. needs the pairing not to depend on the
directions of the votes paired: a vote whose outcome is already known, kept waiting for a partner while the pair
choice looks at it, would break it (the choice could complete only the pairs whose first vote favoured i). So votes
are paired only within a *batch*: a set of votes whose pairs were chosen before any of them was seen. Within a
batch the r = min(d_im, d_jm) pairs match the decisive votes of (i, m) and (j, m) in a random order (which votes
are decisive carries no direction under Davidson's model); votes left unpaired at the end of a batch serve the
direct tests and the fit, never a later virtual duel. With probability >= 1 - delta no statement, pooled or
direct, is ever wrong, so the rank sets [1 + #resolved above, K - #resolved below] hold the Bradley-Terry ranks at
every moment and every goal's announcement (``best``, ``top-k``, ``ranking``, read by
:func:`humeval.stopping.goals.goal_status` from the resolved statements) is correct.

What it assumes: Davidson's model (Bradley-Terry on the decisive votes) with strengths that may drift in time as
long as no pair's order changes (a factor only needs p_t <= 1/2 under H0), and votes independent given their
pair. Intransitive preferences break the model: virtual duels through different opponents then have different
rates, and a pooled statement can contradict the direct preference.

The fit check and the fallback. Under Bradley-Terry the direct duels of (i, j) and its virtual duels have the
same rate; within each batch they are paired again (direct win, virtual loss) against (direct loss, virtual win),
each of probability 1/2 under the model, and a two-sided mixture test per pair at delta / (K (K - 1) / 2) watches
the difference. When it rejects for any pair, or a pooled statement contradicts a direct one, the fit is poor:
the pooled statements are withdrawn, the goal is read from the direct statements alone (the guarantee of
:mod:`humeval.stopping.goals`, which needs no transitivity) and the reason says so. An answer announced before is
kept (announcements are final); its guarantee is the model's.

References: Davidson (1970), JASA 65; McNemar (1947), Psychometrika 12 (matched pairs, discordant counts);
Robbins (1970); Ville (1939); Howard, Ramdas, McAuliffe, Sekhon (2021), Ann. Statist. 49(2).
Checked against: the conditional probability of a discordant pair (exact enumeration) and the hypergeometric
pairing (Monte Carlo of explicit random pairings) in tests/unit/stopping/test_pooled.py, and simulated wrong
statements (<= delta) under Bradley-Terry with ties, with drifting strengths, and the share of wrong announcements
with intransitive preferences (A > B > C > A).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from humeval.errors import HumevalError
from humeval.rng import Seed, as_generator
from humeval.stopping._validate import check_delta
from humeval.stopping.goals import answer_of, check_goal, closure, goal_status, open_pairs, rank_sets
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH, log_mixture_ratio

__all__ = ["PooledState", "PooledStatements", "discordant_pairs", "question_pairs", "statement_delta"]


def question_pairs(goal: str, k: int, top: int = 1) -> int:
    """How many null statements a wrong answer of the goal can rest on: K - 1, k (K - k) or K (K - 1) / 2.

    ``best``: announcing b wrongly needs "b above b*" resolved, b* the true best: one fixed pair per b != b*.
    ``top-k``: announcing a wrong set S needs "s above t" resolved for s the truly weakest of S (true rank > k)
    and t the truly strongest outside S (true rank <= k): one of the k (K - k) pairs across the true boundary.
    ``ranking`` (and the rank sets): any of the K (K - 1) / 2 pairs.
    """
    goal, top = check_goal(goal, k, top if goal == "top-k" else None)
    if goal in ("best", "pair"):
        return k - 1
    if goal == "top-k":
        return top * (k - top)
    return k * (k - 1) // 2


def statement_delta(delta: float, pairs: int) -> float:
    """delta / (2 pairs): the level of each pooled and each direct statement (a union bound over both kinds)."""
    return check_delta(delta) / (2 * pairs)


def _hyper(rng: np.random.Generator, good: np.ndarray, bad: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Hypergeometric draws, elementwise; zero where nothing is drawn (NumPy refuses empty urns)."""
    good, bad, draws = np.broadcast_arrays(good, bad, draws)
    out = np.zeros(good.shape, dtype=np.int64)
    m = draws > 0
    if m.any():
        out[m] = rng.hypergeometric(good[m], bad[m], draws[m])
    return out


def discordant_pairs(rng: np.random.Generator, wins1: np.ndarray, n1: np.ndarray, wins2: np.ndarray,
                     n2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair min(n1, n2) Bernoulli outcomes of two urns at random; the counts of (1, 0) and of (0, 1) pairs.

    Urn 1 holds ``wins1`` ones among ``n1`` outcomes, urn 2 ``wins2`` among ``n2`` (elementwise). A random
    subset of r = min(n1, n2) of each urn is matched in a random order: h1 ~ Hyp(wins1, n1 - wins1, r) ones from
    urn 1, h2 likewise, of which c ~ Hyp(h2, r - h2, h1) meet a one of the other urn; (1, 0) = h1 - c,
    (0, 1) = h2 - c. This is the distribution of an explicit random pairing, without building it.
    """
    r = np.minimum(n1, n2)
    h1 = _hyper(rng, wins1, n1 - wins1, r)
    h2 = _hyper(rng, wins2, n2 - wins2, r)
    c = _hyper(rng, h2, r - h2, h1)
    return h1 - c, h2 - c


@dataclass(frozen=True)
class PooledState:
    """The statements after ``votes`` votes, for each of ``runs`` replays (leading axis).

    ``pooled[r, i, j]``: the pooled test resolved i above j at the goal's level; ``direct[r, i, j]``: the direct
    test did; ``resolved``: what the goal reads (pooled | direct, or direct alone once ``misfit``); ``rank_low`` /
    ``rank_high``: rank sets (1 = best) from the statements resolved at delta / (K (K - 1)), valid together; ``decided_at[r]``: votes when the goal was decided
    (-1: not yet); ``answer[r]``: the answer (systems), None while undecided; ``misfit_at[r]``: votes when the fit
    check rejected (-1: never); ``evidence[r, i, j]``: pooled successes of i against j.
    """

    goal: str
    top: int
    delta: float
    votes: np.ndarray
    pooled: np.ndarray
    direct: np.ndarray
    resolved: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    decided_at: np.ndarray
    answer: tuple[tuple[int, ...] | None, ...]
    misfit_at: np.ndarray
    evidence: np.ndarray
    open_pairs: np.ndarray

    @property
    def decided(self) -> np.ndarray:
        return self.decided_at >= 0

    @property
    def misfit(self) -> np.ndarray:
        return self.misfit_at >= 0

    def reason(self, run: int = 0) -> str:
        """One run's state in words: the answer or what is open, on which statements, and the fit."""
        k = self.resolved.shape[-1]
        pairs = question_pairs(self.goal, k, self.top)
        level = (f"pooled Bradley-Terry statements (direct and virtual duels through common opponents) and direct "
                 f"ones, each a mixture test at delta/{2 * pairs} = {statement_delta(self.delta, pairs):.3g}")
        fit = ""
        if self.misfit_at[run] >= 0:
            fit = (f"; the Bradley-Terry fit is poor (the fit check rejected after {int(self.misfit_at[run]):,} "
                   f"votes): pooled statements withdrawn, the goal reads direct resolutions only")
        ans = self.answer[run]
        if ans is None:
            n_open = int(np.triu(self.open_pairs[run], 1).sum())
            return f"undecided: {n_open} statements still needed ({level}){fit}"
        what = {"best": "best system", "top-k": f"top {self.top}", "ranking": "ranking", "pair": "better system"}
        return (f"{what[self.goal]} {list(ans)} after {int(self.decided_at[run]):,} votes, with probability "
                f">= {1 - self.delta:g} under the Bradley-Terry (Davidson) model ({level}){fit}")


class PooledStatements:
    """Pooled and direct anytime-valid statements about K systems, fed batch by batch, for ``runs`` replays at once.

    ``update(wins, ties)`` takes one batch: ``wins[r, i, j]`` decisive votes preferring i to j and ``ties[r, i, j]``
    (symmetric) ties, both-bad votes included, of votes whose pairs were chosen before any of them was seen (see the
    module docstring). Returns the :class:`PooledState`. ``seed``: the random pairing of virtual duels.
    """

    def __init__(self, k: int, goal: str = "best", delta: float = 0.05, top: int | None = None, *, runs: int = 1,
                 prior_strength: float = DEFAULT_PRIOR_STRENGTH, seed: Seed = 0, fallback: bool = True) -> None:
        self.goal, self.top = check_goal(goal, k, top)
        self.k, self.runs = int(k), int(runs)
        self.delta = check_delta(delta)
        self.level = statement_delta(self.delta, question_pairs(self.goal, self.k, self.top))
        self.display_level = statement_delta(self.delta, self.k * (self.k - 1) // 2)
        self.fit_level = self.delta / (self.k * (self.k - 1) // 2)
        if not (prior_strength > 0) or not np.isfinite(prior_strength):
            raise HumevalError(f"prior_strength must be a positive number (Beta(a, a) prior), got {prior_strength!r}")
        self.a = float(prior_strength)
        self.fallback = bool(fallback)
        self.rng = as_generator(seed)
        r, k = self.runs, self.k
        self.votes = np.zeros(r, dtype=np.int64)
        self.direct_wins = np.zeros((r, k, k), dtype=np.int64)
        self.evidence = np.zeros((r, k, k), dtype=np.int64)
        self.fit_evidence = np.zeros((r, k, k), dtype=np.int64)  # [i, j]: (direct won by i, virtual lost) pairs
        self.pooled = np.zeros((r, k, k), dtype=bool)
        self.direct = np.zeros((r, k, k), dtype=bool)
        self.shown_pooled = np.zeros((r, k, k), dtype=bool)  # resolved at the rank sets' level
        self.shown_direct = np.zeros((r, k, k), dtype=bool)
        self.misfit_at = np.full(r, -1, dtype=np.int64)
        self.decided_at = np.full(r, -1, dtype=np.int64)
        self._answers: list[tuple[int, ...] | None] = [None] * r

    def _resolve(self, s: np.ndarray, level: float) -> np.ndarray:
        n = s + np.swapaxes(s, -1, -2)
        resolved: np.ndarray = (s > np.swapaxes(s, -1, -2)) & (log_mixture_ratio(n, s, self.a) >= np.log(1.0 / level))
        return resolved

    def _virtual(self, wins: np.ndarray, decisive: np.ndarray) -> np.ndarray:
        """Virtual duels of this batch: ``out[r, i, j]`` discordant pairs won by i, through every opponent m."""
        k = self.k
        # [r, i, j, m]: urn 1 = decisive votes of (i, m) (i won), urn 2 = decisive votes of (j, m) (j won)
        w1, n1 = wins[:, :, None, :], decisive[:, :, None, :]
        w2, n2 = wins[:, None, :, :], decisive[:, None, :, :]
        idx = np.arange(k)
        valid = (idx[:, None, None] < idx[None, :, None]) & (idx[None, None, :] != idx[:, None, None]) \
            & (idx[None, None, :] != idx[None, :, None])
        shape = (self.runs, k, k, k)
        n1b, n2b = np.where(valid, np.broadcast_to(n1, shape), 0), np.where(valid, np.broadcast_to(n2, shape), 0)
        i_won, j_won = discordant_pairs(self.rng, np.broadcast_to(w1, shape), n1b, np.broadcast_to(w2, shape), n2b)
        up_i, up_j = i_won.sum(axis=-1), j_won.sum(axis=-1)  # [r, i, j] for i < j
        duels: np.ndarray = up_i + np.swapaxes(up_j, -1, -2)
        return duels

    def update(self, wins: np.ndarray, ties: np.ndarray | None = None) -> PooledState:
        w = np.asarray(wins, dtype=np.int64).reshape((self.runs, self.k, self.k))
        t = np.zeros_like(w) if ties is None else np.asarray(ties, dtype=np.int64).reshape(w.shape)
        if (w < 0).any() or (t < 0).any():
            raise HumevalError("PooledStatements.update: vote counts must be non-negative")
        decisive = w + np.swapaxes(w, -1, -2)
        virtual = self._virtual(w, decisive)
        # fit check: this batch's direct duels paired with its virtual duels, pair by pair
        nv = virtual + np.swapaxes(virtual, -1, -2)
        d_i, v_i = discordant_pairs(self.rng, np.triu(w, 1), np.triu(decisive, 1), np.triu(virtual, 1),
                                    np.triu(nv, 1))
        # (direct i, virtual j) pairs count for "direct above virtual" at [i, j]; the reverse at [j, i]
        self.fit_evidence += d_i + np.swapaxes(v_i, -1, -2)
        self.votes += decisive.sum(axis=(-1, -2)) // 2 + np.triu(t, 1).sum(axis=(-1, -2))
        self.direct_wins += w
        self.evidence += w + virtual
        self.pooled |= self._resolve(self.evidence, self.level)
        self.direct |= self._resolve(self.direct_wins, self.level)
        self.shown_pooled |= self._resolve(self.evidence, self.display_level)
        self.shown_direct |= self._resolve(self.direct_wins, self.display_level)
        fit_bad = (self._resolve(self.fit_evidence, self.fit_level)
                   | (self.pooled & np.swapaxes(self.direct, -1, -2))).any(axis=(-1, -2))
        if self.fallback:
            self.misfit_at = np.where((self.misfit_at < 0) & fit_bad, self.votes, self.misfit_at)
        return self.state()

    def _read(self, pooled: np.ndarray, direct: np.ndarray) -> np.ndarray:
        """What is read: pooled | direct, direct alone after a misfit; a contradicted statement is dropped."""
        misfit = self.misfit_at >= 0
        resolved = np.where(misfit[:, None, None], direct, pooled | direct)
        return resolved & ~np.swapaxes(resolved, -1, -2)

    def state(self) -> PooledState:
        resolved = self._read(self.pooled, self.direct)
        decided, _ = goal_status(resolved, self.goal, self.top)
        new = decided & (self.decided_at < 0)
        for r in np.flatnonzero(new):
            self._answers[r] = answer_of(resolved[r], self.goal, self.top)
        self.decided_at = np.where(new, self.votes, self.decided_at)
        low, high = rank_sets(closure(self._read(self.shown_pooled, self.shown_direct)))
        opened = open_pairs(resolved, self.goal, self.top) & (self.decided_at < 0)[:, None, None]
        return PooledState(self.goal, self.top, self.delta, self.votes.copy(), self.pooled.copy(), self.direct.copy(),
                           resolved, low, high, self.decided_at.copy(), tuple(self._answers), self.misfit_at.copy(),
                           self.evidence.copy(), opened)
