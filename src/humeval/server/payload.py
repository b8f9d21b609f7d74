"""What a participant is shown, as JSON: shared by the API and the HTML pages.

System names never leave the server: outputs are texts in display order, and a ``2afc``
answer refers to them as ``A`` (first) and ``B`` (second). Nor does anything that tells an
attention check or a consistency repeat from a task: no task kind, no item or task id (a
check's item id names it, a repeat's equals the original's); the one id is the assignment's,
random for every assignment. A practice item (``design.practice``) is said to be one (``practice``: its number
and how many there are): it is shown as practice, with feedback after the answer. A live battle's outputs are empty: its ``stream`` gives them
(:mod:`humeval.server.battle`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from humeval.design.tasks import practice_index
from humeval.protocol.models import Protocol
from humeval.server.battle import PROMPT_URL, stream_url
from humeval.store.records import AssignmentView
from humeval.store.store import Store

__all__ = ["assignment_json", "criterion_json"]


def criterion_json(protocol: Protocol, name: str) -> dict[str, Any]:
    c = protocol.criterion(name)
    return c.task.shown(c)


# the protocol is fixed for the life of a process: each criterion is dumped once, then copied
_CRITERIA: dict[tuple[int, str], tuple[Protocol, dict[str, Any]]] = {}


def _criterion_cached(protocol: Protocol, name: str) -> dict[str, Any]:
    hit = _CRITERIA.get((id(protocol), name))
    if hit is None or hit[0] is not protocol:
        hit = _CRITERIA[(id(protocol), name)] = (protocol, criterion_json(protocol, name))
    return dict(hit[1])  # callers only read it (JSON, templates)


def assignment_json(store: Store, view: AssignmentView) -> dict[str, Any]:
    protocol = store.context.protocol
    task = view.task
    pres = protocol.presentation
    practice: dict[str, Any] = {}
    if task.kind == "attention":
        outputs = [task.text] * len(view.display)
        formats = ["text"] * len(view.display)
        item_input, references = "", ""
    elif task.kind == "practice":  # the protocol's texts, in its order; said openly: practice is no check
        index = practice_index(task)
        item = protocol.design.practice[index]
        outputs, formats = list(item.outputs), ["text"] * len(item.outputs)
        item_input, references = item.input, ""
        practice = {"practice": {"number": index + 1, "of": len(protocol.design.practice)}}
    else:
        texts = [store.texts(task.item_id, system) for system in view.display]
        outputs = [t[0] for t in texts]
        formats = [t[3] or pres.output_format for t in texts]
        item_input = texts[0][1] if texts else ""
        references = texts[0][2] if texts else ""
    live: dict[str, Any] = {}
    if store.context.live_battle(task):  # typed prompts: the prompt is posted first (humeval.server.battle)
        rules = protocol.arena.prompts  # type: ignore[union-attr]
        live = {"stream": stream_url(view.assignment_id)} | (
            {"prompt": {"url": PROMPT_URL, "min_chars": rules.min_chars, "max_chars": rules.max_chars}}
            if rules.typed else {})
    return live | practice | {
        "assignment_id": view.assignment_id,
        "task": {"family": task.family},  # task ids name systems, item ids name checks and repeats
        "criteria": [_criterion_cached(protocol, c) for c in task.criteria],
        "outputs": outputs,
        "formats": formats,
        "input": item_input if pres.show_input or practice else "",
        "references": references if pres.show_references else "",
        "progress": view.progress.to_json(),
        "expires_at": datetime.fromtimestamp(view.expires_at, UTC).isoformat(),
    }
