"""Read-only queries for the admin views and exports (run on the reader pool)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, case, func, select

from humeval.store import schema as s
from humeval.store.context import StoreContext

__all__ = ["all_judgements", "judgement_rows", "long_rows", "overview", "participant_rows", "stopping_states"]


def _iso(t: float | None) -> str:
    return "" if t is None else datetime.fromtimestamp(t, UTC).isoformat()


def all_judgements(conn: Connection) -> list[dict[str, Any]]:
    """Every stored judgement (every revision), oldest first, with its display order."""
    j = s.judgements.c
    return [
        {
            "judgement_id": r.id,
            "idempotency_key": r.idempotency_key,
            "participant_id": r.participant_id,
            "assignment_id": r.assignment_id,
            "task_id": r.task_id,
            "item_id": r.item_id,
            "list_id": r.list_id,
            "kind": r.kind,
            "values": json.loads(r.values),
            "display": json.loads(r.display),
            "seconds": r.seconds,
            "revision": r.revision,
            "submitted_at": _iso(r.submitted_at),
            "comment": r.comment or "",
        }
        for r in conn.execute(select(s.judgements).order_by(j.id))
    ]


def judgement_rows(conn: Connection, ctx: StoreContext) -> list[dict[str, Any]]:
    """The canonical long table (:data:`humeval.judgements.JUDGEMENT_COLUMNS`), latest revision only.

    ``stop_seq`` is the judgement's place in the live stopping rule's outcome sequence of its
    comparison (the ``fed`` table); NaN for a judgement the rule did not consume.
    """
    latest: dict[str, dict[str, Any]] = {}
    for j in all_judgements(conn):
        latest[j["assignment_id"]] = j
    f = s.fed.c
    seqs = {(r.comparison, r.assignment_id): r.seq for r in conn.execute(select(f.comparison, f.assignment_id, f.seq).where(f.seq.is_not(None)))}
    return long_rows(ctx, sorted(latest.values(), key=lambda x: x["judgement_id"]), seqs)


def long_rows(
    ctx: StoreContext, judgements: list[dict[str, Any]], seqs: dict[tuple[str, str], int] | None = None
) -> list[dict[str, Any]]:
    """Judgements (as :func:`all_judgements` gives them) as rows of the long table, in the order given."""
    seqs = seqs or {}
    rows: list[dict[str, Any]] = []
    for j in judgements:
        display = j["display"]
        base = {
            "participant_id": j["participant_id"], "list_id": j["list_id"], "task_id": j["task_id"], "kind": j["kind"],
            "item_id": j["item_id"], "seconds": j["seconds"], "submitted_at": j["submitted_at"], "stop_seq": math.nan,
            "comment": j.get("comment", ""),
        }
        for name, value in j["values"].items():
            ctype = ctx.protocol.criterion(name).type
            if ctype == "2afc":
                seq = seqs.get((name, j["assignment_id"]))
                rows.append(base | {"criterion": name, "system": display[0], "system_b": display[1], "position": 0,
                                    "value": math.nan, "choice": value,
                                    "stop_seq": math.nan if seq is None else float(seq)})
            elif ctype == "rankme":
                for pos, (system, score) in enumerate(zip(display, value, strict=True)):
                    rows.append(base | {"criterion": name, "system": system, "system_b": "", "position": pos,
                                        "value": float(score), "choice": ""})
            elif ctype == "esa":
                rows.append(base | {"criterion": name, "system": display[0], "system_b": "", "position": 0,
                                    "value": float(value["score"]), "choice": "",
                                    "spans": json.dumps(value["spans"], separators=(",", ":"))})
            else:
                rows.append(base | {"criterion": name, "system": display[0], "system_b": "", "position": 0,
                                    "value": float(value), "choice": ""})
    return rows


def participant_rows(conn: Connection, *, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
    """Participants in the order they entered (all, or ``limit`` from ``offset``), with their tasks done."""
    p, a = s.participants.c, s.assignments.c
    page = select(s.participants).order_by(p.created_at, p.participant_id)
    if limit is not None:
        page = page.limit(limit).offset(offset)
    rows = conn.execute(page).all()
    done = dict(conn.execute(
        select(a.participant_id, func.count()).where(a.status == "done", a.participant_id.in_([r.participant_id for r in rows]))
        .group_by(a.participant_id)).all()) if limit is not None else dict(
        conn.execute(select(a.participant_id, func.count()).where(a.status == "done").group_by(a.participant_id)).all())
    return [
        {"participant_id": r.participant_id, "platform": r.platform, "list_id": r.list_id or "", "done": done.get(r.participant_id, 0),
         "entered": _iso(r.created_at), "last_seen": _iso(r.last_seen), "consented": r.consented_at is not None,
         "completed": r.completed_at is not None}
        for r in rows
    ]


def stopping_states(conn: Connection) -> list[dict[str, Any]]:
    """The live decision per comparison, with the bound after every outcome (for the plot)."""
    o = s.outcomes.c
    states = []
    for r in conn.execute(select(s.stopping).order_by(s.stopping.c.comparison)):
        curve = [
            {"n": c.n, "estimate": c.estimate, "threshold_a": c.threshold_a, "threshold_b": c.threshold_b}
            for c in conn.execute(select(o.n, o.estimate, o.threshold_a, o.threshold_b).where(o.comparison == r.comparison).order_by(o.n))
        ]
        states.append({
            "comparison": r.comparison, "rule": r.rule, "delta": r.delta, "system_a": r.system_a, "system_b": r.system_b,
            "n": r.n, "successes": r.successes, "outcome": r.outcome, "estimate": r.estimate,
            "threshold_a": r.threshold_a, "threshold_b": r.threshold_b, "reason": r.reason,
            "decided_at": _iso(r.decided_at), "curve": curve,
        })
    return states


def overview(conn: Connection, ctx: StoreContext, *, items_limit: int | None = None, items_offset: int = 0) -> dict[str, Any]:
    """Progress counts per criterion and per system, per item, and totals.

    Aggregated in SQL (one pass over the tasks grouped by their criteria and systems, a few
    groups): a study of 100,000 items answers in well under a second. ``items``: every item,
    or the page of ``items_limit`` items from ``items_offset`` (in item order);
    ``item_totals``: how many items there are, how many are complete and how many started.
    """
    del ctx  # the tasks table holds what is counted
    t = s.tasks.c
    per_criterion: dict[str, dict[str, int]] = {}
    per_system: dict[str, dict[str, int]] = {}
    groups = select(t.criteria, t.systems, func.sum(t.cap), func.sum(t.done), func.sum(t.closed)).where(
        t.kind == "task").group_by(t.criteria, t.systems)
    for criteria, systems, wanted, done, closed in conn.execute(groups):
        for c in json.loads(criteria):
            d = per_criterion.setdefault(c, {"wanted": 0, "done": 0, "closed": 0})
            d["wanted"] += int(wanted or 0)
            d["done"] += int(done or 0)
            d["closed"] += int(closed or 0)
        for system in json.loads(systems):
            d = per_system.setdefault(system, {"wanted": 0, "done": 0})
            d["wanted"] += int(wanted or 0)
            d["done"] += int(done or 0)
    by_item = select(t.item_id, func.sum(t.cap).label("wanted"), func.sum(t.done).label("done")).where(
        t.kind == "task").group_by(t.item_id)
    page = by_item.order_by(t.item_id)
    if items_limit is not None:
        page = page.limit(items_limit).offset(items_offset)
    items = {r.item_id: {"wanted": int(r.wanted or 0), "done": int(r.done or 0)} for r in conn.execute(page)}
    sub = by_item.subquery()
    total, complete, started = conn.execute(select(
        func.count(), func.sum(case((sub.c.done >= sub.c.wanted, 1), else_=0)), func.sum(case((sub.c.done > 0, 1), else_=0)),
    ).select_from(sub)).one()
    counts = {
        "participants": conn.execute(select(func.count()).select_from(s.participants)).scalar_one(),
        "judgements": conn.execute(select(func.count()).select_from(s.judgements)).scalar_one(),
        "leased": conn.execute(select(func.count()).select_from(s.assignments).where(s.assignments.c.status == "leased")).scalar_one(),
    }
    return {"counts": counts, "criteria": per_criterion, "systems": per_system, "items": items,
            "item_totals": {"items": int(total or 0), "complete": int(complete or 0), "started": int(started or 0)}}
