"""Read-only queries for the admin views and exports (run on the reader pool)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

from humeval.store.context import StoreContext
from humeval.store.generations import stored_prompts
from humeval.store.sql import Sql, sql_of

__all__ = ["all_judgements", "answer_of", "judgement_rows", "latest_judgements", "overview", "participant_rows", "stopping_states",
           "unused_lists"]


def _iso(t: float | None) -> str:
    return "" if t is None else datetime.fromtimestamp(t, UTC).isoformat()


def _reader(conn: Connection) -> Sql:
    """The connection's statements, in one transaction (SQLite: one snapshot for every statement of the read)."""
    if not conn.in_transaction():
        conn.begin()
    return sql_of(conn)


_JUDGEMENT_COLUMNS = ("judgement_id", "idempotency_key", "participant_id", "assignment_id", "task_id", "item_id",
                      "list_id", "kind", "values", "display", "seconds", "revision", "submitted_at", "comment")
_SELECT_JUDGEMENTS = ('SELECT id, idempotency_key, participant_id, assignment_id, task_id, item_id, list_id, kind, '
                      '"values", display, seconds, revision, submitted_at, comment FROM judgements')
_JUDGEMENTS = _SELECT_JUDGEMENTS + " ORDER BY id"
_OF_PARTICIPANT = _SELECT_JUDGEMENTS + " WHERE participant_id = :pid ORDER BY id"


def _judgements(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        j = dict(zip(_JUDGEMENT_COLUMNS, row, strict=True))
        j["values"], j["display"] = json.loads(j["values"]), json.loads(j["display"])
        j["submitted_at"], j["comment"] = _iso(j["submitted_at"]), j["comment"] or ""
        out.append(j)
    return out


def all_judgements(conn: Connection) -> list[dict[str, Any]]:
    """Every stored judgement (every revision), oldest first, with its display order."""
    return _judgements(_reader(conn).all(_JUDGEMENTS))


_ANSWER = ('SELECT display, "values" FROM judgements WHERE assignment_id = :aid AND participant_id = :pid '
           "ORDER BY revision DESC")


def answer_of(conn: Connection, participant_id: str, assignment_id: str) -> tuple[list[str], dict[str, Any]] | None:
    """The systems the participant was shown in ``assignment_id`` (in display order) and the values of their latest
    answer to it; None when they have not answered it (or it is not theirs)."""
    rows = _reader(conn).all(_ANSWER, {"aid": assignment_id, "pid": participant_id})
    return (json.loads(rows[0][0]), json.loads(rows[0][1])) if rows else None


def latest_judgements(conn: Connection, participant_id: str) -> list[dict[str, Any]]:
    """The participant's judgements, latest revision of each assignment, in first-submission order (in the
    caller's transaction: settling a participant reads them)."""
    first: dict[str, int] = {}
    latest: dict[str, dict[str, Any]] = {}
    for j in _judgements(sql_of(conn).all(_OF_PARTICIPANT, {"pid": participant_id})):
        first.setdefault(j["assignment_id"], j["judgement_id"])
        latest[j["assignment_id"]] = j
    return sorted(latest.values(), key=lambda j: first[j["assignment_id"]])


def judgement_rows(conn: Connection, ctx: StoreContext) -> list[dict[str, Any]]:
    """The canonical long table (:data:`humeval.judgements.JUDGEMENT_COLUMNS`), latest revision only.

    ``stop_seq`` is the judgement's place in the live stopping rule's outcome sequence of its
    comparison (the ``fed`` table); NaN for a judgement the rule did not consume. ``wave_seq`` is its place in the
    comparison's confirmation wave (the ``wave_outcomes`` table), NaN for one the wave did not count. ``prompt`` and
    ``prompt_source`` are a battle's prompt when it was not the data's (the event ``battle_prompt``,
    :func:`humeval.store.generations.record_prompt`), empty otherwise.
    """
    from humeval.judgements import long_rows

    latest: dict[str, dict[str, Any]] = {}
    for j in all_judgements(conn):
        latest[j["assignment_id"]] = j
    seqs = {(c, aid): seq for c, aid, seq in _reader(conn).all(_SEQS)}
    waves = {(c, aid): seq for c, aid, seq in _reader(conn).all(_WAVE_SEQS)}
    stored = stored_prompts(conn) if ctx.protocol.arena is not None else {}  # no arena: no battle prompt to read
    prompts = {aid: (str(p["text"]), str(p.get("source", ""))) for aid, p in stored.items()}
    return long_rows(ctx.protocol, sorted(latest.values(), key=lambda x: x["judgement_id"]), seqs, waves, prompts)


_SEQS = "SELECT comparison, assignment_id, seq FROM fed WHERE seq IS NOT NULL"
_WAVE_SEQS = "SELECT comparison, assignment_id, seq FROM wave_outcomes"
_PARTICIPANTS = (
    "SELECT p.participant_id, p.platform, p.list_id, p.created_at, p.last_seen, p.consented_at, p.completed_at, "
    "(SELECT count(*) FROM assignments a WHERE a.participant_id = p.participant_id AND a.status = 'done') "
    "FROM participants p ORDER BY p.created_at, p.participant_id"
)


def participant_rows(conn: Connection, *, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
    """Participants in the order they entered (all, or ``limit`` from ``offset``), with their tasks done."""
    db = _reader(conn)
    rows = db.all(_PARTICIPANTS) if limit is None else db.all(_PARTICIPANTS + " LIMIT :limit OFFSET :offset",
                                                              {"limit": limit, "offset": offset})
    return [
        {"participant_id": pid, "platform": platform, "list_id": list_id or "", "done": int(done),
         "entered": _iso(created), "last_seen": _iso(seen), "consented": consented is not None,
         "completed": completed is not None}
        for pid, platform, list_id, created, seen, consented, completed, done in rows
    ]


_STOPPING_COLUMNS = ("comparison", "rule", "delta", "system_a", "system_b", "n", "successes", "outcome", "estimate",
                     "threshold_a", "threshold_b", "reason", "decided_at")
_STOPPING = f"SELECT {', '.join(_STOPPING_COLUMNS)} FROM stopping ORDER BY comparison"
_CURVE = "SELECT n, estimate, threshold_a, threshold_b FROM outcomes WHERE comparison = :c ORDER BY n"


def stopping_states(conn: Connection) -> list[dict[str, Any]]:
    """The live decision per comparison, with the bound after every outcome (for the plot)."""
    db = _reader(conn)
    states = []
    for row in db.all(_STOPPING):
        state = dict(zip(_STOPPING_COLUMNS, row, strict=True))
        curve = [{"n": n, "estimate": e, "threshold_a": a, "threshold_b": b}
                 for n, e, a, b in db.all(_CURVE, {"c": state["comparison"]})]
        states.append(state | {"decided_at": _iso(state["decided_at"]), "curve": curve})
    return states


#: the tasks' caps and closed ones by criteria and systems (an index-only pass on SQLite), and the judgements done
#: (first answers: the assignments done), counted from the assignments
_GROUPS = "SELECT criteria, systems, sum(cap), sum(closed) FROM tasks WHERE kind = 'task' GROUP BY criteria, systems"
#: the judgements done are read from the assignments done, each task looked up by its key (SQLite: ``CROSS JOIN``
#: keeps that order, the answered assignments' partial index first; left to itself it probed that index once per task)
_DONE = "FROM assignments a CROSS JOIN tasks t WHERE t.task_id = a.task_id AND a.status = 'done' AND t.kind = 'task'"
_GROUPS_DONE = f"SELECT t.criteria, t.systems, count(*) {_DONE} GROUP BY t.criteria, t.systems"
_ITEMS = ("SELECT item_id, sum(cap) AS wanted, sum((SELECT count(*) FROM assignments a WHERE a.task_id = t.task_id "
          "AND a.status = 'done')) AS done FROM tasks t WHERE kind = 'task' GROUP BY item_id ORDER BY item_id")
#: the item totals: every item, and those no judgement is wanted for (complete as they are), in one pass over the tasks
#: (index-only on SQLite); then the items judged (started), and those of them complete, from the assignments done
_ITEMS_WANTED = ("SELECT count(*), sum(CASE WHEN wanted = 0 THEN 1 ELSE 0 END) FROM (SELECT item_id, sum(cap) AS wanted "
                 "FROM tasks WHERE kind = 'task' GROUP BY item_id) i")
_ITEMS_JUDGED = ("SELECT count(*), sum(CASE WHEN wanted > 0 AND done >= wanted THEN 1 ELSE 0 END) FROM (SELECT d.done, "
                 "(SELECT sum(cap) FROM tasks w WHERE w.kind = 'task' AND w.item_id = d.item_id) AS wanted FROM (SELECT "
                 f"t.item_id, count(*) AS done {_DONE} GROUP BY t.item_id) d) j")
_COUNTS = ("SELECT (SELECT count(*) FROM participants), (SELECT count(*) FROM judgements), "
           "(SELECT count(*) FROM assignments WHERE status = 'leased')")


def overview(conn: Connection, ctx: StoreContext, *, items_limit: int | None = None, items_offset: int = 0) -> dict[str, Any]:
    """Progress counts per criterion and per system, per item, and totals.

    Aggregated in SQL (passes over the tasks grouped by their criteria and systems and by item; the
    judgements done are counted from the assignments done, not kept: per group and for the totals from
    the answered assignments, for a page of items per task shown). ``items``: every item,
    or the page of ``items_limit`` items from ``items_offset`` (in item order);
    ``item_totals``: how many items there are, how many are complete and how many started.
    """
    del ctx  # the tasks and the assignments hold what is counted
    db = _reader(conn)
    per_criterion: dict[str, dict[str, int]] = {}
    per_system: dict[str, dict[str, int]] = {}
    done_by = {(criteria, systems): done for criteria, systems, done in db.all(_GROUPS_DONE)}
    for criteria, systems, wanted, closed in db.all(_GROUPS):
        done = int(done_by.get((criteria, systems), 0))
        for c in json.loads(criteria):
            d = per_criterion.setdefault(c, {"wanted": 0, "done": 0, "closed": 0})
            d["wanted"] += int(wanted or 0)
            d["done"] += done
            d["closed"] += int(closed or 0)
        for system in json.loads(systems):
            d = per_system.setdefault(system, {"wanted": 0, "done": 0})
            d["wanted"] += int(wanted or 0)
            d["done"] += done
    page = db.all(_ITEMS) if items_limit is None else db.all(_ITEMS + " LIMIT :limit OFFSET :offset",
                                                             {"limit": items_limit, "offset": items_offset})
    items = {item: {"wanted": int(wanted or 0), "done": int(done or 0)} for item, wanted, done in page}
    total, unwanted = db.one(_ITEMS_WANTED) or (0, 0)
    started, complete = db.one(_ITEMS_JUDGED) or (0, 0)
    complete = int(complete or 0) + int(unwanted or 0)
    participants, judgements, leased = db.one(_COUNTS) or (0, 0, 0)
    return {"counts": {"participants": participants, "judgements": judgements, "leased": leased},
            "criteria": per_criterion, "systems": per_system, "items": items,
            "item_totals": {"items": int(total or 0), "complete": int(complete or 0), "started": int(started or 0)}}


_TASK_PLACES = "SELECT count(*) FROM list_tasks lt JOIN tasks t ON t.task_id = lt.task_id WHERE t.kind = 'task'"
#: the lists given to a participant (a list released after a return counts as given: it is wanted again and will be
#: given again, so it is not saved), and their places that hold a task
_USED = ("SELECT count(DISTINCT u.list_id), count(t.task_id) FROM (SELECT list_id FROM lists WHERE participant_id IS "
         "NOT NULL UNION SELECT list_id FROM participants WHERE list_id IS NOT NULL) u LEFT JOIN list_tasks lt ON "
         "lt.list_id = u.list_id LEFT JOIN tasks t ON t.task_id = lt.task_id AND t.kind = 'task'")


def unused_lists(conn: Connection, ctx: StoreContext) -> tuple[int, int]:
    """(lists never given to a participant, their places that hold a task): every list less the few given. The
    places of every list are counted once per context (a study of 100,000 items: 1.8 million places, 1.4 s)."""
    db = _reader(conn)
    if ctx.task_places is None:
        ctx.task_places = int(db.scalar(_TASK_PLACES) or 0)
    used, used_places = db.one(_USED) or (0, 0)
    return len(ctx.list_sizes) - int(used), ctx.task_places - int(used_places or 0)
