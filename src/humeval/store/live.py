"""Live dynamic stopping: aggregated pairwise outcomes feed the protocol's stopping rule.

After every judgement of a pair task between the two compared systems, the labelling
strategy (:mod:`humeval.policies`) says whether the task needs more votes (its cap is
raised, e.g. the third worker of ``max3``) or gives its label; with precomputed lists
every judgement is an outcome. Each outcome (1: the judgement favoured ``system_a``)
updates the rule (:func:`humeval.stopping.get_rule`) under the comparison's row lock, is
appended to ``outcomes`` with the rule's bound, and once the rule decides (or the
horizon ``max_judgements`` is reached) the decision is stored and every pair task of the
comparison is closed: no further pair items are assigned.

A rule object is kept per process and brought up to date from ``outcomes`` when other
processes fed it meanwhile, so every process sees the same sequence of outcomes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, and_, insert, select, update

from humeval.errors import StoreError
from humeval.protocol.models import TwoAFC
from humeval.store import schema as s
from humeval.store.context import StoreContext
from humeval.store.records import TaskInfo
from humeval.store.sql import sql_of

__all__ = ["after_judgement", "vote_of"]

_CLOSE_CHUNK = 500


def vote_of(choice: str, display: Sequence[str], system_a: str) -> int | None:
    """1 if the choice favours ``system_a``, 0 if the other system, None for tie/both-*."""
    if choice not in ("A", "B"):
        return None
    return int(TwoAFC.winner(choice, display[0], display[1]) == system_a)


def after_judgement(
    conn: Connection, ctx: StoreContext, task: TaskInfo, display: Sequence[str], values: dict[str, Any], now: float
) -> list[str]:
    """Update strategies and stopping rules after a first judgement; return newly decided comparisons."""
    decided: list[str] = []
    protocol = ctx.protocol
    pair_criteria = [c for c in task.criteria if protocol.criterion(c).type == "2afc"]
    live = [c for c in pair_criteria if c in ctx.comparisons and set(task.systems) == {ctx.comparisons[c].system_a, ctx.comparisons[c].system_b}]
    if ctx.strategy is None:
        for c in live:
            vote = vote_of(values[c], display, ctx.comparisons[c].system_a)
            if vote is not None and _feed(conn, ctx, c, vote, task.task_id, now):
                decided.append(c)
        return decided
    if not pair_criteria:
        return decided
    # votes are relative to the task's first system; a label is flipped for a comparison whose A differs
    votes, used = _votes(conn, task, pair_criteria)
    needed = {c: ctx.strategy.workers_needed(votes[c]) for c in pair_criteria}
    more = max(needed.values())
    limit = 2 * ctx.strategy.max_workers
    if more > 0 and used < limit:
        new_cap = min(used + more, limit)
        t = s.tasks.c
        conn.execute(update(s.tasks).where(and_(t.task_id == task.task_id, t.cap < new_cap)).values(cap=new_cap, open=1))
    for c in live:
        if needed[c] == 0 and votes[c]:
            label = ctx.strategy.label(votes[c])
            if task.systems[0] != ctx.comparisons[c].system_a:
                label = 1 - label
            if _feed(conn, ctx, c, label, task.task_id, now):
                decided.append(c)
    return decided


def _votes(conn: Connection, task: TaskInfo, criteria: list[str]) -> tuple[dict[str, list[int]], int]:
    j = s.judgements.c
    rows = conn.execute(
        select(j.display, j["values"]).where(and_(j.task_id == task.task_id, j.revision == 0)).order_by(j.id)
    ).all()
    votes: dict[str, list[int]] = {c: [] for c in criteria}
    for r in rows:
        display, values = json.loads(r.display), json.loads(r[1])
        for c in criteria:
            v = vote_of(values.get(c, ""), display, task.systems[0])
            if v is not None:
                votes[c].append(v)
    return votes, len(rows)


class _Row:
    """The columns of a ``stopping`` row that feeding an outcome needs."""

    __slots__ = ("comparison", "delta", "n", "outcome", "rule")

    def __init__(self, comparison: str, rule: str, delta: float, n: int, outcome: str) -> None:
        self.comparison, self.rule, self.delta, self.n, self.outcome = comparison, rule, delta, n, outcome


def _rule(conn: Connection, ctx: StoreContext, row: Any) -> Any:
    """The process's rule object for the comparison, fed every stored outcome in order."""
    cached = ctx.rules.get(row.comparison)
    if cached is None or cached[1] > row.n:
        stop = ctx.protocol.stopping
        horizon = stop.max_judgements if stop is not None else None
        from humeval.stopping import get_rule  # scipy: loaded on the first outcome, not at start

        rule = get_rule(row.rule, row.delta, horizon=horizon)
        cached = (rule, 0)
    rule, fed = cached
    if fed < row.n:
        o = s.outcomes.c
        for outcome in conn.execute(
            select(o.outcome).where(and_(o.comparison == row.comparison, o.n > fed)).order_by(o.n)
        ).scalars():
            rule.update(int(outcome))
    ctx.rules[row.comparison] = (rule, row.n)
    return rule


_STOPPING = "SELECT rule, delta, n, outcome FROM stopping WHERE comparison = :c FOR UPDATE"
_COUNTED = "SELECT 1 FROM outcomes WHERE comparison = :c AND task_id = :t LIMIT 1"
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


def _feed(conn: Connection, ctx: StoreContext, comparison: str, vote: int, task_id: str, now: float) -> bool:
    db = sql_of(conn)
    found = db.one(_STOPPING, {"c": comparison})
    if found is None:
        raise StoreError(f"no stopping state for comparison {comparison!r}")
    row = _Row(comparison, *found)
    if row.outcome != "continue":
        return False
    if ctx.strategy is not None and db.one(_COUNTED, {"c": comparison, "t": task_id}) is not None:
        return False  # this task's label was already counted
    rule = _rule(conn, ctx, row)
    d = rule.update(vote)
    ctx.rules[comparison] = (rule, d.n)
    bounds = {"n": int(d.n), "successes": int(d.successes), "estimate": _float(d.estimate),
              "threshold_a": _float(d.threshold_a), "threshold_b": _float(d.threshold_b), "c": comparison}
    db.run(_OUTCOME, {**bounds, "t": task_id, "outcome": vote, "now": now})
    stop = ctx.protocol.stopping
    horizon = stop is not None and stop.max_judgements is not None and d.n >= stop.max_judgements
    outcome = d.outcome if d.decided else ("horizon" if horizon else "continue")
    reason = d.reason if d.decided or not horizon else f"{d.reason}; horizon of {d.n} outcomes reached without a decision"
    db.run(_STATE, {**bounds, "outcome": outcome, "reason": reason, "decided_at": now if outcome != "continue" else None})
    if outcome == "continue":
        return False
    conn.execute(
        insert(s.events).values(
            at=now, kind="decision", participant_id=None,
            data=json.dumps({"comparison": comparison, "outcome": outcome, "n": d.n, "successes": d.successes,
                             "threshold_a": d.threshold_a, "threshold_b": d.threshold_b, "rule": row.rule,
                             "delta": row.delta, "reason": reason}),
        )
    )
    _close(conn, ctx)
    return True


def _close(conn: Connection, ctx: StoreContext) -> None:
    """Close every pair task whose compared criteria are all decided."""
    st = s.stopping.c
    done = set(conn.execute(select(st.comparison).where(st.outcome != "continue")).scalars())
    ids = [
        t.task_id
        for t in ctx.tasks.values()
        if t.family == "pair" and t.kind != "attention"
        and any(c in ctx.comparisons for c in t.criteria)
        and all(c in done for c in t.criteria if c in ctx.comparisons)
    ]
    t_ = s.tasks.c
    for i in range(0, len(ids), _CLOSE_CHUNK):
        conn.execute(update(s.tasks).where(t_.task_id.in_(ids[i : i + _CLOSE_CHUNK])).values(closed=1))
