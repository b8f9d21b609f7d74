"""A goal over K systems decided on the pooled statements, its pairs chosen per epoch (``stopping.pooling``).

The goals ``best``, ``top-k`` and ``ranking`` can stop on the pooled anytime-valid statements of
:mod:`humeval.stopping.pooled` (direct duels and virtual duels through common opponents) instead of the direct
resolutions of :mod:`humeval.stopping.goals`. Those statements need their votes in *batches* whose pairs were
chosen before any of the batch's votes was seen. :class:`PooledGoal` makes the batches *epochs* of the outcome
sequence the live store feeds one vote at a time:

* the epochs are fixed by the count of votes alone: the first holds ``epoch`` votes, each next one
  max(``epoch``, ceil(0.1 x the votes before it)) (:func:`epoch_size`; an answer is read at most 10 % late), so the
  live server, the simulator and the analysis replay cut one sequence of votes into the same epochs;
* at each epoch's end the epoch's votes go to :class:`~humeval.stopping.pooled.PooledStatements` as one batch, and
  then the pair weights of the next epoch are set (:func:`humeval.policies.pooled_pairs.pooled_pair_weights`: the
  question's focal statements, Davidson's fit to the votes of the complete epochs) and kept for the whole epoch.
  Within an epoch the server serves pairs by these weights and by how many votes each pair already has in the epoch
  (counts, never directions), so an epoch's pairs depend on earlier epochs' votes only: the guarantee's assumption;
* the fit check and the fallback are those of the statements: when the check rejects, the pooled statements are
  withdrawn and the goal reads the direct statements alone, and the reason says so;
* the goal is decided at an epoch's end or not at all; the decision's n is the votes fed (a multiple of the
  epochs), which the analysis replay reproduces from the stored sequence.

What it assumes: the pooled statements' assumptions (Davidson's model, votes independent given their pair), and
that which votes reach the rule does not depend on their directions (settlement and exclusion rules that do not read
the task votes; the vote-outlier rule does read them, see docs/stopping.md). Seeds: the pairing of virtual duels is
seeded by the study seed (``seed``), recorded in the lock.

Checked against: :class:`~humeval.stopping.pooled.PooledStatements` fed the same epochs directly
(tests/unit/policies/test_pooled_goal.py), and a live server run replayed from its export
(tests/integration/server/test_live_pooled_goal.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from humeval.errors import HumevalError
from humeval.policies.pair_choice import DEFAULT_EXPLORE
from humeval.policies.pooled_pairs import pooled_pair_weights
from humeval.rng import Seed
from humeval.stats.davidson import davidson_fit
from humeval.stopping.goals import goal_status
from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH
from humeval.stopping.pooled import PooledState, PooledStatements

if TYPE_CHECKING:
    from humeval.protocol.comparisons import Comparison

__all__ = ["DEFAULT_EPOCH", "EPOCH_GROWTH", "PooledGoal", "PooledGoalDecision", "PooledLiveGoal", "allocate",
           "epoch_size"]

#: votes of the first epoch (``stopping.epoch``), and the least of every later one
DEFAULT_EPOCH = 200
#: each epoch after the first holds at least this share of the votes before it
EPOCH_GROWTH = 0.1


def epoch_size(start: int, first: int = DEFAULT_EPOCH) -> int:
    """Votes of the epoch that starts after ``start`` votes: max(first, ceil(0.1 start))."""
    return max(int(first), math.ceil(EPOCH_GROWTH * int(start)))


def allocate(rng: np.random.Generator, size: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``size[r]`` votes over pairs in proportion to ``p[r]``: the whole parts exactly, the remainders at random
    (systematic sampling), so two pairs of equal weight get the same number of votes up to one (the virtual duels of a
    batch pair the votes of two pairs: a multinomial's imbalance would waste the larger pair's extra votes)."""
    exact = size[:, None] * p
    whole = np.floor(exact).astype(np.int64)
    frac = exact - whole
    # systematic sampling of the remainders: one uniform offset per run, points u, u + 1, ... on the cumulative fractions
    cum = np.cumsum(frac, axis=-1)
    u = rng.random(len(size))[:, None]
    hits = np.floor(cum - u + 1.0).astype(np.int64)
    extra = np.diff(np.concatenate([np.zeros((len(size), 1), dtype=np.int64), np.maximum(hits, 0)], axis=-1), axis=-1)
    out: np.ndarray = whole + np.clip(extra, 0, 1)
    return out


class PooledGoal:
    """The goal on pooled statements for ``runs`` studies at once (live and replay: 1), fed epoch by epoch.

    ``feed(i, j, winner)`` (one run) adds a decisive vote to the current epoch and closes the epoch when it is full;
    ``feed_epoch(wins[r, i, j])`` feeds a whole epoch (the simulator). ``weights`` ``[r, i, j]`` (symmetric, summing
    to 1 over i < j while undecided) are the pair shares of the current epoch, set when it began.
    """

    def __init__(self, k: int, goal: str = "best", delta: float = 0.05, top: int | None = None, *,
                 epoch: int = DEFAULT_EPOCH, policy: str = "adaptive", seed: Seed = 0, runs: int = 1,
                 prior_strength: float = DEFAULT_PRIOR_STRENGTH, explore: float = DEFAULT_EXPLORE) -> None:
        if isinstance(epoch, bool) or int(epoch) != epoch or epoch < 1:
            raise HumevalError(f"stopping.epoch: votes per epoch must be a positive integer, got {epoch!r}")
        self.rule = PooledStatements(k, goal, delta, top, runs=runs, prior_strength=prior_strength, seed=seed)
        self.k, self.runs, self.goal, self.top = self.rule.k, self.rule.runs, self.rule.goal, self.rule.top
        self.first, self.policy, self.explore = int(epoch), policy, float(explore)
        self.start = 0  # votes of the complete epochs
        self.size = epoch_size(0, self.first)
        self.wins = np.zeros((self.runs, self.k, self.k), dtype=np.int64)  # every vote fed, by epoch or not
        self.epoch_wins = np.zeros_like(self.wins)  # the current epoch's votes (not read by the pair choice)
        self.state = self.rule.state()
        self.weights = self._weights()

    @property
    def fed(self) -> int:
        return self.start + int(self.epoch_wins[0].sum())

    @property
    def level(self) -> float:
        """Each pooled and each direct statement's level: delta / (2 x the question's pairs)."""
        return float(self.rule.level)

    def _weights(self) -> np.ndarray:
        done = self.wins - self.epoch_wins
        theta = davidson_fit(done, np.zeros_like(done), prior=1.0, max_iter=30).theta
        avail = np.broadcast_to(~np.eye(self.k, dtype=bool), self.wins.shape) & ~self.state.decided[:, None, None]
        beaten = np.asarray(self.state.resolved.any(axis=-2), dtype=bool)
        w: np.ndarray = pooled_pair_weights(theta, self.state.open_pairs, avail, self.policy, self.explore,
                                            goal=self.goal, top=self.top, beaten=beaten)
        return w

    def feed_epoch(self, wins: np.ndarray) -> PooledState:
        """Feed one complete epoch (``wins[r, i, j]``: its decisive votes preferring i to j) and set the next
        epoch's weights; a decided run may be fed nothing."""
        w = np.asarray(wins, dtype=np.int64).reshape(self.wins.shape)
        self.wins += w - self.epoch_wins
        self.epoch_wins[...] = 0
        self.state = self.rule.update(w)
        self.start += self.size
        self.size = epoch_size(self.start, self.first)
        self.weights = self._weights()
        return self.state

    def feed(self, i: int, j: int, winner: int) -> bool:
        """One decisive vote of (i, j) won by ``winner`` (one run); True when it closed an epoch."""
        if self.runs != 1:
            raise HumevalError("PooledGoal.feed: one vote at a time is for one study (runs=1); use feed_epoch")
        if i == j or winner not in (i, j) or not (0 <= i < self.k and 0 <= j < self.k):
            raise HumevalError(f"a vote compares two different systems of 0..{self.k - 1} and names one of them; "
                               f"got i={i}, j={j}, winner={winner}")
        self.epoch_wins[0, winner, j if winner == i else i] += 1
        self.wins[0, winner, j if winner == i else i] += 1
        if self.fed - self.start < self.size:
            return False
        self.feed_epoch(self.epoch_wins.copy())
        return True

    def contention(self) -> np.ndarray:
        """``[r, i]``: system i can still change the answer, from the statements read (as the goals read them)."""
        _, cont = goal_status(self.state.resolved, self.goal, self.top)
        out: np.ndarray = np.asarray(cont) & ~self.state.decided[:, None]
        return out


class PooledGoalDecision:
    """The store's view of one study's :class:`PooledGoal` after a vote (the columns of
    :class:`~humeval.stopping.live_goal.LiveGoalDecision`): ``events`` are set when the vote closed an epoch."""

    def __init__(self, goal: PooledGoal, names: Sequence[str], before: PooledState | None, closed: bool) -> None:
        st = goal.state
        self.raw, self.names = st, tuple(names)
        self.n = goal.fed
        cont = goal.contention()[0]
        self.successes = int(cont.sum())
        self.estimate = self.successes / len(self.names)
        self.threshold_a = self.threshold_b = 0.0
        ans = st.answer[0]
        self.decided = ans is not None
        self.outcome = "decided" if self.decided else "continue"
        self.answer = None if ans is None else [self.names[x] for x in ans]
        reason = st.reason(0)
        if ans is not None:
            reason = reason.replace(str(list(ans)), str(self.answer))
        self.reason = f"{reason}; epochs of {goal.first}+ votes (next ends at {goal.start + goal.size:,})"
        self._events: list[dict[str, Any]] = []
        if closed and before is not None:
            new = st.resolved[0] & ~before.resolved[0]
            for w, lo in zip(*np.nonzero(new), strict=True):
                self._events.append({"kind": "pair_resolved", "above": self.names[w], "below": self.names[lo],
                                     "judgements": int(goal.wins[0, w, lo] + goal.wins[0, lo, w]),
                                     "wins": int(goal.wins[0, w, lo]), "basis": "direct" if st.misfit[0] else
                                     ("pooled" if st.pooled[0, w, lo] else "direct")})
            if st.misfit[0] and not before.misfit[0]:
                self._events.append({"kind": "pooling_withdrawn", "votes": int(st.misfit_at[0])})
            if self.decided and before.answer[0] is None:
                self._events.append({"kind": "decided", "answer": self.answer})

    def named_events(self) -> list[dict[str, Any]]:
        return list(self._events)


class PooledLiveGoal:
    """A goal on pooled statements fed one pair judgement at a time, as the live store feeds its goals (the
    interface of :class:`humeval.stopping.live_goal.LiveGoal`): ``feed(task_systems, vote)``, vote 1 when the
    task's first system won."""

    def __init__(self, comparison: Comparison) -> None:
        self.comparison = comparison
        self.index = {name: i for i, name in enumerate(comparison.members)}
        self.goal = PooledGoal(len(comparison.members), comparison.goal, comparison.delta, comparison.top,
                               epoch=comparison.epoch, policy=comparison.pair_choice, seed=comparison.seed,
                               prior_strength=comparison.prior_strength)
        self.decision = PooledGoalDecision(self.goal, comparison.members, None, False)

    @property
    def level(self) -> float:
        return self.goal.level

    @property
    def answer(self) -> tuple[int, ...] | None:
        return self.goal.state.answer[0]

    def feed(self, task_systems: Sequence[str], vote: int) -> PooledGoalDecision:
        i, j = self.index[task_systems[0]], self.index[task_systems[1]]
        before = self.goal.state
        closed = self.goal.feed(i, j, i if vote == 1 else j)
        self.decision = PooledGoalDecision(self.goal, self.comparison.members, before, closed)
        return self.decision

    def distance(self) -> int:
        """Fewest further judgements before the goal can change: the votes left in the current epoch."""
        if self.goal.state.decided[0]:
            return 0
        return max(1, self.goal.start + self.goal.size - self.goal.fed)

    def pair_shares(self) -> tuple[np.ndarray, np.ndarray]:
        """(weights, counts): the current epoch's pair weights (set when it began) and its votes per pair so far;
        the pair choice reads counts, never the epoch's directions."""
        e = self.goal.epoch_wins[0]
        return self.goal.weights[0], (e + e.T).astype(float)

    def leaderboard(self) -> list[dict[str, Any]]:
        """One row per system (rank set from the pooled statements at delta / (K (K - 1)), contention, judgements
        won and played), ordered by rank set, then by the share won."""
        st, wins = self.goal.state, self.goal.wins[0]
        cont = self.goal.contention()[0]
        games = wins + wins.T
        rows = []
        for i, name in enumerate(self.comparison.members):
            played = int(games[i].sum())
            rows.append({"system": name, "rank_low": int(st.rank_low[0, i]), "rank_high": int(st.rank_high[0, i]),
                         "in_contention": bool(cont[i]), "won": int(wins[i].sum()), "judgements": played,
                         "win_share": None if played == 0 else float(wins[i].sum() / played)})
        return sorted(rows, key=lambda r: (r["rank_low"], -(r["win_share"] or 0.0)))

    def basis(self) -> str:
        """``pooled``, or ``direct`` once the fit check withdrew the pooled statements."""
        return "direct" if bool(self.goal.state.misfit[0]) else "pooled"

    def useless(self, task_systems: Sequence[str]) -> bool:
        """A pair is closed only at the decision: a vote of any pair can feed a virtual duel, and the fallback to
        direct statements can need any pair again (pairs of no weight are just not preferred)."""
        return bool(self.goal.state.decided[0])
