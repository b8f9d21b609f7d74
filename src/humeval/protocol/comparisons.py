"""Which pairwise comparisons a stopping rule watches, and for how long: one resolver for every stage.

The live store (seeding, feeding the rule, closing tasks), the analysis replay, collation
and the report all ask :func:`watched_comparisons`; none of them reads ``stopping.systems``
itself. A comparison is one ``2afc`` criterion between two systems; ``system_a`` is the
system whose win counts as outcome 1 (``A``) for the rule.

The goal (``stopping.goal``; :func:`resolve_goal`) says what is decided. ``pair``:
``stopping.systems`` names the two systems; when it is empty and the study has exactly two
systems, those two are compared (in the order given). ``best``, ``top-k``, ``ranking``:
``stopping.systems`` lists the systems compared (empty: all of the study's systems), and
one comparison per criterion watches every pair of them (:mod:`humeval.stopping.goals`).
Without a goal, two systems give ``pair`` and more give ``best``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from typing import Protocol as _Shape

from humeval.errors import ProtocolError, did_you_mean
from humeval.protocol.load import format_path
from humeval.protocol.models import Protocol

__all__ = ["Comparison", "resolve_goal", "watched_comparisons", "watched_criteria", "watched_tasks"]


@dataclass(frozen=True)
class Comparison:
    """One watched comparison: a ``2afc`` criterion between ``system_a`` and ``system_b``.

    ``horizon`` is the largest number of aggregated outcomes collected without a decision
    (``stopping.max_judgements``; None: no horizon). ``in_flight_share`` and
    ``min_in_flight`` bound the judgements in flight (:meth:`in_flight_bound`); ``sessions``
    is ``stopping.sessions``, which admits sessions (:mod:`humeval.stopping.admission`).

    A goal over K systems (``goal`` other than ``pair``) watches every pair of ``members``;
    ``system_a``/``system_b`` are then its first two members and an outcome is 1 when the
    first system of the judged task won (:meth:`reference`). ``pooling`` (``stopping.pooling``): the goal is
    decided on the pooled statements, fed in epochs of ``epoch``+ votes, their virtual duels paired with ``seed``
    (the study seed; :mod:`humeval.policies.pooled_goal`).
    """

    criterion: str
    system_a: str
    system_b: str
    rule: str
    delta: float
    horizon: int | None = None
    in_flight_share: float = 0.05
    min_in_flight: int = 1
    goal: str = "pair"
    members: tuple[str, ...] = ()
    top: int = 1
    pair_choice: str = "adaptive"
    tuned_for: int | None = None
    sessions: int = 2
    pooling: bool = False
    epoch: int = 200
    seed: int = 0

    @property
    def multi(self) -> bool:
        """A goal over the pairs of K systems (best, top-k, ranking), not one pair."""
        return self.goal != "pair"

    def reference(self, task_systems: Sequence[str]) -> str:
        """The system whose win is outcome 1: ``system_a`` for a pair, the task's first system for a goal."""
        return task_systems[0] if self.multi else self.system_a

    @property
    def prior_strength(self) -> float:
        """The Beta(a, a) prior strength of the mixture test(s): the default, or tuned for ``tuned_for`` judgements
        at the test's own delta (a goal's pairwise tests run at delta / (K (K - 1) / 2))."""
        from humeval.stopping.goals import pair_delta
        from humeval.stopping.mixture import DEFAULT_PRIOR_STRENGTH, prior_strength_for

        if self.tuned_for is None:
            return DEFAULT_PRIOR_STRENGTH
        delta = pair_delta(self.delta, len(self.members)) if self.multi else self.delta
        return prior_strength_for(int(self.tuned_for), delta)

    def build_rule(self) -> Any:
        """A fresh rule object for a pair comparison (the live store and the analysis replay build it here)."""
        from humeval.stopping import get_rule  # scipy: only when a rule is built

        return get_rule(self.rule, self.delta, horizon=self.horizon, tuned_for=self.tuned_for)

    def in_flight_bound(self, n: int) -> int:
        """Judgements allowed in flight after ``n`` fed outcomes: ``max(min_in_flight, ceil(in_flight_share * n))``."""
        return max(self.min_in_flight, math.ceil(self.in_flight_share * n))

    @property
    def systems(self) -> tuple[str, ...]:
        return self.members if self.multi else (self.system_a, self.system_b)

    def involves(self, first: str, second: str) -> bool:
        """Whether a judgement between ``first`` and ``second`` (either order) belongs to this comparison."""
        if self.multi:
            return first != second and first in self.members and second in self.members
        return {first, second} == {self.system_a, self.system_b}


#: a problem of the stopping section: where it is (a path in the protocol) and what is wrong
Problem = tuple[tuple[str | int, ...], str]
#: the rules that decide the goals of more than two systems (pairwise mixture tests)
MULTI_SYSTEM_RULES = ("anytime", "mixture")


def default_goal(named: Sequence[str], systems: Sequence[str]) -> str:
    """The goal when ``stopping.goal`` is not given: ``pair`` for two compared systems, ``best`` for more."""
    return "pair" if len(named or systems) <= 2 else "best"


def resolve_goal(protocol: Protocol, systems: Sequence[str]) -> str | None:
    """The study's goal: ``stopping.goal``, else :func:`default_goal`."""
    stop = protocol.stopping
    if stop is None:
        return None
    return stop.goal if stop.goal is not None else default_goal(stop.systems or [], systems)


def goal_problems(goal: str | None, named: Sequence[str], systems: Sequence[str], *, top: object = None,
                  rule: str = "anytime", known: bool = True, spelled: Collection[str] = (),
                  pooling: bool = False) -> list[Problem]:
    """Why the stopping section's goal cannot be watched, each where it is: the systems the goal compares
    (``named``: ``stopping.systems``; two for ``pair``, at least two else, each one of ``systems`` when those are
    ``known``, or a name the data spells so: ``spelled``), the rule the goals of more systems decide with, and
    top-k's ``top``, and ``pooling`` (goals over 3 or more systems only).

    The one statement of these rules: ``validate`` reports each with its line in the YAML, and
    :func:`watched_comparisons` refuses a protocol that breaks one."""
    goal = goal or default_goal(named, systems)
    problems: list[Problem] = []
    if goal == "pair" and len(named) not in (0, 2):
        problems.append((("stopping", "systems"),
                         f"goal 'pair': name exactly two systems (or none for a two-system study), got {list(named)}"))
    elif goal != "pair" and len(named) == 1:
        problems.append((("stopping", "systems"),
                         f"goal '{goal}': name at least two systems (or none for all), got {list(named)}"))
    elif named and known:
        problems += [(("stopping", "systems", i), f"unknown system '{name}'. {did_you_mean(name, systems)}")
                     for i, name in enumerate(named) if name not in systems and name not in spelled]
    elif not named and known and goal == "pair" and len(systems) != 2:
        problems.append((("stopping", "systems"),
                         f"empty, and the study has {len(systems)} systems ({', '.join(systems)}): name the two "
                         "systems goal 'pair' compares, or set stopping.goal to best, top-k or ranking"))
    if goal != "pair" and rule not in MULTI_SYSTEM_RULES:
        problems.append((("stopping", "rule"), f"goal '{goal}' decides with pairwise mixture tests: use rule "
                         f"{' or '.join(MULTI_SYSTEM_RULES)}, got '{rule}'"))
    compared = len(named or systems)
    if goal == "top-k" and known and isinstance(top, int) and not 1 <= top < compared:
        problems.append((("stopping", "top"), f"goal top-k needs 1 <= top < {compared} (the systems compared), got {top}"))
    if goal == "top-k" and top is None:
        problems.append((("stopping", "top"), "goal top-k needs top: how many of the best systems to identify"))
    if pooling is True and (goal == "pair" or (known and compared < 3)):
        problems.append((("stopping", "pooling"), f"pooling needs goal best, top-k or ranking over 3 or more systems "
                         f"(votes pooled through common opponents), got goal '{goal}' over {compared} systems"))
    return problems


def watched_comparisons(protocol: Protocol, systems: Sequence[str]) -> list[Comparison]:
    """The comparisons the protocol's stopping rule watches, one per ``2afc`` criterion.

    ``systems`` are the study's systems (the protocol's ``systems``, else those in the
    data). Empty when the protocol has no stopping rule. Raises :class:`ProtocolError`
    for a pair that cannot be resolved (``validate`` reports the same problem with its line).
    """
    stop = protocol.stopping
    if stop is None:
        return []
    goal = resolve_goal(protocol, systems)
    named = list(stop.systems or [])
    pair = named or list(systems)
    problems = goal_problems(goal, named, systems, top=stop.top, rule=stop.rule, known=bool(systems),
                             pooling=stop.pooling)
    if problems:
        loc, message = problems[0]
        raise ProtocolError(f"{format_path(loc)}: {message}")
    if len(pair) != 2 if goal == "pair" else len(pair) < 2:  # no systems named, and none known to compare
        raise ProtocolError(f"stopping.systems: goal '{goal}' compares {'two' if goal == 'pair' else 'at least two'} "
                            f"systems; name them (the study lists {len(systems)})")
    top = 1 if stop.top is None else stop.top
    return [
        Comparison(c.name, pair[0], pair[1], stop.rule, stop.delta, stop.max_judgements, stop.in_flight_share,
                   stop.min_in_flight, goal=str(goal), members=tuple(pair), top=top, pair_choice=stop.pair_choice,
                   tuned_for=stop.tuned_for, sessions=stop.sessions, pooling=stop.pooling, epoch=stop.epoch,
                   seed=protocol.study.seed)
        for c in protocol.criteria
        if c.task.pairwise
    ]


class _TaskShape(_Shape):
    """What the rule reads of a task (read-only: a design Task, with tuples, is one)."""

    @property
    def family(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def systems(self) -> Sequence[str]: ...
    @property
    def criteria(self) -> Sequence[str]: ...


def watched_criteria(task: _TaskShape, comparisons: Mapping[str, Comparison]) -> tuple[str, ...]:
    """The watched comparisons (criterion names) a task feeds: a real pair task (kind ``task``) between a
    comparison's systems, for each of its criteria that a comparison watches; empty for any other task.

    The one rule for "a watched task": the design stage (serving order, watched lists) and the store
    (feeding the rule) both ask it.
    """
    if task.family != "pair" or task.kind != "task" or len(task.systems) != 2:
        return ()
    return tuple(c for c in task.criteria if c in comparisons and comparisons[c].involves(*task.systems))


def watched_tasks(tasks: Mapping[str, _TaskShape], comparisons: Mapping[str, Comparison]) -> dict[str, tuple[str, ...]]:
    """``task_id -> watched criteria`` for every watched task of ``tasks`` (by id; :func:`watched_criteria`)."""
    return {tid: w for tid, t in tasks.items() if (w := watched_criteria(t, comparisons))}
