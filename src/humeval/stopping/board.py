"""The live leaderboard of a pairwise criterion over K >= 3 systems: scores, rank sets, votes per pair, decision.

What the admin page shows while votes come in (:mod:`humeval.server.admin`), computed from the votes so far:

* **scores**: Davidson's model (Bradley-Terry with ties, :func:`humeval.stats.davidson.davidson_fit`) on every vote
  so far, a point estimate; while its maximum-likelihood fit does not exist (a system that never won or never
  lost: the graph of "i beat or tied j" is not strongly connected, Ford 1957) the fit adds half a win each way to every pair, and the board says so;
* **rank sets and decision**: the pooled anytime-valid statements of :mod:`humeval.stopping.pooled`
  (:class:`~humeval.stopping.pooled.PooledStatements`), fed the votes in the order they were submitted, in batches
  of ``batch`` consecutive votes; a batch is fed once it is complete, so every look reads a prefix of one and the
  same sequence of batches (the pairing of virtual duels is seeded), and the statements hold whenever the board
  is looked at. The votes of the incomplete last batch wait (``pending``). The rank sets are those of
  :class:`~humeval.stopping.pooled.PooledState` (``rank_low``/``rank_high``, statements at delta / (K (K - 1)));
  the decision is the goal's answer (``ranking`` unless the protocol names a goal) or ``undecided``, with the
  reason text of :meth:`~humeval.stopping.pooled.PooledState.reason`. When the fit check rejects, the statements
  read are the direct ones and ``basis`` says so;
* **votes per pair**: wins of the row's system over the column's, and ties (both-bad votes included).

What it assumes: the pooled statements' assumptions (Davidson's model, votes independent given their pair) and
that the pairs served do not depend on the votes (a fixed design: the study's lists, drawn from its seed before
any vote), which makes any batch of consecutive votes a batch whose pairs were chosen before its votes were seen.
A goal whose server skips the pairs it no longer needs breaks that; its board is the goal rule's (direct
statements, :meth:`humeval.stopping.live_goal.LiveGoal.leaderboard`), beside these scores and counts.

Checked against: :class:`~humeval.stopping.pooled.PooledStatements` and
:func:`~humeval.stats.davidson.davidson_fit` called directly on the same votes (tests/unit/stopping/test_board.py,
tests/integration/server/test_admin_board.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from humeval.errors import DataError
from humeval.rng import Seed, as_generator
from humeval.stats.davidson import davidson_fit
from humeval.stopping.goals import closure
from humeval.stopping.pooled import PooledStatements

__all__ = ["BATCH", "TIE_CHOICES", "ArenaBoard", "arena_board", "davidson_intervals", "vote_matrices"]

#: consecutive votes per batch of the pooled statements on the admin page
BATCH = 50
#: pairwise choices that carry no direction (counted as ties by the Davidson fit, skipped by the tests)
TIE_CHOICES = ("tie", "both-bad")


@dataclass(frozen=True)
class ArenaBoard:
    """One criterion's leaderboard. Arrays are indexed by ``systems`` (the protocol's order); ``order`` lists them
    by rank set, then score. ``wins[i, j]``: votes preferring i to j; ``ties[i, j]`` (symmetric).

    ``basis``: ``pooled`` (pooled and direct statements) or ``direct`` (the fit check rejected: direct only);
    ``fed``: votes fed to the statements (complete batches), ``pending``: votes waiting for their batch;
    ``ridge``: the scores needed the half-win prior (no MLE yet)."""

    systems: tuple[str, ...]
    goal: str
    top: int
    delta: float
    batch: int
    theta: np.ndarray
    nu: float
    ridge: bool
    wins: np.ndarray
    ties: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    basis: str
    answer: tuple[str, ...] | None
    reason: str
    fed: int
    pending: int

    @property
    def order(self) -> tuple[int, ...]:
        keys = sorted(range(len(self.systems)), key=lambda i: (int(self.rank_low[i]), int(self.rank_high[i]),
                                                               -float(self.theta[i])))
        return tuple(keys)

    @property
    def votes(self) -> int:
        return self.fed + self.pending


def vote_matrices(k: int, first: np.ndarray, second: np.ndarray, choice: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(wins, ties) K x K counts of votes ``choice`` (A: ``first`` won, B: ``second``, or a tie choice)."""
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    ch = np.asarray(choice, dtype=object)
    a, b = ch == "A", ch == "B"
    t = np.isin(ch, TIE_CHOICES)
    bad = ~(a | b | t)
    if bad.any():
        raise DataError(f"arena board: vote {ch[bad][0]!r} is not a pairwise choice; valid: A, B, "
                        f"{', '.join(TIE_CHOICES)}")
    wins, ties = np.zeros((k, k), dtype=np.int64), np.zeros((k, k), dtype=np.int64)
    np.add.at(wins, (first[a], second[a]), 1)
    np.add.at(wins, (second[b], first[b]), 1)
    np.add.at(ties, (first[t], second[t]), 1)
    return wins, ties + ties.T


def arena_board(systems: Sequence[str], first: Sequence[str], second: Sequence[str], choice: Sequence[str], *,
                goal: str = "ranking", delta: float = 0.05, top: int | None = None, batch: int = BATCH,
                seed: Seed = 0) -> ArenaBoard:
    """The leaderboard of votes ``choice[n]`` between ``first[n]`` (shown as A) and ``second[n]`` (B), in the order
    they were submitted, over ``systems`` (K >= 3). ``seed``: the pairing of the virtual duels (the study seed)."""
    names = tuple(systems)
    k = len(names)
    if k < 3:
        raise DataError(f"arena board: needs 3 or more systems, got {k} ({', '.join(names)})")
    if int(batch) < 1:
        raise DataError(f"arena board: batch must be a positive number of votes, got {batch!r}")
    index = {s: i for i, s in enumerate(names)}
    try:
        fi = np.array([index[s] for s in first], dtype=np.int64)
        si = np.array([index[s] for s in second], dtype=np.int64)
    except KeyError as exc:
        raise DataError(f"arena board: vote on system {exc.args[0]!r}, not one of {', '.join(names)}") from None
    ch = list(choice)
    if not (len(fi) == len(si) == len(ch)):
        raise DataError(f"arena board: first, second and choice differ in length ({len(fi)}, {len(si)}, {len(ch)})")
    wins, ties = vote_matrices(k, fi, si, ch)
    rule = PooledStatements(k, goal, delta, top, seed=seed)
    n_batches = len(ch) // int(batch)
    state = rule.state()
    for b in range(n_batches):
        sl = slice(b * batch, (b + 1) * batch)
        w, t = vote_matrices(k, fi[sl], si[sl], ch[sl])
        state = rule.update(w[None], t[None])
    # the maximum-likelihood fit exists when every system beat or tied every other through a chain (Ford's
    # condition: the graph of "i beat or tied j" is strongly connected); Newton's "converged" alone can stop on a
    # flat ridge of an MLE that does not exist
    reach = closure((wins + ties) > 0)
    fit = davidson_fit(wins, ties)
    ridge = not (bool(reach.all()) and bool(fit.converged))
    if ridge:
        fit = davidson_fit(wins, ties, prior=0.5)
    ans = state.answer[0]
    named = None if ans is None else tuple(names[i] for i in ans)
    reason = state.reason(0) if ans is None else state.reason(0).replace(str(list(ans)), str(list(named or ())))
    return ArenaBoard(names, rule.goal, rule.top, rule.delta, int(batch), np.asarray(fit.theta), float(fit.nu), ridge,
                      wins, ties, state.rank_low[0].copy(), state.rank_high[0].copy(),
                      "direct" if bool(state.misfit[0]) else "pooled",
                      named, reason,
                      n_batches * int(batch), len(ch) - n_batches * int(batch))


def davidson_intervals(wins: np.ndarray, ties: np.ndarray, *, confidence: float = 0.95, n_boot: int = 1000,
                       seed: Seed = 0, prior: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals of Davidson's scores: the votes resampled with replacement (``n_boot``
    multinomial draws of the pair-and-outcome counts, seeded), each resample fitted (batched), the
    (1 - confidence) / 2 quantiles of each system's score. Fixed-n intervals, valid at one look (not when
    watched: the rank sets are the anytime-valid statement); ``prior`` as in the point fit.

    Checked against: a loop over resamples that redraws the votes one by one (tests/unit/stopping/test_board.py).
    """
    if not (0 < confidence < 1):
        raise DataError(f"davidson_intervals: confidence must lie in (0, 1), got {confidence!r}")
    w, t = np.asarray(wins, dtype=np.int64), np.asarray(ties, dtype=np.int64)
    k = w.shape[-1]
    up = np.triu_indices(k, 1)
    cells = np.concatenate([w.ravel(), t[up]])
    n = int(cells.sum())
    if n == 0:
        return np.full(k, np.nan), np.full(k, np.nan)
    draws = as_generator(seed).multinomial(n, cells / n, size=int(n_boot))
    bw = draws[:, : k * k].reshape((-1, k, k))
    bt = np.zeros_like(bw)
    bt[:, up[0], up[1]] = draws[:, k * k:]
    bt = bt + np.swapaxes(bt, -1, -2)
    theta = davidson_fit(bw, bt, prior=prior).theta
    tail = (1 - confidence) / 2
    low, high = np.quantile(theta, [tail, 1 - tail], axis=0)
    return low, high
