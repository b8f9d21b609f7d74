"""The stopping rule's decisions, replayed from the collected judgements: one function for collation,
the analysis and the report.

For each comparison the protocol's rule watches (:func:`humeval.protocol.comparisons.watched_comparisons`,
the resolver the live store uses too), the rule is replayed on the valid judgements
(after exclusion) of that comparison's ``2afc`` criterion, in the order the live rule
consumed them: rows with ``stop_seq`` ascending (votes of a pool task share one
``stop_seq`` and are aggregated into its label by the protocol's labelling strategy, as
the store does), then rows without it (dry runs, imports) by ``submitted_at``. Since the
store feeds the rule only outcomes of participants the exclude stage keeps, the replay
reaches the live decision at the live ``n``; the export's largest ``stop_seq`` is reported
beside it (``live_n``) and any disagreement is flagged, never hidden.

Each decision also says what the fixed design would have collected for the comparison
(its pair tasks times ``design.judgements_per_item``) and how many judgements stopping
saved against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from humeval.analysis.validity import invalid_reasons
from humeval.design.tasks import Task
from humeval.judgements import winners
from humeval.protocol.comparisons import Comparison, watched_comparisons
from humeval.protocol.models import Protocol

__all__ = ["DECIDED", "fixed_design", "fixed_places", "replay_decisions"]

#: outcomes after which collection of a comparison stops (the rule decided, a goal over K systems
#: was reached, or the horizon was reached)
DECIDED = ("A", "B", "decided", "horizon")


def _ordered(rows: pd.DataFrame) -> pd.DataFrame:
    """The live rule's order: ``stop_seq`` ascending, then the rest by submission time."""
    seq = rows["stop_seq"] if "stop_seq" in rows else pd.Series(pd.NA, index=rows.index)
    seq = pd.to_numeric(seq, errors="coerce").astype(float)
    return rows.assign(_fed=seq.notna(), _seq=seq.fillna(np.inf)).sort_values(
        ["_fed", "_seq", "submitted_at"], ascending=[False, True, True], kind="stable")


def _outcomes(rows: pd.DataFrame, comparison: Comparison, protocol: Protocol) -> tuple[list[int], pd.Series]:
    """1 (system A won) / 0 (system B won) per outcome, in the live rule's order (ties are no outcome), and
    the outcome each decisive row went into (0-based, indexed by the row's label: a pool task's votes share one)."""
    ordered = _ordered(rows)
    won = winners(ordered)
    vote = np.where(won == comparison.system_a, 1, np.where(won == comparison.system_b, 0, -1))
    ordered = ordered.assign(_vote=vote)
    if protocol.assignment.strategy == "list":
        kept = ordered[ordered["_vote"] >= 0]
        return [int(v) for v in kept["_vote"]], pd.Series(np.arange(len(kept)), index=kept.index)
    from humeval.store.context import (
        strategy_of,  # the store's strategy, so labels aggregate as it does
    )

    strategy = strategy_of(protocol)
    assert strategy is not None  # not "list" (returned above): a pool strategy labels the votes
    labels = []
    fed = ordered[ordered["_fed"] & (ordered["_vote"] >= 0)]
    for _, group in fed.groupby("_seq", sort=True):
        labels.append(int(strategy.label([int(v) for v in group["_vote"]])))
    rest = ordered[~ordered["_fed"] & (ordered["_vote"] >= 0)]
    position = pd.concat([fed["_seq"].rank(method="dense").astype(np.int64) - 1,
                          pd.Series(len(labels) + np.arange(len(rest)), index=rest.index)])
    return labels + [int(v) for v in rest["_vote"]], position


def _clip(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else float(min(1.0, max(0.0, x)))


def replay_decisions(valid: pd.DataFrame, protocol: Protocol, systems: Sequence[str],
                     tasks: Sequence[Task] | None = None, paid: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """Replay the protocol's stopping rule on ``valid`` judgements (after exclusion), one record per comparison.

    A record: ``criterion``, ``a``/``b`` (the systems; the rule's outcome 1 is a win of
    ``a``), ``rule``, ``delta``, ``anytime_valid``, ``horizon``, ``outcome`` (``A``, ``B``,
    ``horizon`` or ``continue``), ``decision`` (the preferred system, ``horizon`` or
    ``continue``), ``n`` (outcomes the rule used), ``reason``, ``path`` (per n: the win
    rate of ``a`` and the rule's bounds on that scale, clipped to [0, 1];
    ``reachable_a``/``reachable_b`` say whether the unclipped bound could be reached),
    ``live_n`` (the export's largest ``stop_seq``; None without one), ``agrees_with_live``,
    ``collected`` (valid decisive and tied judgements of the comparison), ``after_decision``
    ``population`` (whose preference the decision is about: the participants whose judgements it used, their
    number and the UTC times of the first and last; :func:`humeval.analysis.drift.population`), ``drift``
    (the preregistered drift check, None under ``stopping.drift_check: none``;
    :func:`humeval.analysis.drift.drift_check`) and, with ``tasks``, ``fixed_design`` and ``saved`` (judgements), ``fixed_places`` (the
    design's lists of the comparison) and, with ``paid`` (every judgement, the excluded
    included), ``places``: the participants who judged the comparison's tasks (sessions paid).
    """
    from humeval.stopping import ANYTIME_VALID  # scipy: only when a rule is replayed

    records = []
    for comp in watched_comparisons(protocol, list(systems)):
        rows = _of(valid, comp)
        rows = rows[invalid_reasons(rows, protocol) == ""]
        if comp.multi:
            goal = _replay_goal(rows, comp, protocol)
            records.append(goal | _costs(comp, protocol, tasks, paid, len(rows), goal["outcome"]))
            continue
        outcomes, position = _outcomes(rows, comp, protocol)
        rule = comp.build_rule()
        path, d = [], None
        for o in outcomes:
            d = rule.update(o)
            path.append({"n": d.n, "estimate": float(d.estimate),
                         "threshold_a": _clip(d.threshold_a), "threshold_b": _clip(d.threshold_b),
                         "reachable_a": bool(d.threshold_a <= 1), "reachable_b": bool(d.threshold_b >= 0)})
            if d.decided or (comp.horizon is not None and d.n >= comp.horizon):
                break
        outcome = "continue" if d is None else d.outcome
        if outcome == "continue" and d is not None and comp.horizon is not None and d.n >= comp.horizon:
            outcome = "horizon"
        n = 0 if d is None else int(d.n)
        seq = pd.to_numeric(rows["stop_seq"], errors="coerce") if "stop_seq" in rows else pd.Series(dtype=float)
        live_n = int(seq.max()) if seq.notna().any() else None
        record: dict[str, Any] = {
            "criterion": comp.criterion, "a": comp.system_a, "b": comp.system_b, "rule": comp.rule,
            "delta": comp.delta, "anytime_valid": comp.rule in ANYTIME_VALID, "horizon": comp.horizon,
            "outcome": outcome, "decision": {"A": comp.system_a, "B": comp.system_b}.get(outcome, outcome),
            "n": n, "reason": "no decisive judgement yet" if d is None else d.reason, "path": path,
            "live_n": live_n, "agrees_with_live": agrees_with_live(live_n, n, outcome in DECIDED),
            "collected": len(rows), "after_decision": max(0, len(outcomes) - n) if outcome in DECIDED else 0,
        }
        record |= _whose(rows, outcomes, position, n, rule, protocol)
        if record["drift"] is not None and protocol.stopping is not None and protocol.stopping.wave is not None:
            record["drift"] = _with_wave(record["drift"], rows, record, protocol)
        records.append(record | _costs(comp, protocol, tasks, paid, len(rows), outcome))
    return records


def _whose(rows: pd.DataFrame, outcomes: list[int], position: pd.Series, n: int, rule: Any,
           protocol: Protocol) -> dict[str, Any]:
    """Whose preference the decision is about (``population``) and the preregistered drift check (``drift``)."""
    from humeval.analysis.drift import drift_check, population, utc

    used = position[position < n]
    times = utc(rows.loc[used.index, "submitted_at"]) if "submitted_at" in rows else pd.Series(pd.NaT, index=used.index)
    last = times.groupby(used.to_numpy()).max().reindex(range(n))  # an outcome's time: its last judgement's
    boundary = rule.boundary(n) if n and hasattr(rule, "boundary") else None
    assert protocol.stopping is not None  # a watched comparison comes from the stopping section
    check = "halves" if protocol.stopping.drift_check == "wave" else protocol.stopping.drift_check
    return {"population": population(rows.loc[used.index]),
            "drift": drift_check(outcomes, n, boundary, check=check, alpha=protocol.analysis.alpha, times=list(last))}


def _with_wave(drift: dict[str, Any], rows: pd.DataFrame, record: dict[str, Any], protocol: Protocol) -> dict[str, Any]:
    """``stopping.drift_check: wave``: the halves beside the confirmation wave, whose flag is the check's."""
    from humeval.analysis.drift import wave_check

    assert protocol.stopping is not None and protocol.stopping.wave is not None
    out = drift | {"check": "wave"}
    if record["outcome"] not in ("A", "B"):
        return out | {"flagged": False, "undefined": out["undefined"] or "no decision: no confirmation wave"}
    decided, other = (record["a"], record["b"]) if record["outcome"] == "A" else (record["b"], record["a"])
    wave = wave_check(rows, decided, other, protocol.stopping.wave.size(protocol.analysis.alpha),
                      protocol.analysis.alpha)
    return out | {"wave": wave, "flagged": wave["flagged"]}


def _costs(comp: Comparison, protocol: Protocol, tasks: Sequence[Task] | None, paid: pd.DataFrame | None,
           collected: int, outcome: str) -> dict[str, Any]:
    """What the decision cost against the fixed design: judgements, and places (sessions paid)."""
    out: dict[str, Any] = {}
    if tasks is not None:
        fixed = fixed_design(tasks, comp, protocol)
        out |= {"fixed_design": fixed, "saved": fixed - collected if outcome in DECIDED else None,
                "fixed_places": fixed_places(tasks, comp, protocol)}
    if paid is not None and not paid.empty:
        out["places"] = int(_of(paid, comp)["participant_id"].nunique())
    return out


def agrees_with_live(live_n: int | None, n: int, decided: bool) -> bool | None:
    """Whether the replay reproduces the live rule (None without a live record): a decided replay where the live
    rule stopped feeding (``live_n == n``); an undecided one that used at least the outcomes fed live
    (``live_n <= n``: the live rule's prefix of the same sequence cannot have decided either; a judgement stored but
    not fed, counted by the replay, is no disagreement)."""
    if live_n is None:
        return None
    return live_n == n if decided else live_n <= n


def _of(frame: pd.DataFrame, comp: Comparison) -> pd.DataFrame:
    """The rows of ``frame`` that judge ``comp``: its criterion, on real tasks, between its systems."""
    rows = frame[(frame["criterion"] == comp.criterion) & (frame["kind"] == "task")]
    # a boolean array, not a list: an empty list would select no *columns* of an empty frame
    keep = np.fromiter((comp.involves(a, b) for a, b in zip(rows["system"], rows["system_b"], strict=True)),
                       dtype=bool, count=len(rows))
    return rows[keep]


def fixed_places(tasks: Sequence[Task], comparison: Comparison, protocol: Protocol) -> int:
    """The places (lists) the fixed design pays for ``comparison``'s pair tasks, dealt into lists of their own
    (``ceil(pair tasks / items_per_participant)`` per round, ``judgements_per_item`` rounds)."""
    pair = fixed_design(tasks, comparison, protocol) // max(1, protocol.design.judgements_per_item)
    per = max(1, min(protocol.design.items_per_participant, pair))
    return -(-pair // per) * protocol.design.judgements_per_item if pair else 0


def fixed_design(tasks: Sequence[Task], comparison: Comparison, protocol: Protocol) -> int:
    """Judgements the design collects for ``comparison`` without stopping: its pair tasks x judgements per item."""
    pair = sum(1 for t in tasks if t.kind == "task" and comparison.criterion in t.criteria
               and len(t.systems) == 2 and comparison.involves(*t.systems))
    return pair * protocol.design.judgements_per_item


def _goal_judgements(rows: pd.DataFrame, protocol: Protocol) -> list[tuple[str, str, str]]:
    """(first, second, winner) per outcome of a goal over K systems, in the live rule's order.

    Pool strategies: the votes of one task (one ``stop_seq``) make one label; the label's
    winner does not depend on which system the votes are counted for (every strategy is
    symmetric), so the first row's order serves.
    """
    ordered = _ordered(rows)
    won = winners(ordered).to_numpy()
    first, second = ordered["system"].to_numpy(), ordered["system_b"].to_numpy()
    decisive = (won == first) | (won == second)
    if protocol.assignment.strategy == "list":
        return [(str(a), str(b), str(w)) for a, b, w, ok in zip(first, second, won, decisive, strict=True) if ok]
    from humeval.store.context import strategy_of

    strategy = strategy_of(protocol)
    assert strategy is not None  # not "list" (returned above): a pool strategy labels the votes
    fed = ordered["_fed"].to_numpy()
    seq = ordered["_seq"].to_numpy()
    out = []
    for s_ in np.unique(seq[fed]):
        idx = np.flatnonzero(fed & (seq == s_) & decisive)
        if idx.size:
            a, b = str(first[idx[0]]), str(second[idx[0]])
            votes = [int(won[i] == a) for i in idx]
            out.append((a, b, a if strategy.label(votes) == 1 else b))
    out += [(str(a), str(b), str(w)) for a, b, w, ok, f in zip(first, second, won, decisive, fed, strict=True)
            if ok and not f]
    return out


def _replay_goal(rows: pd.DataFrame, comp: Comparison, protocol: Protocol) -> dict[str, Any]:
    """The goal over K systems (:class:`humeval.stopping.goals.GoalRule`) replayed on one criterion's judgements.

    Besides the decision: ``rank_sets``, ``contention``, ``wins`` (i over j), ``timeline`` (the
    rule's announcements with the n at which each happened), ``sequence`` (the judgements
    fed, as [first, second, winner] indices into ``systems``), from which intervals can be
    intersected over time, ``reachable`` (False once the pairs resolved directly admit no
    answer) and ``cycles``/``intransitive`` (:mod:`humeval.stopping.cycles`: 3-cycles in the
    win shares, and the report's sentence about them, '' when none).
    """
    from humeval.stopping.cycles import cycle_note, preference_cycles
    from humeval.stopping.goals import GoalRule, named_events

    if comp.pooling:
        return _replay_pooled_goal(rows, comp, protocol)
    index = {name: i for i, name in enumerate(comp.members)}
    rule = GoalRule(len(comp.members), comp.goal, comp.delta, comp.top, comp.prior_strength)
    d, timeline, sequence = rule.current(), [], []
    judged = _goal_judgements(rows, protocol)
    for a, b, w in judged:
        sequence.append([index[a], index[b], index[w]])
        d = rule.update(index[a], index[b], index[w])
        timeline += [dict(e, n=d.comparisons) for e in named_events(d.events, comp.members)]
        if d.decided or (comp.horizon is not None and d.comparisons >= comp.horizon):
            break
    n = d.comparisons
    cycles = preference_cycles(rule.wins, rule.resolved)
    outcome = "decided" if d.decided else ("horizon" if comp.horizon is not None and n >= comp.horizon else "continue")
    answer = None if d.answer is None else [comp.members[i] for i in d.answer]
    seq = pd.to_numeric(rows["stop_seq"], errors="coerce") if "stop_seq" in rows else pd.Series(dtype=float)
    live_n = int(seq.max()) if seq.notna().any() else None
    record: dict[str, Any] = {
        "criterion": comp.criterion, "goal": comp.goal, "top": comp.top, "systems": list(comp.members),
        "a": comp.system_a, "b": comp.system_b, "rule": comp.rule, "delta": comp.delta,
        "pair_delta": rule.pair_delta, "prior_strength": comp.prior_strength, "anytime_valid": True, "horizon": comp.horizon,
        "outcome": outcome, "decision": answer if answer is not None else outcome, "n": n,
        "reason": d.reason if d.answer is None else d.reason.replace(str(list(d.answer)), str(answer)),
        "contention": [comp.members[i] for i in d.contention],
        "rank_sets": {name: [int(d.rank_low[i]), int(d.rank_high[i])] for i, name in enumerate(comp.members)},
        "wins": {a: {b: int(rule.wins[i, j]) for j, b in enumerate(comp.members) if i != j}
                 for i, a in enumerate(comp.members)},
        "timeline": timeline, "sequence": sequence, "path": [], "reachable": d.reachable,
        "cycles": [{"systems": [comp.members[i] for i in c.systems], "shares": list(c.shares),
                    "resolved": list(c.resolved), "strength": c.strength} for c in cycles],
        "intransitive": cycle_note(cycles, comp.members),
        "live_n": live_n, "agrees_with_live": agrees_with_live(live_n, n, outcome in DECIDED),
        "collected": len(rows), "after_decision": max(0, len(judged) - n) if outcome in DECIDED else 0,
    }
    return record


def _replay_pooled_goal(rows: pd.DataFrame, comp: Comparison, protocol: Protocol) -> dict[str, Any]:
    """The goal on pooled statements (``stopping.pooling``) replayed on one criterion's judgements: the live class
    (:class:`humeval.policies.pooled_goal.PooledLiveGoal`) fed the same sequence, so it cuts the same epochs, pairs
    the virtual duels with the same seed and decides at the same n. The record has the keys of the direct goal's
    (``contention``: systems the statements read leave in contention) and ``pooling``, ``basis`` (``pooled``, or
    ``direct`` once the fit check withdrew the pooled statements), ``epoch`` and ``misfit_at`` (-1: never)."""
    from humeval.policies.pooled_goal import PooledLiveGoal
    from humeval.stopping.cycles import cycle_note, preference_cycles

    live = PooledLiveGoal(comp)
    d, timeline, sequence = live.decision, [], []
    judged = _goal_judgements(rows, protocol)
    for a, b, w in judged:
        i, j, k = live.index[a], live.index[b], live.index[w]
        sequence.append([i, j, k])
        d = live.feed((a, b), int(k == i))
        timeline += [dict(e, n=d.n) for e in d.named_events()]
        if d.decided or (comp.horizon is not None and d.n >= comp.horizon):
            break
    n, st, wins = d.n, live.goal.state, live.goal.wins[0]
    cont = live.goal.contention()[0]
    cycles = preference_cycles(wins, st.resolved[0])
    outcome = "decided" if d.decided else ("horizon" if comp.horizon is not None and n >= comp.horizon else "continue")
    seq = pd.to_numeric(rows["stop_seq"], errors="coerce") if "stop_seq" in rows else pd.Series(dtype=float)
    live_n = int(seq.max()) if seq.notna().any() else None
    return {
        "criterion": comp.criterion, "goal": comp.goal, "top": comp.top, "systems": list(comp.members),
        "a": comp.system_a, "b": comp.system_b, "rule": comp.rule, "delta": comp.delta,
        "pair_delta": live.level, "prior_strength": comp.prior_strength, "anytime_valid": True,
        "horizon": comp.horizon, "outcome": outcome, "decision": d.answer if d.answer is not None else outcome, "n": n,
        "reason": d.reason, "contention": [comp.members[i] for i in np.flatnonzero(cont)],
        "rank_sets": {name: [int(st.rank_low[0, i]), int(st.rank_high[0, i])] for i, name in enumerate(comp.members)},
        "wins": {a: {b: int(wins[i, j]) for j, b in enumerate(comp.members) if i != j}
                 for i, a in enumerate(comp.members)},
        "timeline": timeline, "sequence": sequence, "path": [], "reachable": True,
        "cycles": [{"systems": [comp.members[i] for i in c.systems], "shares": list(c.shares),
                    "resolved": list(c.resolved), "strength": c.strength} for c in cycles],
        "intransitive": cycle_note(cycles, comp.members),
        "live_n": live_n, "agrees_with_live": agrees_with_live(live_n, n, outcome in DECIDED),
        "collected": len(rows), "after_decision": max(0, len(judged) - n) if outcome in DECIDED else 0,
        "pooling": True, "basis": live.basis(), "epoch": comp.epoch, "misfit_at": int(st.misfit_at[0]),
    }
