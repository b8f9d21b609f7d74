"""Each step ``prolific sync`` sends is recorded before it is sent, so that a crash at any point recovers.

A step (a wave's ``PATCH`` of ``total_available_places``, a ``PAUSE``, ``START`` or ``STOP``) is
appended to ``.humeval/prolific-intents.jsonl`` (one JSON line, fsynced) before its request goes
out; its result is kept in ``.humeval/prolific.json`` with the intent's id (``last_step``), and a
``done`` line follows. A crash between the two leaves the step pending; the next sync reads
Prolific's study first and reconciles the pending step with it: a step already kept is done, and
otherwise:

==========  ==============================================  ============================================
step        carried out when Prolific shows                 then the sync records
==========  ==============================================  ============================================
``wave``    ``total_available_places`` >= the places sent   the wave (places, the ``waves`` row, logbook)
``pause``   status ``PAUSED``                               a pause by the rule (so ``START`` follows it)
``start``   status other than ``PAUSED``                    the study running again
``stop``    status other than ``ACTIVE`` or ``PAUSED``       the stop (final)
==========  ==============================================  ============================================

A step Prolific does not show was not carried out: the sync decides again from the store, as if
the step had never been tried (a step sent twice is harmless: places are a total, not an
increment, and a transition to the status a study has is refused by nothing that matters here).
Without the record a pause sent but not kept left the study PAUSED for good: the sync never
restarts a pause it did not make (a pause by hand).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from humeval.files import append_jsonl, read_jsonl
from humeval.study import StudyFolder

__all__ = ["STEPS", "applied", "finish", "intents_file", "pending", "record"]

STEPS = ("wave", "pause", "start", "stop")


def intents_file(study: StudyFolder) -> Path:
    """``.humeval/prolific-intents.jsonl``: every step recorded before it was sent, and when it was done."""
    return study.state_dir / "prolific-intents.jsonl"


def record(study: StudyFolder, step: str, study_id: str, **details: Any) -> str:
    """Record (fsynced) that ``step`` is about to be sent to Prolific study ``study_id``; returns the intent's id."""
    if step not in STEPS:
        raise ValueError(f"unknown Prolific step {step!r}; expected one of {', '.join(STEPS)}")
    intent = uuid.uuid4().hex
    append_jsonl(intents_file(study), {"intent": intent, "step": step, "study_id": study_id, "at": time.time(),
                                       **details})
    return intent


def finish(study: StudyFolder, intent: str, outcome: str) -> None:
    """Record that intent ``intent`` is done (``sent``; ``applied`` or ``absent`` when a sync reconciled it)."""
    append_jsonl(intents_file(study), {"done": intent, "outcome": outcome, "at": time.time()})


def pending(study: StudyFolder) -> dict[str, Any] | None:
    """The last step recorded and not done, or None."""
    path = intents_file(study)
    if not path.is_file():
        return None
    rows = read_jsonl(path)
    done = {r["done"] for r in rows if "done" in r}
    open_ = [r for r in rows if "intent" in r and r["intent"] not in done]
    return open_[-1] if open_ else None


def applied(intent: dict[str, Any], remote: dict[str, Any]) -> bool:
    """Whether Prolific's study ``remote`` shows the step ``intent`` carried out (the module's table)."""
    status = str(remote.get("status") or "")
    step = intent["step"]
    if step == "wave":
        return int(remote.get("total_available_places") or 0) >= int(intent["places"])
    if step == "pause":
        return status == "PAUSED"
    if step == "start":
        return status != "PAUSED"
    return status not in ("ACTIVE", "PAUSED")
