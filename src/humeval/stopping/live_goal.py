"""A goal over K systems (:class:`~humeval.stopping.goals.GoalRule`) fed one pair judgement at a time, as the
live store feeds its pair rules (:mod:`humeval.store.live`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from humeval.stopping.admission import distance
from humeval.stopping.goals import GoalRule, named_events

if TYPE_CHECKING:
    from humeval.protocol.comparisons import Comparison

__all__ = ["LiveGoal", "LiveGoalDecision"]


class LiveGoal:
    """``feed(task_systems, vote)``: vote 1 when the task's first system won. The returned decision carries the
    store's columns: ``n`` judgements fed, ``successes`` the systems still in contention, ``estimate`` their share
    of the K, thresholds 0; ``outcome`` is ``decided`` once the goal is reached; ``events`` name what the
    judgement changed, with system names."""

    def __init__(self, comparison: Comparison) -> None:
        self.comparison = comparison
        self.index = {name: i for i, name in enumerate(comparison.members)}
        self.goal = GoalRule(len(comparison.members), comparison.goal, comparison.delta, comparison.top,
                             comparison.prior_strength)
        self.state = self.goal.current()

    def feed(self, task_systems: Sequence[str], vote: int) -> LiveGoalDecision:
        i, j = self.index[task_systems[0]], self.index[task_systems[1]]
        self.state = self.goal.update(i, j, i if vote == 1 else j)
        return LiveGoalDecision(self.state, self.comparison.members)

    @property
    def level(self) -> float:
        """Each pairwise test's level: delta / (K (K - 1) / 2)."""
        return float(self.goal.pair_delta)

    @property
    def answer(self) -> tuple[int, ...] | None:
        return self.state.answer

    def basis(self) -> str:
        return "direct"

    def distance(self) -> int:
        """Fewest further judgements before the goal can change: the least distance of a pair it still needs."""
        st, wins, k = self.state, self.goal.wins, self.goal.k
        if st.decided:
            return 0
        open_pairs = [(i, j) for i in range(k) for j in range(i + 1, k) if st.open_pairs[i, j] or st.open_pairs[j, i]]
        return min((distance(self.goal.test.a_min, int(wins[i, j] + wins[j, i]), int(wins[i, j])) for i, j in open_pairs),
                   default=1)

    def leaderboard(self) -> list[dict[str, Any]]:
        """One row per system (rank set, contention, judgements won and played), ordered by rank set, then by the
        share of judgements won."""
        st, wins = self.state, self.goal.wins
        games = wins + wins.T
        rows = []
        for i, name in enumerate(self.comparison.members):
            played = int(games[i].sum())
            rows.append({"system": name, "rank_low": int(st.rank_low[i]), "rank_high": int(st.rank_high[i]),
                         "in_contention": i in st.contention, "won": int(wins[i].sum()), "judgements": played,
                         "win_share": None if played == 0 else float(wins[i].sum() / played)})
        return sorted(rows, key=lambda r: (r["rank_low"], -(r["win_share"] or 0.0)))

    def useless(self, task_systems: Sequence[str]) -> bool:
        """Whether judging this pair can no longer change the answer: it is not an open pair of the goal rule
        (:func:`humeval.stopping.goals.open_pairs`: unresolved and still needed by a decision read from direct
        resolutions only; ``best``: pairs touching a system never beaten)."""
        i, j = self.index.get(task_systems[0]), self.index.get(task_systems[1])
        if i is None or j is None:
            return False
        return self.state.decided or not self.state.open_pairs[i, j]


class LiveGoalDecision:
    """The store's view of a :class:`~humeval.stopping.goals.GoalDecision`."""

    def __init__(self, d: Any, names: tuple[str, ...]) -> None:
        self.raw, self.names = d, names
        self.n = d.comparisons
        self.successes = len(d.contention)
        self.estimate = len(d.contention) / len(names)
        self.threshold_a = self.threshold_b = 0.0
        self.decided = d.decided
        self.outcome = "decided" if d.decided else "continue"
        self.answer = [names[i] for i in d.answer] if d.answer is not None else None
        self.reason = d.reason.replace(str(list(d.answer)), str(self.answer)) if self.answer is not None else d.reason

    def named_events(self) -> list[dict[str, Any]]:
        return named_events(self.raw.events, self.names)
