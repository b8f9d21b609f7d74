"""An arena's generations in the store: each answer a model streamed for a battle, and the battles that failed.

A live battle (an arena with ``models``) is an assignment whose two answers are generated when it is served.
:func:`record_battle` stores both generations of an assignment, each with its record (model, prompt, times,
tokens, cost) and its failure, in one transaction; when one failed, the assignment's lease ends as ``failed``
(:func:`humeval.store.lease.end_lease`, the event ``lease_failed``): its place and its unit of the task open again,
a submit on it is refused (``generation_failed``), and the participant's next request leases another battle (a
fresh generation). A submit on a live battle whose answers are not both stored is refused too
(``generation_pending``): a vote counts only for answers that were shown in full.

The prompt of a battle whose prompt is not the data's (typed by the participant, or drawn from the arena's prompt
file) is stored before its answers are generated, as the event ``battle_prompt`` (:func:`record_prompt`: the
assignment, the prompt's id, text and source, and why a typed prompt was replaced); each generation's record names
it too (``prompt``, ``prompt_id``, ``prompt_source``).

**Repeats of typed prompts** (:func:`claim_typed_prompt`). A typed prompt is used at most ``prompts.max_repeats``
times by its key (:func:`humeval.arena.prompts.prompt_key`), counted in the table ``prompt_uses``: the use is taken
and the prompt stored in one write transaction, and the count is one row of the store, so several server processes
(or machines) of one study share it and together never use a text more often than the rules say.

**Failures that would come again** (:func:`doomed_tasks`). A battle on the data's prompt that failed because a
``recorded`` model has no answer to it (``no_recording``), or its recorded answer breaks the limits (``too_long``,
``empty``) or names a model (``identity``), or because the item has no prompt (``no_prompt``), fails the same way
each time it is served: the table, the prompt and the locked limits are the same. Such a task is closed at its
first failure (:func:`record_battle`: the other places of the round that hold it are not served), and a re-run round
does not serve it again (:func:`humeval.store.seed.seed_rerun`). A battle whose prompt was typed or drawn from the file
gets another prompt when served again, and an endpoint's failures (time limits, HTTP errors, a sampled answer) may
not come again: those tasks are served in a re-run round as before.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import Connection

from humeval.hashing import sha256_json
from humeval.store.lease import EVENT, end_lease
from humeval.store.sql import sql_of

__all__ = ["DETERMINISTIC", "all_generations", "battle_prompt", "battle_state", "claim_typed_prompt", "doomed_tasks",
           "generated", "prompt_uses", "record_battle", "record_prompt", "stored_prompts", "typed_prompts"]

_INSERT = ("INSERT INTO generations (assignment_id, participant_id, task_id, side, model, error, at, record) "
           "VALUES (:aid, :pid, :t, :side, :model, :error, :at, :record)")
_OF = "SELECT side, error, record FROM generations WHERE assignment_id = :aid ORDER BY id"
_PROMPTS_OF = "SELECT data FROM events WHERE kind = 'battle_prompt' AND participant_id = :pid ORDER BY id"
_PROMPTS = "SELECT data FROM events WHERE kind = 'battle_prompt' ORDER BY id"
_FAILED = "SELECT task_id, model, error, record FROM generations WHERE error <> '' AND error <> 'withdrawn'"
_ALL = "SELECT assignment_id, participant_id, task_id, side, model, error, at, record FROM generations ORDER BY id"


def record_battle(conn: Connection, assignment_id: str, participant_id: str, task_id: str,
                  records: Sequence[dict[str, Any]], now: float, recorded: Collection[str] = ()) -> bool:
    """Store the generations of one battle (``records``: side by side, each a generation's JSON with ``model`` and
    ``error``); when one failed, end the lease as ``failed`` (with the reason), and when the failure would come again
    (:func:`_doomed`; ``recorded``: the names of the ``recorded`` models) close the task for the rest of the round
    (the event ``battle_closed``), so that no other participant is served it. True when the battle can be voted on
    (every side generated and the lease still held)."""
    db = sql_of(conn)
    for side, record in enumerate(records):
        db.run(_INSERT, {"aid": assignment_id, "pid": participant_id, "t": task_id, "side": side,
                         "model": str(record.get("model", "")), "error": str(record.get("error", "")), "at": now,
                         "record": json.dumps(record)})
    failed = [r for r in records if r.get("error")]
    if failed:
        end_lease(db, "failed", (assignment_id, task_id, participant_id), now,
                  reason=str(failed[0]["error"]), model=str(failed[0].get("model", "")))
        doomed = next((r for r in failed if _doomed(str(r.get("model", "")), str(r["error"]), r, recorded)), None)
        if doomed is not None and db.run(_CLOSE, {"t": task_id}):
            data = {"task_id": task_id, "reason": str(doomed["error"]), "model": str(doomed.get("model", ""))}
            db.run(EVENT, {"now": now, "kind": "battle_closed", "pid": participant_id, "data": json.dumps(data)})
    return not failed


_CLOSE = "UPDATE tasks SET closed = 1 WHERE task_id = :t AND closed = 0"


def _latest(conn: Connection, assignment_id: str) -> dict[int, tuple[str, str]]:
    """Each side's latest generation (an assignment streamed twice, from two tabs, has two of each)."""
    return {side: (error, record) for side, error, record in sql_of(conn).all(_OF, {"aid": assignment_id})}


def generated(conn: Connection, assignment_id: str) -> list[str] | None:
    """The texts of a battle's answers in display order, once both were generated without failure; None before (or
    when a generation failed)."""
    latest = _latest(conn, assignment_id)
    if sorted(latest) != [0, 1] or any(error for error, _ in latest.values()):
        return None
    return [json.loads(latest[side][1])["text"] for side in (0, 1)]


def battle_state(conn: Connection, assignment_id: str) -> str:
    """``ready`` (both answers stored), ``failed`` (a generation failed) or ``pending`` (not generated yet)."""
    latest = _latest(conn, assignment_id)
    if any(error for error, _ in latest.values()):
        return "failed"
    return "ready" if sorted(latest) == [0, 1] else "pending"


def all_generations(conn: Connection) -> list[dict[str, Any]]:
    """Every generation stored, oldest first: the assignment, the side, the model, the failure and the record."""
    keys = ("assignment_id", "participant_id", "task_id", "side", "model", "error", "at")
    return [dict(zip(keys, row[:7], strict=True)) | {"record": json.loads(row[7])}
            for row in sql_of(conn).all(_ALL)]


def battle_prompt(conn: Connection, assignment_id: str, participant_id: str) -> dict[str, Any] | None:
    """The prompt stored for a battle (:func:`record_prompt`: ``assignment_id``, ``id``, ``text``, ``source``,
    ``reason``), or None when none is."""
    for (data,) in sql_of(conn).all(_PROMPTS_OF, {"pid": participant_id}):
        prompt = json.loads(data)
        if prompt.get("assignment_id") == assignment_id:
            return dict(prompt)
    return None


def record_prompt(conn: Connection, assignment_id: str, participant_id: str, prompt: dict[str, Any],
                  now: float) -> dict[str, Any]:
    """Store the prompt of a battle (``prompt``: ``id``, ``text``, ``source``, ``reason``) unless one is stored
    already; the stored one (the first: a second post of the form changes nothing)."""
    stored = battle_prompt(conn, assignment_id, participant_id)
    if stored is not None:
        return stored
    data = {"assignment_id": assignment_id, **prompt}
    sql_of(conn).run(EVENT, {"now": now, "kind": "battle_prompt", "pid": participant_id, "data": json.dumps(data)})
    return data


_CLAIM = ("INSERT INTO prompt_uses (prompt_key, uses) VALUES (:k, 1) ON CONFLICT (prompt_key) DO UPDATE "
          "SET uses = prompt_uses.uses + 1 WHERE prompt_uses.uses < :cap RETURNING uses")


def claim_typed_prompt(conn: Connection, assignment_id: str, participant_id: str, prompt: dict[str, Any], key: str,
                       max_repeats: int, now: float) -> dict[str, Any] | None:
    """Store a typed prompt for a battle when its text (``key``: its :func:`~humeval.arena.prompts.prompt_key`) was
    used fewer than ``max_repeats`` times, counting this use; the stored prompt (a battle's first stays), or None
    when the text is used up (nothing stored, nothing counted)."""
    stored = battle_prompt(conn, assignment_id, participant_id)
    if stored is not None:
        return stored
    if not sql_of(conn).all(_CLAIM, {"k": sha256_json(key), "cap": max_repeats}):
        return None
    return record_prompt(conn, assignment_id, participant_id, prompt, now)


def prompt_uses(conn: Connection, key: str) -> int:
    """How often the typed prompt of ``key`` was used as typed (by every process of the study)."""
    rows = sql_of(conn).all("SELECT uses FROM prompt_uses WHERE prompt_key = :k", {"k": sha256_json(key)})
    return int(rows[0][0]) if rows else 0


def typed_prompts(conn: Connection) -> list[str]:
    """The texts of every typed prompt stored, oldest first (a restarted server counts their repeats again)."""
    return [str(p["text"]) for p in stored_prompts(conn).values() if p.get("source") == "typed"]


def stored_prompts(conn: Connection) -> dict[str, dict[str, Any]]:
    """Every battle's stored prompt (:func:`record_prompt`) by its assignment, oldest first (the export's ``prompt``
    and ``prompt_source``, :func:`humeval.store.reads.judgement_rows`)."""
    prompts: dict[str, dict[str, Any]] = {}
    for (data,) in sql_of(conn).all(_PROMPTS):
        prompt = json.loads(data)
        prompts.setdefault(str(prompt["assignment_id"]), prompt)  # one a battle: record_prompt keeps the first
    return prompts


#: the failures of a recorded model's answer to the data's prompt that come again each time it is served
DETERMINISTIC = frozenset({"no_recording", "too_long", "empty", "identity"})


def doomed_tasks(conn: Connection, recorded: Collection[str]) -> set[str]:
    """The tasks whose battle failed in a way that would fail it again (see the module docstring): a ``recorded``
    model's (``recorded``: their names) failure of :data:`DETERMINISTIC` on the data's prompt, or ``no_prompt``."""
    return {str(task_id) for task_id, model, error, record in sql_of(conn).all(_FAILED)
            if _doomed(model, error, json.loads(record), recorded)}


def _doomed(model: str, error: str, record: dict[str, Any], recorded: Collection[str]) -> bool:
    """Whether a generation's failure would come again when its battle is served again (the module docstring)."""
    if record.get("prompt_source", "data") != "data":
        return False  # a typed or drawn prompt: served again, the battle gets another
    return error == "no_prompt" or (model in recorded and error in DETERMINISTIC)
