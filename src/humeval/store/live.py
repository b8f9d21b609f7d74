"""Live dynamic stopping: settled, non-excluded pairwise outcomes feed the protocol's stopping rule.

The rule is fed only outcomes that the exclude stage will keep, so the decision announced
live is the one the analysis replay reproduces (docs/stopping.md, "Live stopping and
exclusion"):

* A participant is *settled* once they can do no more work: they asked for a task and none
  was left for them (their list or their share of the pool is done, or the in-flight bound
  below left them nothing), or they were inactive longer than a lease (``abandoned``). A
  settled participant is given no further task and cannot edit a watched judgement.
* At settlement the preregistered exclusion rules run on the participant's judgements with
  the exclude stage's own implementation (:func:`humeval.judgements.exclusion.exclusions`). An
  excluded (or abandoned) participant's outcomes are dropped; a judgement-scope exclusion
  drops just that judgement.
* ``list``: each kept judgement of a watched pair task is one outcome, fed in submission
  order at settlement. Pool strategies: a task's label (:mod:`humeval.policies`) waits in
  ``pending`` until every participant who voted on it is settled; it is fed if none of them
  (and none of their votes) is excluded, otherwise dropped.
* Each consumed judgement is recorded in ``fed`` with ``seq``, its 1-based place in the
  comparison's outcome sequence (the export's ``stop_seq``; every vote of a pool label gets
  the label's ``seq``).

Once the rule decides (or the horizon of :class:`~humeval.protocol.comparisons.Comparison`
is reached) the decision is stored, every pair task of the comparison is closed and its
open leases are withdrawn (a submit on one is refused with ``lease_withdrawn``).

Leases in flight are bounded: a watched pair task is leased only while the comparison's
judgements in flight (open leases plus judgements not yet fed or dropped) are fewer than
:meth:`~humeval.protocol.comparisons.Comparison.in_flight_bound` (``max(min_in_flight,
ceil(in_flight_share * n))``, ``n`` the outcomes fed so far; ``stopping.in_flight_share`` and
``stopping.min_in_flight`` in the protocol, default 0.05 and 1): with the defaults at most
``ceil(0.05 * n) - 1`` judgements are collected beyond the decision.

A rule object is kept per process and brought up to date from ``outcomes`` when other
processes fed it meanwhile, so every process sees the same sequence of outcomes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, insert, select, update

from humeval.design.tasks import ParticipantList, Task
from humeval.errors import StoreError
from humeval.protocol.comparisons import Comparison
from humeval.protocol.models import Protocol, TwoAFC
from humeval.store import schema as s
from humeval.store.context import StoreContext
from humeval.store.lease import EVENT, end_lease
from humeval.store.sql import Sql, sql_of

__all__ = [
    "Admission",
    "LiveGoal",
    "LiveGoalDecision",
    "Recruitment",
    "admissions",
    "after_judgement",
    "has_room",
    "in_flight",
    "is_settled",
    "latest_judgements",
    "live_leaderboards",
    "participant_exclusions",
    "preferred_tasks",
    "recruitment",
    "release_list",
    "sessions_wanted",
    "settle",
    "settle_abandoned",
    "vote_of",
]


_CLOSE_CHUNK = 500


def vote_of(choice: str, display: Sequence[str], system_a: str) -> int | None:
    """1 if the choice favours ``system_a``, 0 if the other system, None for tie/both-*."""
    if choice not in ("A", "B"):
        return None
    return int(TwoAFC.winner(choice, display[0], display[1]) == system_a)


def after_judgement(conn: Connection, ctx: StoreContext, task: Task, values: dict[str, Any], now: float) -> None:
    """After a first judgement of a pair task: pool strategies raise the cap or queue the task's label."""
    if ctx.strategy is None:
        return  # list: the participant's outcomes are fed when they are settled
    protocol = ctx.protocol
    pair_criteria = [c for c in task.criteria if protocol.criterion(c).type == "2afc"]
    if not pair_criteria:
        return
    # votes are relative to the task's first system; a label is flipped for a comparison whose A differs
    votes, rows = _votes(conn, task, pair_criteria)
    needed = {c: ctx.strategy.workers_needed(votes[c]) for c in pair_criteria}
    more = max(needed.values())
    limit = 2 * ctx.strategy.max_workers
    if more > 0 and len(rows) < limit:
        new_cap = min(len(rows) + more, limit)
        t = s.tasks.c
        conn.execute(update(s.tasks).where(and_(t.task_id == task.task_id, t.cap < new_cap)).values(cap=new_cap, open=1))
    db = sql_of(conn)
    for c in ctx.watched.get(task.task_id, ()):
        if needed[c] != 0 or db.one(_QUEUED, {"c": c, "t": task.task_id}) is not None:
            continue
        if not votes[c]:  # ties only: resolved, nothing for the rule
            for aid, _ in rows:
                db.run(_FED, {"c": c, "aid": aid, "seq": None, "now": now})
            continue
        label = ctx.strategy.label(votes[c])
        if task.systems[0] != ctx.comparisons[c].reference(task.systems):
            label = 1 - label
        conn.execute(insert(s.pending).values(
            comparison=c, task_id=task.task_id, outcome=int(label), state="pending", at=now,
            assignments=json.dumps([aid for aid, _ in rows]), participants=json.dumps(sorted({p for _, p in rows})),
        ))


_QUEUED = "SELECT 1 FROM pending WHERE comparison = :c AND task_id = :t"
_FED = "INSERT INTO fed (comparison, assignment_id, seq, at) VALUES (:c, :aid, :seq, :now)"


def _votes(conn: Connection, task: Task, criteria: list[str]) -> tuple[dict[str, list[int]], list[tuple[str, str]]]:
    j = s.judgements.c
    rows = conn.execute(
        select(j.display, j["values"], j.assignment_id, j.participant_id)
        .where(and_(j.task_id == task.task_id, j.revision == 0)).order_by(j.id)
    ).all()
    votes: dict[str, list[int]] = {c: [] for c in criteria}
    for r in rows:
        display, values = json.loads(r.display), json.loads(r[1])
        for c in criteria:
            v = vote_of(values.get(c, ""), display, task.systems[0])
            if v is not None:
                votes[c].append(v)
    return votes, [(r.assignment_id, r.participant_id) for r in rows]


class _Row:
    """The columns of a ``stopping`` row that feeding an outcome needs."""

    __slots__ = ("comparison", "delta", "n", "outcome", "rule")

    def __init__(self, comparison: str, rule: str, delta: float, n: int, outcome: str) -> None:
        self.comparison, self.rule, self.delta, self.n, self.outcome = comparison, rule, delta, n, outcome


def _rule(conn: Connection, ctx: StoreContext, row: Any) -> Any:
    """The process's rule object for the comparison, fed every stored outcome in order
    (the caller holds ``ctx.rules_lock`` while it uses the rule)."""
    with ctx.rules_lock:
        return _rule_locked(conn, ctx, row)


def _rule_locked(conn: Connection, ctx: StoreContext, row: Any) -> Any:
    cached = ctx.rules.get(row.comparison)
    comp = ctx.comparisons[row.comparison]
    if cached is None or cached[1] > row.n:
        # scipy: loaded on the first outcome, not at start
        rule: Any = LiveGoal(comp) if comp.multi else comp.build_rule()
        cached = (rule, 0)
    rule, fed = cached
    if fed < row.n:
        o = s.outcomes.c
        for outcome, task_id in conn.execute(
            # up to the state's n only: a reader without the row lock (the pair choice) may see outcomes
            # committed after it read the state, which the cache would otherwise count twice
            select(o.outcome, o.task_id).where(and_(o.comparison == row.comparison, o.n > fed, o.n <= row.n))
            .order_by(o.n)
        ).all():
            if comp.multi:
                rule.feed(ctx.tasks[task_id].systems, int(outcome))
            else:
                rule.update(int(outcome))
    ctx.rules[row.comparison] = (rule, row.n)
    return rule


class LiveGoal:
    """A goal over K systems (:class:`~humeval.stopping.goals.GoalRule`) fed as the store feeds pair rules.

    ``feed(task_systems, vote)``: vote 1 when the task's first system won. The returned
    decision carries the store's columns: ``n`` judgements fed, ``successes`` the systems still
    in contention, ``estimate`` their share of the K, thresholds 0; ``outcome`` is ``decided``
    once the goal is reached; ``events`` name what the judgement changed, with system names.
    """

    def __init__(self, comparison: Comparison) -> None:
        from humeval.stopping.goals import GoalRule  # scipy: loaded on the first outcome

        self.comparison = comparison
        self.index = {name: i for i, name in enumerate(comparison.members)}
        self.goal = GoalRule(len(comparison.members), comparison.goal, comparison.delta, comparison.top,
                             comparison.prior_strength)
        self.state = self.goal.current()

    def feed(self, task_systems: Sequence[str], vote: int) -> LiveGoalDecision:
        i, j = self.index[task_systems[0]], self.index[task_systems[1]]
        self.state = self.goal.update(i, j, i if vote == 1 else j)
        return LiveGoalDecision(self.state, self.comparison.members)

    def weights(self) -> Any:
        """Target shares of the next judgements over pairs (:func:`humeval.policies.pair_choice.pair_weights`)."""
        import numpy as np

        from humeval.policies.pair_choice import pair_weights

        cont = np.zeros(self.goal.k, dtype=bool)
        cont[list(self.state.contention)] = True
        return pair_weights(self.goal.wins, self.state.open_pairs, cont, self.goal.goal, self.comparison.pair_choice,
                            self.goal.top)

    def distance(self) -> int:
        """Fewest further judgements before the goal can change: the least distance of a pair it still needs."""
        from humeval.stopping.admission import distance

        st, wins = self.state, self.goal.wins
        if st.decided:
            return 0
        open_pairs = [(i, j) for i in range(self.goal.k) for j in range(i + 1, self.goal.k)
                      if st.open_pairs[i, j] or st.open_pairs[j, i]]
        return min((distance(self.goal.test.a_min, int(wins[i, j] + wins[j, i]), int(wins[i, j])) for i, j in open_pairs),
                   default=1)

    def useless(self, task_systems: Sequence[str]) -> bool:
        """Whether judging this pair can no longer change the answer (not an open pair of the goal rule).

        Open pairs (:func:`humeval.stopping.goals.open_pairs`) are unresolved and still needed by a
        decision read from direct resolutions only (``best``: pairs touching a system never beaten).
        """
        i, j = self.index.get(task_systems[0]), self.index.get(task_systems[1])
        if i is None or j is None:
            return False
        st = self.state
        return st.decided or not st.open_pairs[i, j]


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
        answer = [names[i] for i in d.answer] if d.answer is not None else None
        self.answer = answer
        self.reason = d.reason.replace(str(list(d.answer)), str(answer)) if answer is not None else d.reason

    def named_events(self) -> list[dict[str, Any]]:
        from humeval.stopping.goals import named_events

        return named_events(self.raw.events, self.names)


_STOPPING = "SELECT rule, delta, n, outcome FROM stopping WHERE comparison = :c FOR UPDATE"
_OUTCOME = (
    "INSERT INTO outcomes (comparison, n, task_id, outcome, successes, estimate, threshold_a, threshold_b, at) "
    "VALUES (:c, :n, :t, :outcome, :successes, :estimate, :threshold_a, :threshold_b, :now)"
)
_STATE = (
    "UPDATE stopping SET n = :n, successes = :successes, estimate = :estimate, threshold_a = :threshold_a, "
    "threshold_b = :threshold_b, outcome = :outcome, reason = :reason, decided_at = :decided_at WHERE comparison = :c"
)


def _float(x: Any) -> float | None:
    return None if x is None else float(x)  # numpy scalars -> Python floats for the driver


def _feed(conn: Connection, ctx: StoreContext, comparison: str, vote: int, task_id: str, now: float) -> tuple[int | None, bool]:
    """Feed one outcome: (its place in the sequence, or None when already decided; whether it decided)."""
    db = sql_of(conn)
    found = db.one(_STOPPING, {"c": comparison})
    if found is None:
        raise StoreError(f"no stopping state for comparison {comparison!r}")
    row = _Row(comparison, *found)
    if row.outcome != "continue":
        return None, False
    comp = ctx.comparisons[comparison]
    with ctx.rules_lock:
        rule = _rule(conn, ctx, row)
        d = rule.feed(ctx.tasks[task_id].systems, vote) if comp.multi else rule.update(vote)
        ctx.rules[comparison] = (rule, d.n)
    bounds = {"n": int(d.n), "successes": int(d.successes), "estimate": _float(d.estimate),
              "threshold_a": _float(d.threshold_a), "threshold_b": _float(d.threshold_b), "c": comparison}
    db.run(_OUTCOME, {**bounds, "t": task_id, "outcome": vote, "now": now})
    limit = ctx.comparisons[comparison].horizon
    horizon = limit is not None and d.n >= limit
    outcome = d.outcome if d.decided else ("horizon" if horizon else "continue")
    reason = d.reason if d.decided or not horizon else f"{d.reason}; horizon of {d.n} outcomes reached without a decision"
    db.run(_STATE, {**bounds, "outcome": outcome, "reason": reason, "decided_at": now if outcome != "continue" else None})
    changed = False
    if comp.multi:
        for e in d.named_events():  # eliminations and resolved pairs, recorded as they happen
            if e["kind"] != "decided":
                changed = True
                db.run(EVENT, {"now": now, "kind": f"goal_{e['kind']}", "pid": None,
                                "data": json.dumps({"comparison": comparison, "n": int(d.n), **e})})
    if outcome == "continue":
        # pool strategies: a pair that can no longer change the answer is served no more; ``list``: a session
        # admitted is paid whole, so it is served whole until the decision
        if changed and ctx.strategy is not None:
            _close(conn, ctx)
            _withdraw(db, comparison, now)
        return int(d.n), False
    data = {"comparison": comparison, "outcome": outcome, "n": d.n, "successes": d.successes,
            "threshold_a": d.threshold_a, "threshold_b": d.threshold_b, "rule": row.rule,
            "delta": row.delta, "reason": reason}
    if comp.multi:
        data |= {"goal": comp.goal, "answer": d.answer, "top": comp.top, "systems": list(comp.members)}
    conn.execute(insert(s.events).values(at=now, kind="decision", participant_id=None, data=json.dumps(data)))
    _close(conn, ctx)
    _withdraw(db, comparison, now)
    return int(d.n), True


def _close(conn: Connection, ctx: StoreContext) -> None:
    """Close every pair task whose watched criteria are all decided (or, for a goal over K
    systems, whose pair can no longer change the answer)."""
    st = s.stopping.c
    done = set(conn.execute(select(st.comparison).where(st.outcome != "continue")).scalars())

    def finished(task_id: str, c: str) -> bool:
        if c in done:
            return True
        cached = ctx.rules.get(c)
        return cached is not None and isinstance(cached[0], LiveGoal) and cached[0].useless(ctx.tasks[task_id].systems)

    with ctx.rules_lock:
        ids = [tid for tid, cs in ctx.watched.items() if all(finished(tid, c) for c in cs)]
    t_ = s.tasks.c
    for i in range(0, len(ids), _CLOSE_CHUNK):
        conn.execute(update(s.tasks).where(t_.task_id.in_(ids[i : i + _CLOSE_CHUNK])).values(closed=1))
    db = sql_of(conn)
    db.run(_CLOSE_CHECKS)
    db.run(_SPENT_LISTS)


#: a session with no task left to judge but its checks is over: its attention checks and repeats are closed (the
#: participant finishes instead of answering a check alone), and a list nobody holds is not handed out again
_NOTHING_LEFT = ("NOT EXISTS (SELECT 1 FROM list_tasks x JOIN tasks t ON t.task_id = x.task_id WHERE x.list_id = {l} "
                 "AND x.assignment_id IS NULL AND t.kind = 'task' AND t.closed = 0)")
_CLOSE_CHECKS = (
    "UPDATE tasks SET closed = 1 WHERE kind <> 'task' AND closed = 0 AND task_id IN (SELECT lt.task_id FROM list_tasks lt "
    "JOIN lists l ON l.list_id = lt.list_id WHERE l.watched > 0 AND lt.assignment_id IS NULL AND "
    + _NOTHING_LEFT.format(l="lt.list_id") + ")"
)
_SPENT_LISTS = ("UPDATE lists SET completed = 1 WHERE participant_id IS NULL AND completed = 0 AND watched > 0 AND "
                + _NOTHING_LEFT.format(l="lists.list_id"))


_OPEN_LEASES = (
    "SELECT a.assignment_id, a.task_id, a.list_id, a.position, a.participant_id FROM assignments a "
    "JOIN watched_tasks w ON w.task_id = a.task_id JOIN tasks t ON t.task_id = a.task_id "
    "WHERE w.comparison = :c AND a.status = 'leased' AND t.closed = 1"
)


def _withdraw(db: Sql, comparison: str, now: float) -> int:
    """Withdraw the open leases of the comparison's closed tasks; return how many."""
    return sum(end_lease(db, "withdrawn", lease, now, comparison=comparison)
               for lease in db.all(_OPEN_LEASES, {"c": comparison}))


# -- in flight --------------------------------------------------------------------------------
_IN_FLIGHT_WHERE = (
    "FROM watched_tasks w JOIN assignments a ON a.task_id = w.task_id WHERE w.comparison = :c "
    "AND ((a.status = 'leased' AND a.expires_at >= :now) OR (a.status = 'done' AND NOT EXISTS "
    "(SELECT 1 FROM fed f WHERE f.comparison = :c AND f.assignment_id = a.assignment_id)))"
)
_IN_FLIGHT = "SELECT count(*) " + _IN_FLIGHT_WHERE
_IN_FLIGHT_TASKS = "SELECT count(DISTINCT a.task_id) " + _IN_FLIGHT_WHERE
_TASK_IN_FLIGHT = "SELECT 1 " + _IN_FLIGHT_WHERE + " AND a.task_id = :t LIMIT 1"
_STATE_OF = "SELECT n, outcome FROM stopping WHERE comparison = :c FOR UPDATE"


_IN_FLIGHT_BY_TASK = "SELECT a.task_id, count(*) " + _IN_FLIGHT_WHERE + " GROUP BY a.task_id"
_GOAL_STATE = "SELECT rule, delta, n, outcome FROM stopping WHERE comparison = :c"


def preferred_tasks(conn: Connection, ctx: StoreContext, now: float) -> list[list[str]] | None:
    """A goal over K systems with a pool strategy: its pair tasks grouped by pair, the most wanted pair first.

    The shares come from the current evidence (:meth:`LiveGoal.weights`: ``adaptive`` or
    ``uniform``); a pair's deficit is its share of all judgements (fed and in flight) minus
    what it has, so arriving participants are sent where the next judgement helps most
    (deficit round-robin, as :func:`humeval.policies.pair_choice.next_pair`). Pairs with no
    share (resolved, or unable to change the answer) are left out. None when the study has
    no such goal; an empty list once the goal is decided.
    """
    goals = [c for c in ctx.comparisons.values() if c.multi]
    if not goals or ctx.strategy is None:
        return None
    comp = goals[0]  # the first 2afc criterion's goal chooses the pair
    db = sql_of(conn)
    found = db.one(_GOAL_STATE, {"c": comp.criterion})
    if found is None or found[3] != "continue":
        return []
    import numpy as np

    with ctx.rules_lock:
        rule = _rule(conn, ctx, _Row(comp.criterion, *found))
        weights = rule.weights()
        counts = (rule.goal.wins + rule.goal.wins.T).astype(float)
        index = dict(rule.index)
    for task_id, n in db.all(_IN_FLIGHT_BY_TASK, {"c": comp.criterion, "now": now}):
        a, b = (index[x] for x in ctx.tasks[task_id].systems[:2])
        counts[a, b] += n
        counts[b, a] += n
    allowed = np.triu(weights > 0, 1)
    deficit = weights * (counts[allowed].sum() / 2 + 1) - counts / 2
    pairs = sorted(zip(*np.nonzero(allowed)), key=lambda ij: -deficit[ij])
    by_pair = _pair_tasks(ctx, comp, index)
    return [by_pair.get((int(i), int(j)), []) for i, j in pairs]


def _pair_tasks(ctx: StoreContext, comp: Comparison, index: dict[str, int]) -> dict[tuple[int, int], list[str]]:
    cached = ctx.pair_tasks.get(comp.criterion)
    if cached is None:
        cached = {}
        for task_id, cs in ctx.watched.items():
            if comp.criterion in cs:
                a, b = sorted(index[x] for x in ctx.tasks[task_id].systems[:2])
                cached.setdefault((a, b), []).append(task_id)
        ctx.pair_tasks[comp.criterion] = cached
    return cached


def in_flight(db: Sql, ctx: StoreContext, comparison: str, now: float) -> int:
    """Outcomes of the comparison on their way to the rule, in the rule's units.

    ``list``: each judgement of a pair task is one outcome, so open leases plus judgements
    not yet fed or dropped. Pool strategies: a task's votes make one label, so the tasks with
    such a lease or judgement (a label still gathering votes counts once, however many).
    """
    sql = _IN_FLIGHT if ctx.strategy is None else _IN_FLIGHT_TASKS
    return int(db.scalar(sql, {"c": comparison, "now": now}) or 0)


def has_room(db: Sql, ctx: StoreContext, task_id: str, now: float) -> bool:
    """Whether one more lease of ``task_id`` keeps every undecided watched comparison within its bound.

    With a pool strategy, another vote on a task already in flight adds no outcome, so it
    always has room (otherwise a label waiting for its next voter would hold the bound for
    ever). Takes the comparison's ``stopping`` row lock (PostgreSQL), so processes grant
    leases one at a time.
    """
    for c in ctx.watched.get(task_id, ()):
        state = db.one(_STATE_OF, {"c": c})
        if state is None or state[1] != "continue":
            return False
        if ctx.strategy is not None and db.one(_TASK_IN_FLIGHT, {"c": c, "now": now, "t": task_id}) is not None:
            continue
        if in_flight(db, ctx, c, now) >= ctx.comparisons[c].in_flight_bound(int(state[0])):
            return False
    return True


# -- sessions: admitting participant lists (``list`` strategy) ------------------------------------
#: the watched lists in progress: held by a participant who is not settled yet (their outcomes are pending)
_HELD_WATCHED = (
    "SELECT l.list_id FROM lists l WHERE l.watched > 0 AND l.participant_id IS NOT NULL "
    "AND NOT EXISTS (SELECT 1 FROM settled x WHERE x.participant_id = l.participant_id)"
)
#: every comparison's state, locked (PostgreSQL) so that processes admit sessions one at a time
_STOPPING_ALL = "SELECT comparison, rule, delta, n, outcome FROM stopping ORDER BY comparison"
_FREE_WATCHED = "SELECT count(*) FROM lists WHERE watched > 0 AND participant_id IS NULL AND completed = 0"


@dataclass(frozen=True)
class Admission:
    """One watched comparison's admission of sessions (:mod:`humeval.stopping.admission`).

    ``n`` outcomes fed, ``outcome`` the stopping state (``continue`` while undecided), ``distance``
    to the rule's boundary, ``pending`` outcomes admitted but not fed (the watched tasks of the
    sessions in progress), ``active`` those sessions, ``session`` the watched tasks of one session
    (w), ``allowance``, ``wanted`` the sessions that may start now, ``unused_bound`` the most
    admitted outcomes the decision can leave unused, ``free`` watched lists nobody has claimed.
    """

    comparison: str
    n: int
    outcome: str
    distance: int
    pending: int
    active: int
    session: int
    allowance: int
    wanted: int
    unused_bound: int
    free: int

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def admissions(conn: Connection, ctx: StoreContext, *, lock: bool = True) -> list[Admission]:
    """Every watched comparison's admission now (``lock``: the ``stopping`` rows locked on PostgreSQL, as a
    claim does; a read for the admin page or a platform does not lock)."""
    from humeval.stopping import admission as adm

    if not ctx.list_watched:
        return []
    db = sql_of(conn)
    held = [r[0] for r in db.all(_HELD_WATCHED)]
    free = int(db.scalar(_FREE_WATCHED) or 0)
    out = []
    for row in db.all(_STOPPING_ALL + (" FOR UPDATE" if lock else "")):
        c, n, outcome = row[0], int(row[3]), row[4]
        comp = ctx.comparisons.get(c)
        if comp is None:
            continue
        w = ctx.session_sizes.get(c, 0)
        pending = sum(ctx.list_watched.get(l_, {}).get(c, 0) for l_ in held)
        active = sum(1 for l_ in held if c in ctx.list_watched.get(l_, {}))
        bound = comp.in_flight_bound(n)
        allow = adm.allowance(comp.sessions, w, bound)
        d = 0
        if outcome == "continue":
            with ctx.rules_lock:
                d = _distance(_rule(conn, ctx, _Row(c, *row[1:])), comp, n)
        wanted = adm.wanted(pending, w, d, allow) if outcome == "continue" else 0
        out.append(Admission(c, n, outcome, d, pending, active, w, allow, wanted,
                             adm.unused_bound(comp.sessions, w, bound), free))
    return out


def _distance(rule: Any, comp: Comparison, n: int) -> int:
    """The rule's distance to a decision (1 for a rule with no boundary on counts), at most its horizon."""
    d = int(rule.distance()) if hasattr(rule, "distance") else 1
    return min(d, comp.horizon - n) if comp.horizon is not None else d


def sessions_wanted(found: Sequence[Admission]) -> int | None:
    """Watched sessions that may start now: as many as every undecided comparison admits (0: none now); None
    when no comparison is undecided (the watched lists left hold other tasks too)."""
    undecided = [a.wanted for a in found if a.outcome == "continue"]
    return min(undecided) if undecided else None


@dataclass(frozen=True)
class Recruitment:
    """What a crowd platform should offer now (``list`` strategy): places are participant lists.

    ``started``: participants who were given a list (places used); ``active``: lists in progress;
    ``wanted``: lists that may start now (sessions the stopping rule admits, within the watched
    lists left, plus every other list left); ``target = started + wanted``: the places a platform
    should have opened in all; ``decided``: every watched comparison is decided (or none is
    watched); ``finished``: nothing is wanted or in progress any more and nothing can reopen.
    """

    started: int
    active: int
    wanted: int
    free_watched: int
    free_other: int
    decided: bool
    finished: bool
    comparisons: tuple[Admission, ...]

    @property
    def target(self) -> int:
        return self.started + self.wanted

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("started", "active", "wanted", "free_watched", "free_other", "decided",
                                              "finished")}
        return out | {"target": self.target, "comparisons": [a.to_json() for a in self.comparisons]}


_STARTED = "SELECT count(*) FROM participants WHERE list_id IS NOT NULL"
_ACTIVE = (
    "SELECT count(*) FROM lists l WHERE l.participant_id IS NOT NULL AND l.completed = 0 "
    "AND NOT EXISTS (SELECT 1 FROM settled x WHERE x.participant_id = l.participant_id)"
)
_FREE_OTHER = "SELECT count(*) FROM lists WHERE watched = 0 AND participant_id IS NULL AND completed = 0"


def recruitment(conn: Connection, ctx: StoreContext) -> Recruitment:
    """The places a platform should offer now (a read: nothing is locked)."""
    db = sql_of(conn)
    found = tuple(admissions(conn, ctx, lock=False))
    admitted = sessions_wanted(found)
    free_watched = found[0].free if found else 0
    free_other = int(db.scalar(_FREE_OTHER) or 0)
    if admitted is None:  # the lists left hold other tasks too (those holding only the decided ones are spent)
        free_watched, free_other = 0, free_watched + free_other
    active = int(db.scalar(_ACTIVE) or 0)
    wanted = min(admitted or 0, free_watched) + free_other
    reopen = admitted is not None and free_watched > 0  # sessions in progress may let the rule admit more
    return Recruitment(int(db.scalar(_STARTED) or 0), active, wanted, free_watched, free_other, admitted is None,
                       wanted == 0 and active == 0 and not reopen, found)


# -- settling participants ----------------------------------------------------------------------
_SETTLE = (
    "INSERT INTO settled (participant_id, at, excluded, excluded_tasks, reason) VALUES (:pid, :now, 0, '[]', '') "
    "ON CONFLICT (participant_id) DO NOTHING"
)
SETTLED = "SELECT 1 FROM settled WHERE participant_id = :pid"
_VERDICT = "UPDATE settled SET excluded = :x, excluded_tasks = :tasks, reason = :reason WHERE participant_id = :pid"
_RELEASE_LIST = (
    "UPDATE lists SET participant_id = NULL, expires_at = NULL WHERE completed = 0 AND participant_id = :pid"
)
_ABANDONED = (
    "SELECT DISTINCT a.participant_id FROM assignments a JOIN watched_tasks w ON w.task_id = a.task_id "
    "JOIN participants p ON p.participant_id = a.participant_id WHERE a.status = 'done' AND p.last_seen < :cut "
    "AND NOT EXISTS (SELECT 1 FROM settled x WHERE x.participant_id = a.participant_id) LIMIT 100"
)


def release_list(db: Sql, participant_id: str) -> None:
    """Give the participant's unfinished list back: the next participant to enter continues it."""
    db.run(_RELEASE_LIST, {"pid": participant_id})


def is_settled(db: Sql, participant_id: str) -> bool:
    return db.one(SETTLED, {"pid": participant_id}) is not None


def settle_abandoned(conn: Connection, ctx: StoreContext, now: float) -> list[str]:
    """Settle (as abandoned: outcomes dropped) participants inactive for a lease who hold watched judgements."""
    if not ctx.watched:
        return []
    db = sql_of(conn)
    decided: list[str] = []
    for (pid,) in db.all(_ABANDONED, {"cut": now - ctx.lease_seconds}):
        decided += settle(conn, ctx, pid, now, abandoned=True)
    return decided


def settle(conn: Connection, ctx: StoreContext, participant_id: str, now: float, *, abandoned: bool = False) -> list[str]:
    """Settle the participant (once): run the exclusion rules, feed or drop their outcomes; return new decisions."""
    if not ctx.watched:
        return []
    db = sql_of(conn)
    if db.run(_SETTLE, {"pid": participant_id, "now": now}) != 1:
        return []
    release_list(db, participant_id)  # the rest of an unfinished list goes to the next participant
    latest = latest_judgements(conn, participant_id)
    if abandoned:
        excluded, keys, reason = True, set(), "abandoned: inactive for longer than a lease"
    else:
        excluded, keys, reason = participant_exclusions(ctx, latest)
    db.run(_VERDICT, {"x": int(excluded), "tasks": json.dumps(sorted(keys)), "reason": reason, "pid": participant_id})
    decided: list[str] = []
    if ctx.strategy is None:
        for j in latest:
            for c in ctx.watched.get(j["task_id"], ()):
                decided += _feed_judgement(conn, ctx, j, c, excluded or (j["task_id"], c) in keys, now)
    else:
        decided += _flush(conn, ctx, now)
    return decided


def _feed_judgement(conn: Connection, ctx: StoreContext, j: dict[str, Any], c: str, dropped: bool, now: float) -> list[str]:
    db = sql_of(conn)
    reference = ctx.comparisons[c].reference(ctx.tasks[j["task_id"]].systems)
    vote = None if dropped else vote_of(j["values"].get(c, ""), j["display"], reference)
    if vote is None:  # excluded, or a tie: resolved without an outcome
        db.run(_FED, {"c": c, "aid": j["assignment_id"], "seq": None, "now": now})
        return []
    seq, decided = _feed(conn, ctx, c, vote, j["task_id"], now)
    db.run(_FED, {"c": c, "aid": j["assignment_id"], "seq": seq, "now": now})
    return [c] if decided else []


_PENDING = "SELECT id, comparison, task_id, outcome, assignments, participants FROM pending WHERE state = 'pending' ORDER BY id"
_PENDING_STATE = "UPDATE pending SET state = :state WHERE id = :id"


def _flush(conn: Connection, ctx: StoreContext, now: float) -> list[str]:
    """Feed (or drop) every pending pool label whose voters are all settled, oldest first."""
    db = sql_of(conn)
    verdicts: dict[str, tuple[bool, set[tuple[str, str]]] | None] = {}
    st = s.settled.c
    decided: list[str] = []
    for pid_, c, task_id, outcome, aids_json, pids_json in db.all(_PENDING):
        pids = json.loads(pids_json)
        for p in pids:
            if p not in verdicts:
                r = conn.execute(select(st.excluded, st.excluded_tasks).where(st.participant_id == p)).first()
                verdicts[p] = None if r is None else (bool(r[0]), {tuple(k) for k in json.loads(r[1])})  # type: ignore[misc]
        if any(verdicts[p] is None for p in pids):
            continue
        dropped = any(v is not None and (v[0] or (task_id, c) in v[1]) for v in (verdicts[p] for p in pids))
        seq: int | None = None
        if not dropped:
            seq, now_decided = _feed(conn, ctx, c, int(outcome), task_id, now)
            if now_decided:
                decided.append(c)
        # fed: reached the rule; late: kept, but the rule had decided before the label was complete
        state = "dropped" if dropped else ("fed" if seq is not None else "late")
        db.run(_PENDING_STATE, {"state": state, "id": pid_})
        for aid in json.loads(aids_json):
            db.run(_FED, {"c": c, "aid": aid, "seq": seq, "now": now})
    return decided


_LATEST = (
    "SELECT id, assignment_id, task_id, kind, item_id, list_id, display, \"values\", seconds, submitted_at "
    "FROM judgements WHERE participant_id = :pid ORDER BY id"
)


def latest_judgements(conn: Connection, participant_id: str) -> list[dict[str, Any]]:
    """The participant's judgements, latest revision of each assignment, in first-submission order."""
    latest: dict[str, dict[str, Any]] = {}
    for id_, aid, task_id, kind, item_id, list_id, display, values, seconds, at in sql_of(conn).all(_LATEST, {"pid": participant_id}):
        first = latest.get(aid, {}).get("first", id_)
        latest[aid] = {"first": first, "judgement_id": id_, "assignment_id": aid, "participant_id": participant_id,
                       "task_id": task_id, "kind": kind, "item_id": item_id, "list_id": list_id,
                       "display": json.loads(display), "values": json.loads(values), "seconds": seconds,
                       "submitted_at": at}
    return sorted(latest.values(), key=lambda j: j["first"])


def participant_exclusions(ctx: StoreContext, judgements: list[dict[str, Any]], protocol: Protocol | None = None,
                           ) -> tuple[bool, set[tuple[str, str]], str]:
    """The exclude stage's own rules (``protocol``'s, default the study's) on one participant:
    (participant excluded, excluded (task, criterion), why)."""
    protocol = protocol or ctx.protocol
    if not protocol.exclusion or not judgements:
        return False, set(), ""
    # the exclude stage's own rules, on columns (no pandas): loaded when the first participant is settled
    from humeval.judgements import JUDGEMENT_COLUMNS
    from humeval.judgements.exclusion import exclusion_rows
    from humeval.store.reads import long_rows

    rows = long_rows(ctx, judgements)
    table = {c: [r.get(c) for r in rows] for c in JUDGEMENT_COLUMNS}
    done = {j["task_id"] for j in judgements}
    checks = [ctx.tasks[t] for t in sorted(done) if ctx.tasks[t].kind != "task"]
    lists = [ParticipantList("store", 0, checks)]
    found = exclusion_rows(table, protocol, lists)
    people = [r for r in found if r["scope"] == "participant"]
    keys = {(r["task_id"], r["criterion"]) for r in found if r["scope"] == "judgement"}
    reason = "; ".join(f"{r['rule']}: {r['detail']}" for r in found)
    return bool(people), keys, reason


_GOAL_EVENTS = "SELECT at, kind, data FROM events WHERE kind LIKE :prefix ORDER BY id"  # '%' bound: psycopg


def live_leaderboards(conn: Connection, ctx: StoreContext) -> dict[str, dict[str, Any]]:
    """Per goal over K systems: the live leaderboard (rank sets, contention, wins) and the announcements so far.

    Rank sets and contention are the goal rule's (anytime-valid, whenever looked at); the
    rows are ordered by rank set, then by the share of judgements won.
    """
    out: dict[str, dict[str, Any]] = {}
    db = sql_of(conn)
    events = [(at, kind, json.loads(data)) for at, kind, data in db.all(_GOAL_EVENTS, {"prefix": "goal_%"})]
    for comp in ctx.comparisons.values():
        if not comp.multi:
            continue
        found = db.one(_GOAL_STATE, {"c": comp.criterion})
        if found is None:
            continue
        with ctx.rules_lock:
            rule = _rule(conn, ctx, _Row(comp.criterion, *found))
            st, wins = rule.state, rule.goal.wins.copy()
        games = wins + wins.T
        rows = []
        for i, name in enumerate(comp.members):
            played = int(games[i].sum())
            rows.append({"system": name, "rank_low": int(st.rank_low[i]), "rank_high": int(st.rank_high[i]),
                         "in_contention": i in st.contention, "won": int(wins[i].sum()), "judgements": played,
                         "win_share": None if played == 0 else float(wins[i].sum() / played)})
        rows.sort(key=lambda r: (r["rank_low"], -(r["win_share"] or 0.0)))
        out[comp.criterion] = {
            "goal": comp.goal, "top": comp.top, "n": int(found[2]), "outcome": found[3],
            "answer": None if st.answer is None else [comp.members[i] for i in st.answer],
            "pair_delta": rule.goal.pair_delta, "rows": rows,
            "events": [{"at": at, "kind": kind[5:], **{k: v for k, v in d.items() if k not in ("comparison", "kind")}}
                       for at, kind, d in events if d.get("comparison") == comp.criterion],
        }
    return out
