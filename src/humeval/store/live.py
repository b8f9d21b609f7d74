"""Live dynamic stopping: settled, non-excluded pairwise outcomes feed the protocol's stopping rule.

The rule is fed only outcomes that the exclude stage will keep, so the decision announced
live is the one the analysis replay reproduces (docs/stopping.md, "Live stopping and
exclusion"):

* A participant is *settled* once they can do no more work: they asked for a task and none
  was left for them (their list or their share of the pool is done, or the in-flight bound
  below left them nothing), or they were inactive longer than a lease while the service ran
  (``abandoned``; a downtime is not inactivity, :mod:`humeval.store.alive`). A settled
  participant is given no further task and nothing of theirs is stored any more (no answer,
  no edit, of any task: :func:`humeval.store.submit.submit_judgement`); one who did work (or
  whose first task the decision withdrew) has completed their session and gets the code,
  whenever they come back.
* At settlement the preregistered exclusion rules run on the participant's judgements with
  the exclude stage's own implementation (:func:`humeval.judgements.exclusion.exclusions`),
  for an abandoned participant as for one who finished: an excluded participant's outcomes
  are dropped, a judgement-scope exclusion drops just that judgement, and the rest is fed.
  Since nothing is stored after settlement, the exclude stage judges the same judgements,
  and the replay of the kept ones equals the live rule.
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
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from sqlalchemy import Connection

from humeval.design.tasks import Task
from humeval.errors import StoreError
from humeval.protocol.comparisons import Comparison
from humeval.protocol.models import TwoAFC
from humeval.store.context import StoreContext
from humeval.store.lease import EVENT, FREE_PLACE, end_lease
from humeval.store.qualify import undecided
from humeval.store.reads import latest_judgements
from humeval.store.sql import Sql, sql_of

__all__ = [
    "ABANDONED",
    "Admission",
    "Recruitment",
    "admissions",
    "after_judgement",
    "after_submit",
    "exclusion_overview",
    "feeds_at_submit",
    "has_room",
    "in_flight",
    "is_settled",
    "live_leaderboards",
    "preferred_tasks",
    "recruitment",
    "release_list",
    "sessions_wanted",
    "settle",
    "settle_abandoned",
    "open_waves",
    "was_abandoned",
    "waves",
]


_CLOSE_CHUNK = 500
#: one fixed statement for every chunk of tasks to close
_CLOSE_TASKS = "UPDATE tasks SET closed = 1 WHERE task_id IN (" + ", ".join(f":t{k}" for k in range(_CLOSE_CHUNK)) + ")"
_DECIDED = "SELECT comparison FROM stopping WHERE outcome <> 'continue'"


def after_judgement(conn: Connection, ctx: StoreContext, task: Task, values: dict[str, Any], now: float) -> None:
    """After a first judgement of a pair task: pool strategies raise the cap or queue the task's label."""
    if ctx.strategy is None:
        return  # list: the participant's outcomes are fed when they are settled
    protocol = ctx.protocol
    pair_criteria = [c for c in task.criteria if protocol.criterion(c).task.pairwise]
    if not pair_criteria:
        return
    # votes are relative to the task's first system; a label is flipped for a comparison whose A differs
    db = sql_of(conn)
    votes, rows = _votes(db, task, pair_criteria)
    needed = {c: ctx.strategy.workers_needed(votes[c]) for c in pair_criteria}
    more = max(needed.values())
    limit = 2 * ctx.strategy.max_workers
    if more > 0 and len(rows) < limit:
        new_cap = min(len(rows) + more, limit)
        db.run(_RAISE_CAP, {"cap": new_cap, "t": task.task_id})
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
        db.run(_QUEUE, {"c": c, "t": task.task_id, "outcome": int(label), "now": now,
                        "aids": json.dumps([aid for aid, _ in rows]), "pids": json.dumps(sorted({p for _, p in rows}))})


_RAISE_CAP = "UPDATE tasks SET cap = :cap, open = 1 WHERE task_id = :t AND cap < :cap"
_QUEUE = ("INSERT INTO pending (comparison, task_id, outcome, state, at, assignments, participants) "
          "VALUES (:c, :t, :outcome, 'pending', :now, :aids, :pids)")
_QUEUED = "SELECT 1 FROM pending WHERE comparison = :c AND task_id = :t"
_FED = "INSERT INTO fed (comparison, assignment_id, seq, at) VALUES (:c, :aid, :seq, :now)"


_VOTES = ('SELECT display, "values", assignment_id, participant_id FROM judgements WHERE task_id = :t AND revision = 0 '
          "ORDER BY id")


def _votes(db: Sql, task: Task, criteria: list[str]) -> tuple[dict[str, list[int]], list[tuple[str, str]]]:
    rows = db.all(_VOTES, {"t": task.task_id})
    votes: dict[str, list[int]] = {c: [] for c in criteria}
    for r in rows:
        display, values = json.loads(r[0]), json.loads(r[1])
        for c in criteria:
            v = TwoAFC.vote(values.get(c, ""), display, task.systems[0])
            if v is not None:
                votes[c].append(v)
    return votes, [(r[2], r[3]) for r in rows]


_OUTCOMES = "SELECT outcome, task_id FROM outcomes WHERE comparison = :c AND n > :fed AND n <= :n ORDER BY n"


class _Row(NamedTuple):
    """The columns of a ``stopping`` row that feeding an outcome needs."""

    comparison: str
    rule: str
    delta: float
    n: int
    outcome: str


def _rule(conn: Connection, ctx: StoreContext, row: _Row) -> Any:
    """The process's rule object for the comparison, fed every stored outcome in order
    (the caller holds ``ctx.rules_lock`` while it uses the rule)."""
    with ctx.rules_lock:
        cached = ctx.rules.get(row.comparison)
        comp = ctx.comparisons[row.comparison]
        if cached is None or cached[1] > row.n:
            # scipy: loaded on the first outcome, not at start
            from humeval.policies.pooled_goal import PooledLiveGoal
            from humeval.stopping.live_goal import LiveGoal

            fresh: Any = PooledLiveGoal(comp) if comp.pooling else LiveGoal(comp) if comp.multi else comp.build_rule()
            cached = (fresh, 0)
        rule, fed = cached
        if fed < row.n:
            # up to the state's n only: a reader without the row lock (the pair choice) may see outcomes
            # committed after it read the state, which the cache would otherwise count twice
            for outcome, task_id in sql_of(conn).all(_OUTCOMES, {"c": row.comparison, "fed": fed, "n": row.n}):
                if comp.multi:
                    rule.feed(ctx.tasks[task_id].systems, int(outcome))
                else:
                    rule.update(int(outcome))
        ctx.rules[row.comparison] = (rule, row.n)
        return rule


#: a comparison's state (locked with ``FOR UPDATE`` by the operations that feed it)
_GOAL_STATE = "SELECT rule, delta, n, outcome FROM stopping WHERE comparison = :c"
_STOPPING = _GOAL_STATE + " FOR UPDATE"
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
    db.run(EVENT, {"now": now, "kind": "decision", "pid": None, "data": json.dumps(data)})
    _plan_wave(db, ctx, comparison, outcome, now)
    _close(conn, ctx)
    _withdraw(db, comparison, now)
    return int(d.n), True


def _close(conn: Connection, ctx: StoreContext) -> None:
    """Close every pair task whose watched criteria are all decided (or, for a goal over K
    systems, whose pair can no longer change the answer)."""
    db = sql_of(conn)
    done = {c for (c,) in db.all(_DECIDED)} - {c for (c,) in db.all(_WAVE_OPEN)}

    def finished(task_id: str, c: str) -> bool:
        if c in done:
            return True
        cached = ctx.rules.get(c)  # a goal over K systems: its pairs that can no longer change the answer
        return cached is not None and ctx.comparisons[c].multi and cached[0].useless(ctx.tasks[task_id].systems)

    with ctx.rules_lock:
        ids = [tid for tid, cs in ctx.watched.items() if all(finished(tid, c) for c in cs)]
    for i in range(0, len(ids), _CLOSE_CHUNK):
        chunk = ids[i : i + _CLOSE_CHUNK]  # the last id repeated to fill the statement's places
        db.run(_CLOSE_TASKS, {f"t{k}": chunk[min(k, len(chunk) - 1)] for k in range(_CLOSE_CHUNK)})
    db.run(_CLOSE_CHECKS)
    db.run(_SPENT_LISTS)


#: a session with no task left to judge but its checks is over: its attention checks and repeats are closed (the
#: participant finishes instead of answering a check alone), and a list nobody holds is not handed out again
_NOTHING_LEFT = ("NOT EXISTS (SELECT 1 FROM list_tasks x JOIN tasks t ON t.task_id = x.task_id WHERE x.list_id = {l} "
                 "AND " + FREE_PLACE.format(l="x.list_id", pos="x.position") + " AND t.kind = 'task' AND t.closed = 0)")
_CLOSE_CHECKS = (
    "UPDATE tasks SET closed = 1 WHERE kind <> 'task' AND closed = 0 AND task_id IN (SELECT lt.task_id FROM list_tasks lt "
    "JOIN lists l ON l.list_id = lt.list_id WHERE l.watched > 0 AND " + FREE_PLACE.format(l="lt.list_id", pos="lt.position") + " AND "
    + _NOTHING_LEFT.format(l="lt.list_id") + ")"
)
_SPENT_LISTS = ("UPDATE lists SET completed = 1 WHERE participant_id IS NULL AND completed = 0 AND watched > 0 AND "
                + _NOTHING_LEFT.format(l="lists.list_id"))


_OPEN_LEASES = (
    "SELECT a.assignment_id, a.task_id, a.participant_id FROM assignments a "
    "JOIN watched_tasks w ON w.task_id = a.task_id JOIN tasks t ON t.task_id = a.task_id "
    "WHERE w.comparison = :c AND a.status = 'leased' AND t.closed = 1"
)


def _withdraw(db: Sql, comparison: str, now: float) -> int:
    """Withdraw the open leases of the comparison's closed tasks; return how many."""
    return sum(end_lease(db, "withdrawn", lease, now, comparison=comparison)
               for lease in db.all(_OPEN_LEASES, {"c": comparison}))


# -- the confirmation wave (``stopping.drift_check: wave``) ----------------------------------------------------
_WAVE_OPEN = "SELECT comparison FROM waves WHERE state = 'open'"
_LAUNCH = "SELECT min(created_at) FROM participants"
_PLAN_WAVE = ("INSERT INTO waves (comparison, side, size, opens_at, state, n, wins) "
              "VALUES (:c, :side, :size, :opens, 'waiting', 0, 0) ON CONFLICT (comparison) DO NOTHING")
_DUE_WAVES = "SELECT comparison FROM waves WHERE state = 'waiting' AND opens_at <= :now"
_OPEN_WAVE = "UPDATE waves SET state = 'open', opened_at = :now WHERE comparison = :c AND state = 'waiting'"
#: a wave serves the comparison's pair tasks nobody was leased, in the lists nobody holds (their attention checks too)
_FREE_OF_WAVE = ("SELECT lt.task_id FROM list_tasks lt JOIN lists l ON l.list_id = lt.list_id "
                 "WHERE l.participant_id IS NULL AND l.watched > 0 AND NOT EXISTS "
                 "(SELECT 1 FROM assignments a WHERE a.task_id = lt.task_id) AND (lt.task_id IN "
                 "(SELECT w.task_id FROM watched_tasks w WHERE w.comparison = :c) OR EXISTS (SELECT 1 FROM tasks t "
                 "WHERE t.task_id = lt.task_id AND t.kind <> 'task'))")
_REOPEN_TASK = "UPDATE tasks SET closed = 0 WHERE task_id = :t"
_REOPEN_LISTS = ("UPDATE lists SET completed = 0 WHERE participant_id IS NULL AND completed = 1 AND watched > 0 AND "
                 "EXISTS (SELECT 1 FROM list_tasks x JOIN watched_tasks w ON w.task_id = x.task_id JOIN tasks t ON "
                 "t.task_id = x.task_id WHERE x.list_id = lists.list_id AND w.comparison = :c AND t.closed = 0)")
_WAVE_OF = "SELECT side, size, state, opened_at, n, wins FROM waves WHERE comparison = :c FOR UPDATE"
_LEASED_AT = "SELECT created_at FROM assignments WHERE assignment_id = :aid"
_WAVE_OUTCOME = ("INSERT INTO wave_outcomes (comparison, assignment_id, seq, outcome, at) VALUES (:c, :aid, :seq, :o, :now) "
                 "ON CONFLICT (comparison, assignment_id) DO NOTHING")
_WAVE_COUNT = "UPDATE waves SET n = :n, wins = :wins WHERE comparison = :c"
_WAVE_DONE = "UPDATE waves SET state = 'done', closed_at = :now, flagged = :flag WHERE comparison = :c"
_WAVES = "SELECT comparison, side, size, opens_at, state, opened_at, closed_at, n, wins, flagged FROM waves ORDER BY comparison"


def _plan_wave(db: Sql, ctx: StoreContext, comparison: str, outcome: str, now: float) -> None:
    """At a pair's decision (``list``, ``stopping.drift_check: wave``): its wave, waiting for its preregistered time."""
    stopping = ctx.protocol.stopping
    if (stopping is None or stopping.wave is None or outcome not in ("A", "B") or ctx.strategy is not None
            or ctx.comparisons[comparison].multi):
        return
    launch = db.scalar(_LAUNCH)
    opens = (float(launch) if launch is not None else now) + stopping.wave.opens_after_seconds
    db.run(_PLAN_WAVE, {"c": comparison, "side": int(outcome == "A"), "size": stopping.wave.size(ctx.protocol.analysis.alpha),
                        "opens": opens})


def open_waves(conn: Connection, ctx: StoreContext, now: float) -> list[str]:
    """Open every wave whose time came: the comparison's unserved pair tasks in the lists nobody holds are served
    again (and those lists' attention checks), so the crowd that comes now judges them; return the waves opened."""
    stopping = ctx.protocol.stopping
    if stopping is None or stopping.wave is None or not ctx.watched:
        return []
    db = sql_of(conn)
    opened = []
    for (c,) in db.all(_DUE_WAVES, {"now": now}):
        if db.run(_OPEN_WAVE, {"c": c, "now": now}) != 1:
            continue  # another process opened it
        for (task_id,) in db.all(_FREE_OF_WAVE, {"c": c}):
            db.run(_REOPEN_TASK, {"t": task_id})
        db.run(_REOPEN_LISTS, {"c": c})
        db.run(EVENT, {"now": now, "kind": "wave_opened", "pid": None, "data": json.dumps({"comparison": c})})
        opened.append(c)
    return opened


def _count_wave(conn: Connection, ctx: StoreContext, c: str, assignment_id: str, vote: int, now: float) -> None:
    """A kept outcome of a decided pair, leased once its wave was open: counted in the wave (never fed to the rule);
    once the flag is settled (curtailed, :func:`humeval.stats.drift.curtailed_wave`'s rule) or w are counted, the
    wave is done and its tasks close again."""
    db = sql_of(conn)
    found = db.one(_WAVE_OF, {"c": c})
    if found is None or found[2] != "open":
        return
    side, size, _, opened_at, n, wins = found
    leased = db.scalar(_LEASED_AT, {"aid": assignment_id})
    if leased is None or float(leased) < float(opened_at):
        return  # leased before the wave opened: a judgement of the decision's crowd, collected beyond it
    outcome = int(vote == int(side))
    if db.run(_WAVE_OUTCOME, {"c": c, "aid": assignment_id, "seq": int(n) + 1, "o": outcome, "now": now}) != 1:
        return
    n, wins = int(n) + 1, int(wins) + outcome
    db.run(_WAVE_COUNT, {"c": c, "n": n, "wins": wins})
    from humeval.stats.drift import confirmation_threshold

    threshold = int(confirmation_threshold(int(size), ctx.protocol.analysis.alpha)[0])
    flag = True if wins + (int(size) - n) <= threshold else (False if wins > threshold else None)
    if flag is None and n < int(size):
        return
    db.run(_WAVE_DONE, {"c": c, "now": now, "flag": int(bool(flag))})
    db.run(EVENT, {"now": now, "kind": "wave_done", "pid": None,
                   "data": json.dumps({"comparison": c, "n": n, "wins": wins, "size": int(size), "flagged": bool(flag)})})
    _close(conn, ctx)
    _withdraw(db, c, now)


def waves(conn: Connection) -> list[dict[str, Any]]:
    """Every confirmation wave's state (a read: the admin page, the platform's recruitment, the export)."""
    keys = ("comparison", "side", "size", "opens_at", "state", "opened_at", "closed_at", "n", "wins", "flagged")
    out = []
    for row in sql_of(conn).all(_WAVES, {}):
        w = dict(zip(keys, row, strict=True))
        w["flagged"] = None if w["flagged"] is None else bool(w["flagged"])
        out.append(w)
    return out


# -- in flight --------------------------------------------------------------------------------
_IN_FLIGHT_WHERE = (
    "FROM watched_tasks w JOIN assignments a ON a.task_id = w.task_id WHERE w.comparison = :c "
    "AND ((a.status = 'leased' AND a.expires_at >= :now) OR (a.status = 'done' AND NOT EXISTS "
    "(SELECT 1 FROM fed f WHERE f.comparison = :c AND f.assignment_id = a.assignment_id)))"
)
_IN_FLIGHT = "SELECT count(*) " + _IN_FLIGHT_WHERE
_IN_FLIGHT_TASKS = "SELECT count(DISTINCT a.task_id) " + _IN_FLIGHT_WHERE
_TASK_IN_FLIGHT = "SELECT 1 " + _IN_FLIGHT_WHERE + " AND a.task_id = :t LIMIT 1"


_IN_FLIGHT_BY_TASK = "SELECT a.task_id, count(*) " + _IN_FLIGHT_WHERE + " GROUP BY a.task_id"


def preferred_tasks(conn: Connection, ctx: StoreContext, now: float) -> list[list[str]] | None:
    """A goal over K systems with a pool strategy: its pair tasks grouped by pair, the most wanted pair first.

    The shares come from the current evidence (:func:`humeval.policies.pair_choice.pair_weights`: ``adaptive`` or
    ``uniform``); a pair's deficit is its share of all judgements (fed and in flight) minus
    what it has. A goal on pooled statements (``stopping.pooling``) uses the weights of the current epoch, set when
    it began, and the epoch's judgements (fed in it and in flight): the pairs of an epoch never depend on its votes'
    directions (:mod:`humeval.policies.pooled_goal`). So arriving participants are sent where the next judgement helps most
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

    from humeval.policies.pair_choice import pair_weights

    with ctx.rules_lock:
        rule = _rule(conn, ctx, _Row(comp.criterion, *found))
        if comp.pooling:  # the epoch's weights, set when it began, and the epoch's votes per pair (counts only)
            weights, counts = rule.pair_shares()
        else:
            contention = np.zeros(rule.goal.k, dtype=bool)
            contention[list(rule.state.contention)] = True
            weights = pair_weights(rule.goal.wins, rule.state.open_pairs, contention, rule.goal.goal, comp.pair_choice,
                                   rule.goal.top)
            counts = (rule.goal.wins + rule.goal.wins.T).astype(float)
        index = dict(rule.index)
    for task_id, n in db.all(_IN_FLIGHT_BY_TASK, {"c": comp.criterion, "now": now}):
        a, b = (index[x] for x in ctx.tasks[task_id].systems[:2])
        counts[a, b] += n
        counts[b, a] += n
    allowed = np.triu(weights > 0, 1)
    deficit = weights * (counts[allowed].sum() / 2 + 1) - counts / 2
    pairs = sorted(zip(*np.nonzero(allowed), strict=True), key=lambda ij: -deficit[ij])
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
        state = db.one(_STOPPING, {"c": c})  # (rule, delta, n, outcome)
        if state is None or state[3] != "continue":
            return False
        if ctx.strategy is not None and db.one(_TASK_IN_FLIGHT, {"c": c, "now": now, "t": task_id}) is not None:
            continue
        if in_flight(db, ctx, c, now) >= ctx.comparisons[c].in_flight_bound(int(state[2])):
            return False
    return True


# -- sessions: admitting participant lists (``list`` strategy) ------------------------------------
#: the watched lists in progress: held by a participant who is not settled yet (their outcomes are pending)
_HELD_WATCHED = (
    "SELECT l.list_id FROM lists l WHERE l.watched > 0 AND l.participant_id IS NOT NULL "
    "AND NOT EXISTS (SELECT 1 FROM settled x WHERE x.participant_id = l.participant_id)"
)
#: per comparison, the judgements fed or dropped of the watched lists in progress, by their holders
_FED_HELD = (
    "SELECT f.comparison, count(*) FROM fed f JOIN assignments a ON a.assignment_id = f.assignment_id "
    "JOIN lists l ON l.list_id = a.list_id WHERE l.watched > 0 AND l.participant_id = a.participant_id "
    "AND NOT EXISTS (SELECT 1 FROM settled x WHERE x.participant_id = l.participant_id) GROUP BY f.comparison"
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


def admissions(conn: Connection, ctx: StoreContext, *, lock: bool = True) -> list[Admission]:
    """Every watched comparison's admission now (``lock``: the ``stopping`` rows locked on PostgreSQL, as a
    claim does; a read for the admin page or a platform does not lock)."""
    from humeval.stopping import admission as adm

    if not ctx.list_watched:
        return []
    db = sql_of(conn)
    held = [r[0] for r in db.all(_HELD_WATCHED)]
    free = int(db.scalar(_FREE_WATCHED) or 0)
    # ``stopping.feed: judgement``: what a session in progress has fed (or dropped) is no longer pending
    done = dict(db.all(_FED_HELD)) if _per_judgement(ctx) else {}
    out = []
    for row in db.all(_STOPPING_ALL + (" FOR UPDATE" if lock else "")):
        c, n, outcome = row[0], int(row[3]), row[4]
        comp = ctx.comparisons.get(c)
        if comp is None:
            continue
        w = ctx.session_sizes.get(c, 0)
        pending = sum(ctx.list_watched.get(l_, {}).get(c, 0) for l_ in held) - int(done.get(c, 0))
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
        return asdict(self) | {"target": self.target}


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
    coming = [w for w in waves(conn) if w["state"] != "done"] if ctx.protocol.stopping and ctx.protocol.stopping.wave else []
    if admitted is None and coming:  # a confirmation wave: the lists its open outcomes need, not every one left
        session = max(1, max(ctx.session_sizes.values(), default=1))
        need = sum(-(-(int(w["size"]) - int(w["n"])) // session) for w in coming if w["state"] == "open")
        free_other = min(free_other, max(0, need - active))
    wanted = min(admitted or 0, free_watched) + free_other
    # sessions in progress may let the rule admit more; a wave waiting for its time will open places
    reopen = (admitted is not None and free_watched > 0) or bool(coming)
    return Recruitment(int(db.scalar(_STARTED) or 0), active, wanted, free_watched, free_other, admitted is None,
                       wanted == 0 and active == 0 and not reopen, found)


# -- settling participants ----------------------------------------------------------------------
_SETTLE = (
    "INSERT INTO settled (participant_id, at, excluded, excluded_tasks, reason) VALUES (:pid, :now, 0, '[]', '') "
    "ON CONFLICT (participant_id) DO NOTHING"
)
SETTLED = "SELECT 1 FROM settled WHERE participant_id = :pid"
#: the participant ``:pid`` is settled (a condition)
SETTLED_ANY = "EXISTS (" + SETTLED + ")"
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


#: the settled row's reason for a participant inactive for longer than a lease (before the exclusion rules' reasons)
ABANDONED = "abandoned: inactive for longer than a lease"


_REASON = "SELECT reason FROM settled WHERE participant_id = :pid"


def was_abandoned(conn: Connection, participant_id: str) -> bool:
    """Whether the participant was settled as abandoned (inactive for longer than a lease)."""
    reason = sql_of(conn).scalar(_REASON, {"pid": participant_id})
    return reason is not None and str(reason).startswith(ABANDONED)


_SETTLED_ROWS = "SELECT excluded, excluded_tasks, reason FROM settled"


def exclusion_overview(conn: Connection, ctx: StoreContext) -> dict[str, Any]:
    """What the preregistered exclusion rules did so far, as the settled participants record it: ``settled`` and
    ``abandoned`` participants, ``excluded`` (whole participants), ``judgements_excluded`` (judgement-scope
    exclusions), and ``by_rule``: per rule of the protocol, the settled participants it excluded or left a
    judgement of out (a participant may be counted under several rules). One pass over the settled rows (an
    admin read, not a participant's request)."""
    rows = sql_of(conn).all(_SETTLED_ROWS, {})
    names = [rule.rule for rule in ctx.protocol.exclusion]
    by_rule = dict.fromkeys(names, 0)
    abandoned = judged = excluded = 0
    for x, tasks, reason in rows:
        parts = str(reason or "").split("; ")
        abandoned += parts[0].startswith(ABANDONED)
        excluded += bool(x)
        judged += len(json.loads(tasks or "[]"))
        for name in names:
            by_rule[name] += any(part.startswith(f"{name}: ") for part in parts)
    return {"settled": len(rows), "abandoned": abandoned, "excluded": excluded, "judgements_excluded": judged,
            "by_rule": by_rule}


def settle_abandoned(conn: Connection, ctx: StoreContext, now: float) -> list[str]:
    """Settle the participants inactive for a lease who hold watched judgements (abandoned: judged by the exclusion
    rules on what they did and their kept outcomes fed, as for one who finished; the rest of their list goes to the
    next participant). Inactivity is time the service ran: a downtime is moved (:mod:`humeval.store.alive`)."""
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
    # the exclude stage's own rules (numpy): loaded at the first settlement. An abandoned participant is judged on
    # what they did, as one who finished: nothing of theirs is stored after this (:func:`is_settled`), so the exclude
    # stage sees the same judgements and keeps the same outcomes
    from humeval.judgements.exclusion import participant_exclusions

    excluded, keys, reason = participant_exclusions(ctx.protocol, ctx.tasks, latest)
    if abandoned:
        reason = "; ".join(r for r in (ABANDONED, reason) if r)
    db.run(_VERDICT, {"x": int(excluded), "tasks": json.dumps(sorted(keys)), "reason": reason, "pid": participant_id})
    if ctx.strategy is None:
        return _feed_list(conn, ctx, participant_id, latest, excluded, keys, now)
    return _flush(conn, ctx, now)


def feeds_at_submit(ctx: StoreContext, task: Task) -> bool:
    """Whether a first answer to the task is judged as it is stored (``list`` with ``stopping.feed: judgement``): an
    attention check (the qualification) or a watched pair task (fed at once once its participant qualified)."""
    return (ctx.strategy is None and bool(ctx.watched) and _per_judgement(ctx)
            and (task.kind == "attention" or (task.kind == "task" and task.task_id in ctx.watched)))


def _per_judgement(ctx: StoreContext) -> bool:
    stopping = ctx.protocol.stopping
    return stopping is not None and stopping.feed == "judgement"


def after_submit(conn: Connection, ctx: StoreContext, participant_id: str, now: float) -> list[str]:
    """``stopping.feed: judgement``, after a participant's first answer to an attention check or a watched pair task;
    return new decisions.

    Until the participant has answered ``design.qualification`` attention checks (the first places of every list),
    each with every attempt it allows when failed (``design.qualification_attempts``), nothing happens. From then on the exclusion rules run on their judgements as at settlement (the same function;
    ``validate`` admits only ``attention`` and judgement-scope ``min-time``, which nothing later can change): one who
    failed the qualification is settled at once (excluded, nothing fed, the rest of their list to the next
    participant); one who passed is qualified, and each watched judgement not fed yet is fed (or, excluded by a
    judgement-scope rule, recorded as dropped) in submission order, as settlement would."""
    db = sql_of(conn)
    if is_settled(db, participant_id):
        return []
    latest = latest_judgements(conn, participant_id)
    if sum(j["kind"] == "attention" for j in latest) < ctx.protocol.design.qualification or undecided(ctx, latest):
        return []  # not qualified yet (or an attempt is left at a failed check: humeval.store.qualify)
    from humeval.judgements.exclusion import participant_exclusions

    excluded, keys, _ = participant_exclusions(ctx.protocol, ctx.tasks, latest)
    if excluded:  # failed the qualification
        return settle(conn, ctx, participant_id, now)
    return _feed_list(conn, ctx, participant_id, latest, False, keys, now)


_FED_OF = ("SELECT f.comparison, f.assignment_id FROM fed f JOIN assignments a ON a.assignment_id = f.assignment_id "
           "WHERE a.participant_id = :pid")


def _feed_list(conn: Connection, ctx: StoreContext, participant_id: str, latest: list[dict[str, Any]], excluded: bool,
               keys: set[tuple[str, str]], now: float) -> list[str]:
    """``list``: feed (or drop) the participant's watched judgements in submission order, those not fed yet
    (``stopping.feed: judgement``: what was fed at submit is not fed again at settlement)."""
    fed = set()
    if _per_judgement(ctx):
        fed = {(c, aid) for c, aid in sql_of(conn).all(_FED_OF, {"pid": participant_id})}
    decided: list[str] = []
    for j in latest:
        for c in ctx.watched.get(j["task_id"], ()):
            if (c, j["assignment_id"]) not in fed:
                decided += _feed_judgement(conn, ctx, j, c, excluded or (j["task_id"], c) in keys, now)
    return decided


def _feed_judgement(conn: Connection, ctx: StoreContext, j: dict[str, Any], c: str, dropped: bool, now: float) -> list[str]:
    db = sql_of(conn)
    reference = ctx.comparisons[c].reference(ctx.tasks[j["task_id"]].systems)
    vote = None if dropped else TwoAFC.vote(j["values"].get(c, ""), j["display"], reference)
    if vote is None:  # excluded, or a tie: resolved without an outcome
        db.run(_FED, {"c": c, "aid": j["assignment_id"], "seq": None, "now": now})
        return []
    seq, decided = _feed(conn, ctx, c, vote, j["task_id"], now)
    db.run(_FED, {"c": c, "aid": j["assignment_id"], "seq": seq, "now": now})
    if seq is None and ctx.protocol.stopping is not None and ctx.protocol.stopping.wave is not None:
        _count_wave(conn, ctx, c, j["assignment_id"], vote, now)
    return [c] if decided else []


_PENDING = "SELECT id, comparison, task_id, outcome, assignments, participants FROM pending WHERE state = 'pending' ORDER BY id"
_VERDICT_OF = "SELECT excluded, excluded_tasks FROM settled WHERE participant_id = :pid"
_PENDING_STATE = "UPDATE pending SET state = :state WHERE id = :id"


def _flush(conn: Connection, ctx: StoreContext, now: float) -> list[str]:
    """Feed (or drop) every pending pool label whose voters are all settled, oldest first."""
    db = sql_of(conn)
    verdicts: dict[str, tuple[bool, set[tuple[str, str]]] | None] = {}
    decided: list[str] = []
    for pid_, c, task_id, outcome, aids_json, pids_json in db.all(_PENDING):
        pids = json.loads(pids_json)
        for p in pids:
            if p not in verdicts:
                r = db.one(_VERDICT_OF, {"pid": p})
                verdicts[p] = None if r is None else (bool(r[0]), {tuple(k) for k in json.loads(r[1])})
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


_GOAL_EVENTS = "SELECT at, kind, data FROM events WHERE kind LIKE :prefix ORDER BY id"  # '%' bound: psycopg


def live_leaderboards(conn: Connection, ctx: StoreContext) -> dict[str, dict[str, Any]]:
    """Per goal over K systems: the live leaderboard (rank sets, contention, wins) and the announcements so far.

    Rank sets and contention are the goal rule's (anytime-valid, whenever looked at):
    :meth:`humeval.stopping.live_goal.LiveGoal.leaderboard`, or with ``stopping.pooling`` the pooled statements'
    (:meth:`humeval.policies.pooled_goal.PooledLiveGoal.leaderboard`; ``basis`` ``direct`` once the fit check
    withdrew them).
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
            rows, answer, level, basis = rule.leaderboard(), rule.answer, rule.level, rule.basis()
        out[comp.criterion] = {
            "goal": comp.goal, "top": comp.top, "n": int(found[2]), "outcome": found[3],
            "answer": None if answer is None else [comp.members[i] for i in answer],
            "pair_delta": level, "rows": rows, "pooling": comp.pooling, "basis": basis,
            "epoch": comp.epoch if comp.pooling else None,
            "events": [{"at": at, "kind": kind[5:], **{k: v for k, v in d.items() if k not in ("comparison", "kind")}}
                       for at, kind, d in events if d.get("comparison") == comp.criterion],
        }
    return out
